"""Special forms: one description per form, read by the compiler, by `sexp check` and by scope
analysis alike, and the registries that hold them.

A form module registers each form with a registry's @special_form: the function that compiles it
(checking its shape), how the checker walks its arguments, and what it binds. The core's forms
register in CORE_FORMS as their modules are imported below; a part of the system that adds forms
(the task system) keeps a FormRegistry of its own. Registries are only lists of what may be
installed: each compiler has its own table of forms (Compiler.forms), built from the registries
installed in it, and that table is all the compiler, the checker and scope analysis consult.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...syntax.nodes import DictNode, FunctionCallNode, ListNode, Node, Symbol
from ..values import Code

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler
    from ..environment import Scope
    from ..lambda_list import ParsedParams

FormCompiler = Callable[[FunctionCallNode, "Scope | None", bool, "Compiler"], Code]
# How `sexp check` walks a form: (checker, form, the local names in scope).
FormCheck = Callable[["Checker", FunctionCallNode, frozenset[str]], None]
# The parameters of the procedure a defining form binds, None when it binds no procedure;
# FormError when they are malformed (the compiler reports that).
Parameters = Callable[[FunctionCallNode], "ParsedParams | None"]


def walk_arguments(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Every argument is code."""
    checker.walk(form.args, local)


def walk_nothing(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """The arguments are data, not calls."""


def walk_after_name(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Every argument after the first, which names what the form binds, is code."""
    checker.walk(form.args[1:], local)


def walk_clauses(checker: Checker, clauses: Iterable[Node], local: frozenset[str]) -> None:
    """`(param expr)` clauses: the head names a parameter, not a procedure; only expr is code."""
    for item in clauses:
        checker.walk(item.args if isinstance(item, FunctionCallNode) else (item,), local)


def walk_all_clauses(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Every argument is a `(param expr)` clause."""
    walk_clauses(checker, form.args, local)


@dataclass(frozen=True)
class SpecialForm:
    """Everything the compiler, the checker and scope analysis know of one special form."""

    name: str
    compile: FormCompiler
    check: FormCheck = walk_arguments
    # Definitions inside it are not the enclosing frame's: a body with a frame of its own, or data.
    scope: bool = False
    # It binds, in the enclosing frame, the name its first argument gives: `x` or `(x params...)`.
    defines: bool = False
    # For a defining form, the parameters of what it binds (for arity checks); None for a form
    # whose value's arity is unknown before the run (a task).
    parameters: Parameters | None = None
    # Its documentation (lang/documentation.py): the signatures, written with its name, and a
    # docstring (summary line, paragraph, example).
    signatures: tuple[str, ...] = ()
    doc: str = ""


class FormRegistry(Mapping[str, SpecialForm]):
    """Special forms by name, each registered once: the core's (CORE_FORMS) or those one part of the
    system adds (the task system's). Compiler.add_forms installs them in one compiler."""

    def __init__(self) -> None:
        self._forms: dict[str, SpecialForm] = {}

    def special_form(
        self,
        *names: str,
        check: FormCheck = walk_arguments,
        scope: bool = False,
        defines: bool = False,
        parameters: Parameters | None = None,
        signature: str | tuple[str, ...] = (),
        doc: str = "",
    ) -> Callable[[FormCompiler], FormCompiler]:
        """Register a form compiler, with the rest of the form's description, under each of `names`
        (a name registered already is an error: nothing is overwritten). signature: its documented
        form(s), written with the first name; doc: what it does, as a primitive's docstring says it
        (a summary line, a paragraph, an example)."""
        forms = (signature,) if isinstance(signature, str) else signature
        if any(form.split(maxsplit=1)[0].strip("()") != names[0] for form in forms):
            raise ValueError(f"the signatures of {names[0]} must be written with its name: {forms}")

        def register(compile_form: FormCompiler) -> FormCompiler:
            for name in names:
                if name in self._forms:
                    raise ValueError(f"the special form '{name}' is registered twice")
                named = tuple(f"({name}{form[len(names[0]) + 1 :]}" for form in forms)
                self._forms[name] = SpecialForm(
                    name, compile_form, check, scope, defines, parameters, named, doc
                )
            return compile_form

        return register

    def __getitem__(self, name: str) -> SpecialForm:
        return self._forms[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._forms)

    def __len__(self) -> int:
        return len(self._forms)


# The language core's own forms (registered by the modules imported at the end of this one).
CORE_FORMS = FormRegistry()


def defined_name(form: FunctionCallNode) -> str | None:
    """The name a defining form binds: its first argument, `x` or `(x params...)`."""
    target = form.args[0] if form.args else None
    if isinstance(target, Symbol):
        return target.name
    if isinstance(target, FunctionCallNode):
        return target.head.name
    return None


def defines_procedure(form: Node) -> bool:
    """Whether a defining form is a procedure's, `(define (name params...) body...)`: its value
    closes over the globals alone and holds no state of its own."""
    target = form.args[0] if isinstance(form, FunctionCallNode) and form.args else None
    return isinstance(target, FunctionCallNode)


def local_definitions(nodes: Sequence[Node], forms: Mapping[str, SpecialForm]) -> list[str]:
    """Names that defining forms (define, bind, ...) in a body bind in the body's own frame, in
    order; forms is the table of special forms in force (Compiler.forms)."""
    found: list[str] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, FunctionCallNode):
            form = forms.get(node.head.name)
            args = node.args
            if form is not None:
                if form.scope:
                    continue
                if form.defines and args:
                    target = args[0]
                    if isinstance(target, Symbol):
                        found.append(target.name)
                        stack.extend(reversed(args[1:]))
                    elif isinstance(target, FunctionCallNode):
                        found.append(target.head.name)
                    continue
            stack.extend(reversed(args))
        elif isinstance(node, (ListNode, DictNode)):
            stack.extend(reversed(node.items))
    return found


def global_definitions(nodes: Sequence[Node], forms: Mapping[str, SpecialForm]) -> Iterable[FunctionCallNode]:
    """Every defining form that binds a global: at top level or inside forms that open no scope;
    forms is the table of special forms in force (Compiler.forms)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if not isinstance(node, FunctionCallNode):
            continue
        form = forms.get(node.name)
        if form is not None and form.scope:
            continue
        if form is not None and form.defines and node.args:
            yield node
            if isinstance(node.args[0], Symbol):
                stack.extend(reversed(node.args[1:]))
            continue
        stack.extend(reversed(node.args))


# The core's forms register in CORE_FORMS as their modules are imported.
from . import binding, control, documenting, functions, handling, loops, quasiquote  # noqa: E402,F401
