"""Call sites and conditionals, generated as Python source once per shape.

Calls are the evaluator's hot path. A call site is specialised on the shape of its operator
and operands — a constant, a frame slot, a global name, an integer operation, or any other
compiled expression — and on whether it is in tail position. The Python source of a small
factory is generated per shape and cached; each site is then a closure that reads its
operands inline, with no Python call per operand. A call with many operands (more than
MAX_GENERATED_OPERANDS) is not generated: it runs its operands' codes in a loop, so its
memory stays a small constant per operand.

Arithmetic and comparisons on integers are inlined too: when an operator is a global whose
value at compile time is one of the arithmetic primitives, the generated code tests that the
global is still that primitive (so rebinding `+` keeps its meaning) and that both values are
ints, and only then computes in place; anything else goes through the full call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import SexpError, Span
from .calls import (
    Closure,
    TailCall,
    apply_other,
    invoke,
    nested_too_deeply,
    primitive_failure,
    run_tail_calls,
)
from .values import Code, Frame, Primitive, Value

INLINE_BINARY = {"+": "+", "-": "-", "*": "*", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "=": "=="}
Missing = Callable[[str, Span | None], Value]
# A call site with more operands is not generated but loops over them (see _looping_call).
MAX_GENERATED_OPERANDS = 16


@dataclass(frozen=True, slots=True)
class Operand:
    """How generated code gets one value.

    kind: const (value), slot (depth, slot), global (value is the name), code (value is the
    compiled expression), or int_op: an inlinable binary operation whose operator `value` names
    the global, `primitive` is that global's value at compile time, `parts` its two operands
    (const or slot) and `fallback` the full call site.
    """

    kind: str
    value: Any = None
    depth: int = 0
    slot: int = 0
    primitive: Primitive | None = None
    parts: tuple[Operand, ...] = ()
    fallback: Code | None = None


def inline_primitive(name: str, table: dict[str, Value]) -> Primitive | None:
    """The primitive a global operator names now, when calls to it can be inlined."""
    if name not in INLINE_BINARY:
        return None
    current = table.get(name)
    return current if type(current) is Primitive and current.name == name else None


def can_inline(operand: Operand) -> bool:
    """Whether an operand is cheap and pure enough to read inside an inlined operation."""
    return operand.kind in ("const", "slot")


@dataclass
class _Source:
    """Generated lines plus the values their parameters stand for, collected in order."""

    lines: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)

    def param(self, value: Any) -> str:
        self.values.append(value)
        return f"v{len(self.values) - 1}"

    def fetch(self, target: str, operand: Operand, indent: str = "") -> None:
        """Lines that put operand's value in `target`."""
        add = self.lines.append
        kind = operand.kind
        if kind == "const":
            add(f"{indent}{target} = {self.param(operand.value)}")
        elif kind == "slot":
            add(f"{indent}{target} = env{'[0]' * operand.depth}[{self.param(operand.slot)}]")
        elif kind == "global":
            name = self.param(operand.value)
            add(f"{indent}try:")
            add(f"{indent}    {target} = table[{name}]")
            add(f"{indent}except KeyError:")
            add(f"{indent}    {target} = missing({name}, span)")
        elif kind == "code":
            add(f"{indent}{target} = {self.param(operand.value)}(env)")
        else:
            self._fetch_int_op(target, operand, indent)

    def _fetch_int_op(self, target: str, operand: Operand, indent: str) -> None:
        add = self.lines.append
        name, primitive = self.param(operand.value), self.param(operand.primitive)
        left, right = operand.parts
        add(f"{indent}try:")
        add(f"{indent}    {target}_f = table[{name}]")
        add(f"{indent}except KeyError:")
        add(f"{indent}    {target}_f = None")
        self.fetch(f"{target}_l", left, indent)
        self.fetch(f"{target}_r", right, indent)
        add(f"{indent}if {target}_f is {primitive} and type({target}_l) is int and type({target}_r) is int:")
        add(f"{indent}    {target} = {target}_l {INLINE_BINARY[operand.value]} {target}_r")
        add(f"{indent}else:")
        add(f"{indent}    {target} = {self.param(operand.fallback)}(env)")

    def factory(self, label: str) -> Callable[..., Code]:
        """Compile (or reuse) the factory for these lines."""
        params = ", ".join(f"v{i}" for i in range(len(self.values)))
        source = "\n".join(
            [
                f"def factory(span, missing, table, {params}):",
                "    def code(env):",
                *("        " + line for line in self.lines),
                "    return code",
            ]
        )
        made = _FACTORIES.get(source)
        if made is None:
            namespace = dict(_NAMESPACE)
            exec(compile(source, f"<{label}>", "exec"), namespace)
            made = _FACTORIES[source] = namespace["factory"]
        return made


_FACTORIES: dict[str, Callable[..., Code]] = {}


def make_call(
    operator: Operand,
    operands: list[Operand],
    span: Span | None,
    tail: bool,
    missing: Missing,
    table: dict[str, Value],
) -> Code:
    """A compiled call: operator first, then operands left to right, then dispatch on the callee."""
    if len(operands) > MAX_GENERATED_OPERANDS:
        return _looping_call(operator, operands, span, tail, missing, table)
    src = _Source()
    src.fetch("fn", operator)
    for i, operand in enumerate(operands):
        src.fetch(f"a{i}", operand)
    args = ", ".join(f"a{i}" for i in range(len(operands)))
    add = src.lines.append
    primitive = inline_primitive(operator.value, table) if operator.kind == "global" else None
    if primitive is not None and len(operands) == 2:
        add(f"if fn is {src.param(primitive)} and type(a0) is int and type(a1) is int:")
        add(f"    return a0 {INLINE_BINARY[operator.value]} a1")
    add("if type(fn) is Closure:")
    if tail:
        add(f"    return TailCall((fn, [{args}], span))")
    else:
        # invoke() inlined for the common case: every parameter required, right argument count.
        add("    ll = fn.lambda_list")
        add("    depth = env[1] + 1")
        add(f"    if ll.count == {len(operands)} and depth <= ll.limit:")
        add("        try:")
        add(f"            result = fn.body([fn.env, depth, {args}{', ' if args else ''}*ll.padding])")
        add("            if type(result) is TailCall:")
        add("                return run_tail_calls(result, depth)")
        add("            return result")
        add("        except SexpError as err:")
        add("            raise err.at(span)")
        add("        except RecursionError:")
        add("            raise nested_too_deeply(span) from None")
        add("    try:")
        add(f"        return invoke(fn, [{args}], depth)")
        add("    except SexpError as err:")
        add("        raise err.at(span)")
        add("    except RecursionError:")
        add("        raise nested_too_deeply(span) from None")
    add("if type(fn) is Primitive:")
    add("    try:")
    add(f"        return fn.fn({args})")
    add("    except SexpError as err:")
    add("        raise err.at(span)")
    add("    except Exception as exc:")
    add(f"        raise primitive_failure(fn, [{args}], exc, span) from exc")
    add(f"return apply_other(fn, [{args}], span, env[1])")
    return src.factory("call site")(span, missing, table, *src.values)


def _looping_call(
    operator: Operand,
    operands: list[Operand],
    span: Span | None,
    tail: bool,
    missing: Missing,
    table: dict[str, Value],
) -> Code:
    """make_call for many operands: a loop over their codes (generated source, a line and a
    parameter per operand, would take memory out of all proportion to the call).

    The constants sit in a template of the arguments; the other operands fill it, in order.
    """
    operator_code = make_fetch(operator, span, missing, table)
    template = [operand.value if operand.kind == "const" else None for operand in operands]
    fills = [
        (i, make_fetch(operand, span, missing, table))
        for i, operand in enumerate(operands)
        if operand.kind != "const"
    ]

    def call(env: Frame) -> Value | TailCall:
        fn = operator_code(env)
        args = template.copy()
        for i, code in fills:
            args[i] = code(env)
        if type(fn) is Closure:
            if tail:
                return TailCall((fn, args, span))
            try:
                return invoke(fn, args, env[1] + 1)
            except SexpError as err:
                raise err.at(span)
            except RecursionError:
                raise nested_too_deeply(span) from None
        if type(fn) is Primitive:
            try:
                return fn.fn(*args)
            except SexpError as err:
                raise err.at(span)
            except Exception as exc:
                raise primitive_failure(fn, args, exc, span) from exc
        return apply_other(fn, args, span, env[1])

    return cast(Code, call)  # it gives TailCalls only in tail position, as Code may (values.Code)


def make_fetch(operand: Operand, span: Span | None, missing: Missing, table: dict[str, Value]) -> Code:
    """Code giving operand's value, as a call site at span gets it."""
    if operand.kind == "code":
        code: Code = operand.value
        return code
    src = _Source()
    src.fetch("r", operand)
    src.lines.append("return r")
    return src.factory("operand")(span, missing, table, *src.values)


def make_if(
    test: Operand,
    then: Operand,
    otherwise: Operand | None,
    span: Span | None,
    missing: Missing,
    table: dict[str, Value],
) -> Code:
    """A compiled `if` whose test and branches are read inline when they are simple."""
    src = _Source()
    src.fetch("t", test)
    src.lines.append("if t:")
    src.fetch("r", then, "    ")
    src.lines.append("    return r")
    if otherwise is None:
        src.lines.append("return None")
    else:
        src.fetch("r", otherwise)
        src.lines.append("return r")
    return src.factory("if")(span, missing, table, *src.values)


_NAMESPACE: dict[str, Any] = {
    "Closure": Closure,
    "Primitive": Primitive,
    "TailCall": TailCall,
    "SexpError": SexpError,
    "invoke": invoke,
    "run_tail_calls": run_tail_calls,
    "apply_other": apply_other,
    "primitive_failure": primitive_failure,
    "nested_too_deeply": nested_too_deeply,
}
