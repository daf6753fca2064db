"""The registry of special forms: name -> function that compiles the form.

The compiler's only knowledge of special forms is the lookup in SPECIAL_FORMS. Each form
module registers its forms with @special_form and checks its own shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...syntax.nodes import FunctionCallNode
from ..values import Code

if TYPE_CHECKING:
    from ..compiler import Compiler
    from ..environment import Scope

FormCompiler = Callable[[FunctionCallNode, "Scope | None", bool, "Compiler"], Code]

SPECIAL_FORMS: dict[str, FormCompiler] = {}


def special_form(*names: str) -> Callable[[FormCompiler], FormCompiler]:
    """Register a form compiler under each of `names`."""

    def register(compile_form: FormCompiler) -> FormCompiler:
        for name in names:
            SPECIAL_FORMS[name] = compile_form
        return compile_form

    return register


# The modules register their forms as they are imported.
from ...tasks.forms import scripts, sequential, task_calls, task_loops  # noqa: E402,F401
from . import binding, control, functions, handling, loops, quasiquote  # noqa: E402,F401
