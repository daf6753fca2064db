"""Primitives: procedures written in Python, registered by decorator in a PrimitiveRegistry.

The core's primitives register in CORE_PRIMITIVES as their modules are imported (below); a part
of the system that adds primitives (the task system, the memory system) keeps a registry of its
own. A registry binds its primitives in one interpreter's globals when it is installed there.

A primitive whose first parameter is named `ctx` receives the runtime's Services (output, log,
workspace files, loading: lang/services.py) when the global environment is built; one whose
next parameter is named `operator_calls` receives the interpreter's OperatorCalls (what the
calls it makes run inside: lang/operator_calls.py); one whose next parameter is named `depth`
calls procedures and receives the caller's call depth at each call. No primitive keeps state
of its own.

Each primitive declares its documented signature; its arity comes from that, never from the
Python code, so a helper parameter or an options tuple cannot widen what the language accepts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import ArityError
from ..calls import expected_count
from ..environment import GlobalEnvironment
from ..services import Services
from ..values import HigherOrderPrimitive, Primitive

# `(name param [optional] [:key value] rest...)`: a word is one required argument, a bracketed
# group that many optional ones, and a word or group ending in `...` any number more.
_SIGNATURE = re.compile(r"\(([^\s()\[\]]+)((?:\s+(?:\[[^\[\]()]+\](?:\.\.\.)?|[^\s()\[\]]+))*)\)\Z")
_PART = re.compile(r"\[[^\[\]]+\](?:\.\.\.)?|[^\s\[\]]+")


@dataclass(frozen=True)
class PrimitiveSpec:
    """A registered primitive before it is bound to a runtime."""

    name: str
    fn: Callable[..., Any]
    signatures: tuple[str, ...]  # as documented: "(reduce f init xs)", "(reduce f xs)"
    min_args: int  # the arity the signatures allow, whatever the Python code could take
    max_args: int | None
    needs_context: bool
    needs_operator_calls: bool
    higher_order: bool
    doc: str  # the summary: the docstring's first line
    exact: bool  # whether the Python code takes exactly that arity (else calls are checked first)

    @property
    def leading(self) -> int:
        """How many leading parameters install supplies: ctx, operator_calls, depth."""
        return int(self.needs_context) + int(self.needs_operator_calls) + int(self.higher_order)


def signature_arity(signature: str) -> tuple[int, int | None]:
    """(fewest, most or None) arguments a signature like "(range a b [step])" names."""
    return _parse_signature(signature)[1:]


def _parse_signature(signature: str) -> tuple[str, int, int | None]:
    """The name a signature is written with, and its arity."""
    match = _SIGNATURE.match(signature.strip())
    if match is None:
        raise ValueError(f"malformed primitive signature {signature!r}")
    low = most = 0
    unbounded = False
    for part in _PART.findall(match.group(2)):
        if "..." in part:
            unbounded = True
        elif part.startswith("["):
            most += len(part[1:-1].split())
        else:
            low, most = low + 1, most + 1
    return match.group(1), low, None if unbounded else most


class PrimitiveRegistry(Mapping[str, PrimitiveSpec]):
    """Primitives by name, each registered once: the core's (CORE_PRIMITIVES) or those one part of
    the system adds (the task system's, the memory system's); `install` binds them in globals."""

    def __init__(self) -> None:
        self._specs: dict[str, PrimitiveSpec] = {}

    def primitive(
        self, *names: str, signature: str | tuple[str, ...]
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register fn under each name with its documented signature(s), written with the first
        name; the arity is the signatures', never the Python code's. A name registered already is
        an error: nothing is overwritten."""
        forms = (signature,) if isinstance(signature, str) else signature
        parsed = [_parse_signature(form) for form in forms]
        if any(name != names[0] for name, _, _ in parsed):
            raise ValueError(f"the signatures of {names[0]} must be written with its name: {forms}")
        low = min(fewest for _, fewest, _ in parsed)
        highs = [most for _, _, most in parsed]
        high = None if None in highs else max(most for most in highs if most is not None)

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            # Read from the code object rather than inspect.signature: importing inspect costs
            # more start-up time than everything else the registry does.
            code = fn.__code__
            params = list(code.co_varnames[: code.co_argcount])
            defaults = len(fn.__defaults__ or ())
            # The parameters install supplies come first, each optional, in this order.
            needs_context = params[:1] == ["ctx"]
            rest = params[needs_context:]
            needs_operator_calls = rest[:1] == ["operator_calls"]
            rest = rest[needs_operator_calls:]
            higher_order = rest[:1] == ["depth"]
            positional = rest[higher_order:]
            python_high = None if code.co_flags & 0x04 else len(positional)  # CO_VARARGS
            exact = (len(positional) - defaults, python_high) == (low, high)
            doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
            for name in names:
                if name in self._specs:
                    raise ValueError(f"the primitive '{name}' is registered twice")
                named = tuple(f"({name}{form[len(names[0]) + 1 :]}" for form in forms)
                self._specs[name] = PrimitiveSpec(
                    name, fn, named, low, high, needs_context, needs_operator_calls, higher_order, doc, exact
                )
            return fn

        return register

    def install(self, globals_: GlobalEnvironment, ctx: Services | None) -> None:
        """Bind every primitive of this registry in globals_, giving context-needing ones ctx
        (None: a call of one of them fails) and those that ask for it globals_'s OperatorCalls; a
        name globals_ binds already is an error (no registry overrides another's primitive)."""
        taken = sorted(name for name in self._specs if name in globals_.values)
        if taken:
            raise ValueError(f"primitives installed twice: {', '.join(taken)}")
        for spec in self._specs.values():
            fn = functools.partial(spec.fn, ctx) if spec.needs_context else spec.fn
            if spec.needs_operator_calls:
                fn = functools.partial(fn, globals_.operator_calls)
            if not spec.exact:
                fn = _arity_checked(spec, fn)
            kind = HigherOrderPrimitive if spec.higher_order else Primitive
            docstring = spec.fn.__doc__ or ""
            globals_.define(
                spec.name,
                kind(spec.name, fn, spec.min_args, spec.max_args, spec.doc, spec.signatures, docstring),
            )

    def __getitem__(self, name: str) -> PrimitiveSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)


# The language core's own primitives (registered by the modules imported at the end of this one).
CORE_PRIMITIVES = PrimitiveRegistry()


def _arity_checked(spec: PrimitiveSpec, fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn, refusing a call with an argument count its signatures do not name (the Python code
    would take it: a helper parameter, or options gathered in *args)."""
    low, high, skip = spec.min_args, spec.max_args, int(spec.higher_order)
    expected = expected_count(low, high)

    def checked(*args: Any) -> Any:
        n = len(args) - skip
        if n < low or (high is not None and n > high):
            raise ArityError(f"{spec.name}: {expected}, got {n}")
        return fn(*args)

    return checked


# The core's primitives register in CORE_PRIMITIVES as their modules are imported.
from . import arithmetic, dicts, effects, lists, predicates, strings, text  # noqa: E402,F401
