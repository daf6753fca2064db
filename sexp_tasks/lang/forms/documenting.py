"""help: a name's documentation, in a program and in the REPL (what `sexp doc NAME` prints)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError
from ...syntax.nodes import FunctionCallNode, Literal, Node, Symbol
from ..documentation import Documentation, render_doc
from ..values import Code, Frame, Value
from . import CORE_FORMS, walk_nothing

if TYPE_CHECKING:
    from ..compiler import Compiler
    from ..environment import Scope

USAGE = 'help: expected (help name), (help "name") or (help \'name)'
GUIDE = (
    "(help NAME) shows what NAME does: its signatures, a description and an example.\n"
    "Every special form, primitive, library procedure and task has one; `sexp doc` lists them."
)


def _named(node: Node) -> str | None:
    """The name `(help x)` asks for: a bare symbol, a string or a quoted symbol."""
    if isinstance(node, Symbol):
        return node.name
    if isinstance(node, Literal) and isinstance(node.value, str):
        return node.value
    if isinstance(node, FunctionCallNode) and node.name == "quote" and len(node.args) == 1:
        return _named(node.args[0]) if isinstance(node.args[0], Symbol) else None
    return None


@CORE_FORMS.special_form(
    "help",
    check=walk_nothing,
    scope=True,
    signature=("(help name)", "(help)"),
    doc="""Print the documentation of a name: its signatures, what it does and an example.

    The name is not evaluated: `(help map)`, `(help "map")` and `(help 'map)` are the same. It
    knows every special form, primitive, library procedure and task template (what `sexp doc`
    lists), and the lambda list of a procedure the program defined; an undocumented name is an
    error naming close ones. The value is nil; `(help)` says how to use it.

    (help first)
    ;; => nil
    """,
)
def compile_help(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    docs = c.extension(Documentation)
    if not form.args:
        name = None
    elif len(form.args) == 1 and (named := _named(form.args[0])) is not None:
        name = named
    else:
        raise FormError(USAGE, form.span)
    span = form.span

    def run(env: Frame) -> Value:
        if docs is None:
            raise FormError("help: no documentation is installed in this interpreter", span)
        if name is None:
            docs.write(GUIDE + "\n")
            return None
        docs.write(render_doc(docs.find(name, "help", span)) + "\n")
        return None

    return run
