"""`sexp check`: find malformed forms, wrong argument counts and unknown procedures without running.

Compiling a form checks every special form's shape (the compiler refuses malformed ones), so
the checker compiles each top-level form, then walks the tree to compare each call's argument
count with the procedure it names: a primitive, a prelude procedure, or a procedure the file
itself defines. Each special form is walked as its description in the compiler's table says
(Compiler.forms: the forms installed in that interpreter, and no other); the parts
of the system installed in the language add their own checks (CheckExtension): the task system
checks a call of a task whose template is known before the run against its inputs, and the tools
its templates name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import ArityError, FormError, NameError_, SexpError
from ..syntax.nodes import FunctionCallNode, Keyword, ListNode, Node, Symbol
from .calls import Closure, expected_count
from .compiler import Compiler
from .forms import SpecialForm, global_definitions, local_definitions
from .lambda_list import ParsedParams, parse_params
from .prelude import LazyDefinitions
from .suggest import did_you_mean
from .values import Primitive, Value

# A check of calls by the name they call: (checker, call, the local names in scope).
CallCheck = Callable[["Checker", FunctionCallNode, frozenset[str]], None]


class CheckExtension(Protocol):
    """What a part of the system installed in the language (the task system) adds to the checks."""

    def global_names(self) -> Iterable[str]:
        """Names it gives a value when nothing else binds them (task templates), of unknown arity."""
        ...

    def call_checks(self, forms: Sequence[Node], globals_: Mapping[str, Value]) -> dict[str, CallCheck]:
        """Checks of the calls of a program's forms that name one of its callees (a task)."""
        ...

    def program_problems(self, forms: Sequence[Node], globals_: Mapping[str, Value]) -> list[SexpError]:
        """What it finds wrong in the program as a whole (a task's tool that names nothing), when
        everything the program defines is in its forms (no `load`)."""
        ...


@dataclass
class Signature:
    """What a call must look like: required, optional, rest and keyword parameters."""

    name: str
    required: int
    optional: int = 0
    rest: bool = False
    keys: bool = False

    @classmethod
    def of_params(cls, name: str, params: ParsedParams) -> Signature:
        return cls(
            name, len(params.required), len(params.optional), params.rest is not None, bool(params.keys)
        )

    def problem(self, arguments: Sequence[Node]) -> str | None:
        """Why a call with these argument nodes cannot succeed, or None."""
        count = len(arguments)
        if self.keys:
            count = next((i for i, a in enumerate(arguments) if isinstance(a, Keyword)), count)
        high = None if self.rest else self.required + self.optional
        if count < self.required or (high is not None and count > high):
            return f"{self.name}: {expected_count(self.required, high)}, got {count}"
        return None


@dataclass
class Checker:
    """Walks a program with the names in scope, collecting problems. Each special form is walked
    as its registered description says (SpecialForm.check)."""

    known: dict[str, Signature | None]  # global names; None when the arity is unknown
    check_unknown: bool
    forms: Mapping[str, SpecialForm]  # the special forms in force (Compiler.forms)
    # Calls an extension checks itself (a task's), by the name they call.
    calls: dict[str, CallCheck] = field(default_factory=dict)
    problems: list[SexpError] = field(default_factory=list)

    def walk(self, nodes: Iterable[Node], local: frozenset[str]) -> None:
        for node in nodes:
            self.expression(node, local)

    def expression(self, node: Node, local: frozenset[str]) -> None:
        if isinstance(node, FunctionCallNode):
            self.call(node, local)
        elif isinstance(node, ListNode):
            self.walk(node.items, local)

    def call(self, node: FunctionCallNode, local: frozenset[str]) -> None:
        name = node.name
        args = node.args
        form = self.forms.get(name)
        if form is not None:
            form.check(self, node, local)
            return
        check = self.calls.get(name)
        if check is not None and name not in local:
            check(self, node, local)
            return
        self.walk(args, local)
        if name in local:
            return
        if name not in self.known:
            if self.check_unknown:
                self.problems.append(
                    NameError_(f"unknown procedure '{name}'{self._suggest(name, local)}", node.span)
                )
            return
        signature = self.known[name]
        problem = signature.problem(args) if signature is not None else None
        if problem:
            self.problems.append(ArityError(problem, node.span))

    def function(self, params_node: Node, body: Sequence[Node], local: frozenset[str], form: str) -> None:
        """A lambda's defaults and body, with its parameters and local definitions in scope."""
        try:
            params = parse_params(params_node, form, params_node.span)
        except FormError:
            return  # the compiler reports it
        defaults = [d for _, d in [*params.optional, *params.keys] if d is not None]
        inner = local | set(params.names) | set(local_definitions(body, self.forms))
        self.walk(defaults, inner)
        self.walk(body, inner)

    def _suggest(self, name: str, local: frozenset[str]) -> str:
        return did_you_mean(name, [*self.known, *local, *self.forms])


def global_signatures(
    globals_: Mapping[str, Value], extensions: Sequence[CheckExtension]
) -> dict[str, Signature | None]:
    """Signatures of every global (primitives and prelude), and the names extensions resolve."""
    known: dict[str, Signature | None] = {}
    for name, value in globals_.items():
        if isinstance(value, Primitive):
            optional = None if value.max_args is None else value.max_args - value.min_args
            known[name] = Signature(name, value.min_args, optional or 0, value.max_args is None)
        elif isinstance(value, Closure):
            known[name] = Signature.of_params(name, value.lambda_list.params)
        else:
            known[name] = None
    for extension in extensions:  # tasks take pairs, keywords or positions
        for name in extension.global_names():
            known.setdefault(name, None)
    return known


def file_definitions(nodes: Sequence[Node], forms: Mapping[str, SpecialForm]) -> dict[str, Signature | None]:
    """Names the program defines globally (by the special forms in force), with signatures for
    procedures defined just once."""
    defined: dict[str, Signature | None] = {}
    seen: set[str] = set()
    for form in global_definitions(nodes, forms):
        target = form.args[0]
        name = getattr(target, "name", "?")
        parameters = forms[form.name].parameters
        if parameters is None:  # its value's arity is unknown before the run (a task)
            defined[name] = None
            continue
        if name in seen:  # redefined: which definition a call meets depends on the run
            defined[name] = None
            continue
        seen.add(name)
        if not isinstance(target, (Symbol, FunctionCallNode)):
            continue
        try:
            params = parameters(form)
        except FormError:
            params = None
        defined[name] = None if params is None else Signature.of_params(name, params)
    return defined


def check_forms(
    forms: Sequence[Node],
    compiler: Compiler,
    prelude: LazyDefinitions,
    extensions: Sequence[CheckExtension] = (),
) -> list[SexpError]:
    """Every problem found in a program's forms, in source order: compiled by compiler, its calls
    checked against the globals (the prelude's defined now) and by the extensions."""
    problems: list[SexpError] = []
    for form in forms:
        try:
            compiler.compile(form, None)
        except SexpError as err:
            problems.append(err)
    prelude.force_all()
    globals_ = compiler.globals.values
    known = {**global_signatures(globals_, extensions), **file_definitions(forms, compiler.forms)}
    calls_load = any(isinstance(f, FunctionCallNode) and f.name == "load" for f in all_calls(forms))
    calls: dict[str, CallCheck] = {}
    for extension in extensions:
        calls.update(extension.call_checks(forms, globals_))
    checker = Checker(known, check_unknown=not calls_load, forms=compiler.forms, calls=calls)
    checker.walk(forms, frozenset())
    if not calls_load:
        for extension in extensions:
            checker.problems += extension.program_problems(forms, globals_)
    reported = {(p.span, p.message) for p in problems}
    problems += [p for p in checker.problems if (p.span, p.message) not in reported]
    problems.sort(key=lambda p: (p.span.line, p.span.column) if p.span else (0, 0))
    return problems


def all_calls(forms: Sequence[Node]) -> Iterable[FunctionCallNode]:
    """Every call in forms, at any depth."""
    stack = list(forms)
    while stack:
        node = stack.pop()
        if isinstance(node, FunctionCallNode):
            yield node
            stack.extend(node.args)
        elif isinstance(node, ListNode):
            stack.extend(node.items)
