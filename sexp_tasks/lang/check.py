"""`sexp check`: find malformed forms, wrong argument counts and unknown procedures without running.

Compiling a form checks every special form's shape (the compiler refuses malformed ones), so
the checker compiles each top-level form, then walks the tree to compare each call's argument
count with the procedure it names: a primitive, a prelude procedure, or a procedure the file
itself defines. A call of a task whose template is known before the run (a registered template,
a defatom of the file) is checked against its inputs: unknown names, missing required inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import ArityError, FormError, NameError_, SexpError
from ..runtime import Runtime
from ..syntax.nodes import FunctionCallNode, Keyword, ListNode, Literal, Node, Symbol, elements
from ..syntax.source import Span
from ..tasks.forms.task_calls import defatom_template
from ..tasks.inputs import missing_inputs, mixed_arguments, too_many_arguments, unknown_inputs
from ..tasks.task import RESERVED
from ..tasks.template import TaskTemplate
from .calls import expected_count
from .codegen import SCOPE_FORMS, local_definitions
from .forms import SPECIAL_FORMS
from .lambda_list import ParsedParams, parse_params
from .suggest import did_you_mean
from .values import Closure, Primitive

# Forms whose arguments are `(clause expr...)`: only the expressions are code.
CLAUSE_FORMS = frozenset({"system:run_script", "director-evaluator-loop", "iterative-loop"})


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
    """Walks a program with the names in scope, collecting problems."""

    known: dict[str, Signature | None]  # global names; None when the arity is unknown
    check_unknown: bool
    # Names that call tasks, with the template when it is known before the program runs.
    tasks: dict[str, TaskTemplate | None] = field(default_factory=dict)
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
        if name in SPECIAL_FORMS:
            self.special(node, local)
            return
        if name in self.tasks and name not in local:
            self.task_call(node, self.tasks[name], local)
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

    def task_call(self, node: FunctionCallNode, template: TaskTemplate | None, local: frozenset[str]) -> None:
        """A task called by name: its arguments walked (a pair's head names an input, not a
        procedure), then checked against the template's inputs when the template is known."""
        args = node.args
        if args and len(args) % 2 == 0 and all(isinstance(a, Keyword) for a in args[::2]):
            self.walk(args[1::2], local)
            named: list[tuple[str, Span | None]] | None = [(a.name, a.span) for a in args[::2]]  # type: ignore[union-attr]
        elif args and all(self._is_pair(a, template, local) for a in args):
            for pair in args:  # (param expr): only expr is code
                self.walk(pair.args, local)  # type: ignore[union-attr]
            named = [(a.name, a.span) for a in args]  # type: ignore[union-attr]
        else:
            self.walk(args, local)
            named = None
        if template is None:
            return
        if named is not None:
            self.input_problems(node, template, named)
        elif any(isinstance(a, Keyword) for a in args):
            self.problems.append(ArityError(str(mixed_arguments(template)), node.span))
        elif (too_many := too_many_arguments(template, len(args))) is not None:
            self.problems.append(ArityError(str(too_many), node.span))
        else:
            given = [spec.name for spec in template.inputs[: len(args)]]
            self.problems += [ArityError(str(p), node.span) for p in missing_inputs(template, given)]

    def _is_pair(self, node: Node, template: TaskTemplate | None, local: frozenset[str]) -> bool:
        """Whether an argument reads as `(param expr)`: headed by an input or reserved parameter,
        or by a name that is no procedure (a misspelt input, reported as such)."""
        if not (isinstance(node, FunctionCallNode) and len(node.args) == 1):
            return False
        head = node.name
        if head in RESERVED or (template is not None and template.input(head) is not None):
            return True
        return head not in local and head not in self.known and head not in SPECIAL_FORMS

    def input_problems(
        self, node: FunctionCallNode, template: TaskTemplate, named: list[tuple[str, Span | None]]
    ) -> None:
        """Unknown input names (where each is written) and missing required inputs (at the call)."""
        given = [name for name, _ in named if name not in RESERVED]
        where = dict(reversed(named))
        for problem in unknown_inputs(template, given):
            self.problems.append(ArityError(str(problem), where.get(problem.parameter) or node.span))
        self.problems += [ArityError(str(p), node.span) for p in missing_inputs(template, given)]

    def special(self, node: FunctionCallNode, local: frozenset[str]) -> None:
        name, args = node.name, node.args
        if name in ("quote", "quasiquote", "defatom"):
            return  # data, not calls (defatom's clauses are checked when it compiles)
        if name in ("lambda", "fn") and args:
            self.function(args[0], args[1:], local, name)
        elif name == "define" and args and isinstance(args[0], FunctionCallNode):
            self.function(ListNode(args[0].args, args[0].span), args[1:], local, "define")
        elif name in ("let", "let*") and args:
            bindings = elements(args[0]) or ()
            names = [b.head.name for b in bindings if isinstance(b, FunctionCallNode)]
            for binding in bindings:
                if isinstance(binding, FunctionCallNode):
                    self.walk(binding.args, local)
            body = args[1:]
            self.walk(body, local | set(names) | set(local_definitions(body)))
        elif name == "cond":
            for clause in args:
                parts = elements(clause) or ()
                keep = (
                    parts[1:] if parts and isinstance(parts[0], Symbol) and parts[0].name == "else" else parts
                )
                self.walk(keep, local)
        elif name == "try" and args:
            self.walk(args[:-1], local)
            clause = args[-1]
            if isinstance(clause, FunctionCallNode) and clause.args and isinstance(clause.args[0], Symbol):
                self.walk(clause.args[1:], local | {clause.args[0].name})
        elif (
            name == "sequential"
            and args
            and isinstance(args[0], FunctionCallNode)
            and args[0].name == "context"
        ):
            for clause in args[0].args:  # (context (setting expr)...): only the exprs are code
                self.walk(clause.args if isinstance(clause, FunctionCallNode) else (clause,), local)
            self.walk(args[1:], local)
        elif name == "call-atomic-task" or name in CLAUSE_FORMS:
            # (param expr) clauses: the head names a parameter, not a procedure
            for item in args[1:] if name == "call-atomic-task" else args:
                self.walk(item.args if isinstance(item, FunctionCallNode) else (item,), local)
            if name == "call-atomic-task" and args and isinstance(args[0], Literal):
                template = self.tasks.get(args[0].value) if isinstance(args[0].value, str) else None
                named = [(a.name, a.span) for a in args[1:] if isinstance(a, (FunctionCallNode, Keyword))]
                if template is not None:
                    self.input_problems(node, template, named)
        elif name in ("define", "bind", "set!"):
            self.walk(args[1:], local)
        else:
            self.walk(args, local)

    def function(self, params_node: Node, body: Sequence[Node], local: frozenset[str], form: str) -> None:
        try:
            params = parse_params(params_node, form, params_node.span)  # type: ignore[union-attr]
        except FormError:
            return  # the compiler reports it
        defaults = [d for _, d in [*params.optional, *params.keys] if d is not None]
        inner = local | set(params.names) | set(local_definitions(body))
        self.walk(defaults, inner)
        self.walk(body, inner)

    def _suggest(self, name: str, local: frozenset[str]) -> str:
        return did_you_mean(name, [*self.known, *local, *SPECIAL_FORMS])


def global_signatures(runtime: Runtime) -> dict[str, Signature | None]:
    """Signatures of every global the runtime defines (primitives and prelude)."""
    known: dict[str, Signature | None] = {}
    runtime.library.force_all()
    for name, value in runtime.globals.values.items():
        if isinstance(value, Primitive):
            optional = None if value.max_args is None else value.max_args - value.min_args
            known[name] = Signature(name, value.min_args, optional or 0, value.max_args is None)
        elif isinstance(value, Closure):
            known[name] = Signature.of_params(name, value.lambda_list.params)
        else:
            known[name] = None
    for template_name in runtime.tasks.library.templates:  # tasks take pairs, keywords or positions
        known.setdefault(template_name, None)
    return known


def file_definitions(forms: Sequence[Node]) -> dict[str, Signature | None]:
    """Names the program defines globally, with signatures for procedures defined just once."""
    defined: dict[str, Signature | None] = {}
    seen: set[str] = set()
    for form in _global_definitions(forms):
        if form.name == "defatom":
            defined[getattr(form.args[0], "name", "?")] = None
            continue
        target, rest = form.args[0], form.args[1:]
        name = getattr(target, "name", "?")
        if name in seen:  # redefined: which definition a call meets depends on the run
            defined[name] = None
            continue
        seen.add(name)
        try:
            if isinstance(target, FunctionCallNode):
                params = parse_params(ListNode(target.args, target.span), "define", form.span)
                defined[target.name] = Signature.of_params(target.name, params)
            elif isinstance(target, Symbol):
                value = rest[0] if rest else None
                if isinstance(value, FunctionCallNode) and value.name in ("lambda", "fn") and value.args:
                    params = parse_params(value.args[0], value.name, value.span)
                    defined[target.name] = Signature.of_params(target.name, params)
                else:
                    defined[target.name] = None
        except FormError:
            defined[getattr(target, "name", "?")] = None
    return defined


def task_names(forms: Sequence[Node], runtime: Runtime) -> dict[str, TaskTemplate | None]:
    """Names that call tasks, resolved as a run resolves them (SPEC §2.5): the file's defatoms
    (their templates built now; None when one is defined twice or does not build), then
    registered templates that no global and nothing the file defines shadows."""
    defined: dict[str, list[FunctionCallNode]] = {}
    for form in _global_definitions(forms):
        defined.setdefault(getattr(form.args[0], "name", "?"), []).append(form)
    names: dict[str, TaskTemplate | None] = {
        name: template
        for name, template in runtime.tasks.library.templates.items()
        if name not in runtime.globals.values and name not in defined
    }
    for name, forms_defining in defined.items():
        if any(f.name != "defatom" for f in forms_defining):
            continue  # a procedure (also): which one a call meets depends on the run
        template = None
        if len(forms_defining) == 1:
            try:
                template = defatom_template(forms_defining[0])
            except SexpError:
                pass  # compiling the defatom reports it
        names[name] = template
    return names


def _global_definitions(forms: Sequence[Node]) -> Iterable[FunctionCallNode]:
    """Every define/bind that binds a global: at top level or inside forms that open no scope."""
    stack = list(reversed(forms))
    while stack:
        node = stack.pop()
        if not isinstance(node, FunctionCallNode) or node.name in SCOPE_FORMS:
            continue
        if node.name in ("define", "bind", "defatom") and node.args:
            yield node
            if isinstance(node.args[0], Symbol):
                stack.extend(reversed(node.args[1:]))
            continue
        stack.extend(reversed(node.args))


def check_forms(forms: Sequence[Node], runtime: Runtime) -> list[SexpError]:
    """Every problem found in a program's forms, in source order."""
    problems: list[SexpError] = []
    for form in forms:
        try:
            runtime.compiler.compile(form, None)
        except SexpError as err:
            problems.append(err)
    known = {**global_signatures(runtime), **file_definitions(forms)}
    calls_load = any(isinstance(f, FunctionCallNode) and f.name == "load" for f in _all_calls(forms))
    checker = Checker(known, check_unknown=not calls_load, tasks=task_names(forms, runtime))
    checker.walk(forms, frozenset())
    reported = {(p.span, p.message) for p in problems}
    problems += [p for p in checker.problems if (p.span, p.message) not in reported]
    problems.sort(key=lambda p: (p.span.line, p.span.column) if p.span else (0, 0))
    return problems


def _all_calls(forms: Sequence[Node]) -> Iterable[FunctionCallNode]:
    stack = list(forms)
    while stack:
        node = stack.pop()
        if isinstance(node, FunctionCallNode):
            yield node
            stack.extend(node.args)
        elif isinstance(node, ListNode):
            stack.extend(node.items)
