"""`(sequential (context ...)? step...)`: steps in order, each seeing what earlier ones found (§3.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import FormError, ValueError_
from ...lang.forms import walk_clauses
from ...lang.values import Code, Value
from ...syntax.nodes import FunctionCallNode
from ..context import ContextError, parse_overrides, resolve, sequential_frame
from . import TASK_FORMS

if TYPE_CHECKING:
    from ...lang.check import Checker
    from ...lang.compiler import Compiler
    from ...lang.environment import Scope


def check_sequential(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """(context (setting expr)...): only the exprs are code; then the steps."""
    args = form.args
    if args and isinstance(args[0], FunctionCallNode) and args[0].name == "context":
        walk_clauses(checker, args[0].args, local)
        args = args[1:]
    checker.walk(args, local)


@TASK_FORMS.special_form(
    "sequential",
    check=check_sequential,
    signature="(sequential [(context (setting value)...)] step...)",
    doc="""Run the steps in order, each task step seeing what earlier steps found; the last value.

    By default the steps inherit the caller's context and accumulate data: each task step
    receives the notes of the task results before it. `(context ...)` overrides that with
    `inherit_context` (full, none, subset), `accumulate_data` (true, false),
    `accumulation_format` (notes_only, full_output) and `fresh_context` (enabled, disabled).

    (sequential (context (accumulate_data false)) (define a 2) (* a 21))
    ;; => 42
    """,
)
def compile_sequential(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = list(form.args)
    settings: list[tuple[str, Code]] = []
    first = args[0] if args else None
    if isinstance(first, FunctionCallNode) and first.name == "context":
        args.pop(0)
        for clause in first.args:
            if not (isinstance(clause, FunctionCallNode) and len(clause.args) == 1):
                raise FormError(
                    "sequential: (context ...) holds (setting value) clauses,"
                    ' e.g. (context (inherit_context "none") (accumulate_data true))',
                    clause.span or form.span,
                )
            settings.append((clause.name, c.compile(clause.args[0], scope)))
    # Steps are never in tail position: the frame must outlive each of them.
    steps = [c.compile(step, scope) for step in args]
    span = form.span

    def run(env: list[Any]) -> Value:
        try:
            policy = resolve("sequential", parse_overrides({key: code(env) for key, code in settings}))
        except ContextError as err:
            raise ValueError_(f"sequential: {err}", span) from None
        value: Value = None
        with sequential_frame(policy) as frame:
            for step in steps:
                value = step(env)
                frame.accumulate(value)
        return value

    return run
