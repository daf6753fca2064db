"""Call sites, generated once per shape.

Calls are the evaluator's hot path. A call site is specialised on the shape of its operator
and operands — a constant, a frame slot, a global name, or any other compiled expression —
and on whether it is in tail position. For each shape the Python source of a small factory is
generated once and cached; each call site is then a closure that reads its operands inline,
with no Python call per operand. When the operator is a global whose value at compile time is
one of the arithmetic primitives, the site also carries an inline integer fast path, guarded
by an identity check so that rebinding `+` keeps its meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .calls import apply_other, invoke, primitive_failure, run_tail_calls
from .errors import SexpError
from .source import Span
from .values import Closure, Code, Primitive, TailCall, Value

INLINE_BINARY = {"+": "+", "-": "-", "*": "*", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "=": "=="}


@dataclass(frozen=True, slots=True)
class Operand:
    """How a call site gets one value: kind is const, slot, global or code."""

    kind: str
    value: Any = None  # the constant, the global's name, or the compiled code
    depth: int = 0  # for slots: frames up the chain (0..2)
    slot: int = 0


Factory = Callable[..., Code]
_FACTORIES: dict[tuple[Any, ...], Factory] = {}


def make_call(
    operator: Operand,
    operands: list[Operand],
    span: Span | None,
    tail: bool,
    missing: Callable[[str, Span | None], Value],
    table: dict[str, Value],
) -> Code:
    """A compiled call: operator first, then operands left to right, then dispatch."""
    inline = None
    if operator.kind == "global" and len(operands) == 2 and operator.value in INLINE_BINARY:
        current = table.get(operator.value)
        if type(current) is Primitive and current.name == operator.value:
            inline = current
    key = (
        _shape(operator),
        tuple(_shape(o) for o in operands),
        tail,
        INLINE_BINARY[operator.value] if inline is not None else None,
    )
    factory = _FACTORIES.get(key)
    if factory is None:
        factory = _FACTORIES[key] = _build_factory(key)
    values = [_payload(operator), *(_payload(o) for o in operands)]
    return factory(span, missing, table, inline, *values)


def _shape(operand: Operand) -> tuple[str, int]:
    return (operand.kind, operand.depth if operand.kind == "slot" else 0)


def _payload(operand: Operand) -> Any:
    return operand.slot if operand.kind == "slot" else operand.value


def _fetch(target: str, shape: tuple[str, int], param: str) -> list[str]:
    """Source lines that put one operand's value in `target`."""
    kind, depth = shape
    if kind == "const":
        return [f"{target} = {param}"]
    if kind == "slot":
        return [f"{target} = env{'[0]' * depth}[{param}]"]
    if kind == "global":
        return [
            "try:",
            f"    {target} = table[{param}]",
            "except KeyError:",
            f"    {target} = missing({param}, span)",
        ]
    return [f"{target} = {param}(env)"]


def _build_factory(key: tuple[Any, ...]) -> Factory:
    operator_shape, operand_shapes, tail, inline_op = key
    params = ["p_op", *(f"p{i}" for i in range(len(operand_shapes)))]
    args = ", ".join(f"a{i}" for i in range(len(operand_shapes)))
    body: list[str] = _fetch("fn", operator_shape, "p_op")
    for i, shape in enumerate(operand_shapes):
        body += _fetch(f"a{i}", shape, f"p{i}")
    if inline_op is not None:
        body += ["if fn is inline and type(a0) is int and type(a1) is int:", f"    return a0 {inline_op} a1"]
    body += ["if type(fn) is Closure:"]
    if tail:
        body += [f"    return TailCall(fn, [{args}], span)"]
    else:
        # invoke() inlined for the common case: every parameter required, right argument count.
        frame = ", ".join(["fn.env", "depth", *(f"a{i}" for i in range(len(operand_shapes))), "*ll.padding"])
        body += [
            "    ll = fn.lambda_list",
            "    depth = env[1] + 1",
            f"    if ll.count == {len(operand_shapes)} and depth <= ll.limit:",
            "        try:",
            f"            result = fn.body([{frame}])",
            "            if type(result) is TailCall:",
            "                return run_tail_calls(result, depth)",
            "            return result",
            "        except SexpError as err:",
            "            raise err.at(span)",
            "    try:",
            f"        return invoke(fn, [{args}], depth)",
            "    except SexpError as err:",
            "        raise err.at(span)",
        ]
    body += [
        "if type(fn) is Primitive:",
        "    try:",
        f"        return fn.fn({args})",
        "    except SexpError as err:",
        "        raise err.at(span)",
        "    except Exception as exc:",
        f"        raise primitive_failure(fn, [{args}], exc, span) from exc",
        f"return apply_other(fn, [{args}], span, env[1])",
    ]
    source = "\n".join(
        [
            f"def factory(span, missing, table, inline, {', '.join(params)}):",
            "    def call(env):",
            *("        " + line for line in body),
            "    return call",
        ]
    )
    namespace: dict[str, Any] = {
        "Closure": Closure,
        "Primitive": Primitive,
        "TailCall": TailCall,
        "SexpError": SexpError,
        "invoke": invoke,
        "run_tail_calls": run_tail_calls,
        "apply_other": apply_other,
        "primitive_failure": primitive_failure,
    }
    exec(compile(source, f"<call site {key}>", "exec"), namespace)
    return namespace["factory"]  # type: ignore[no-any-return]
