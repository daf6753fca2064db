"""What the task system adds to the language core.

Its special forms (defatom, call-atomic-task, sequential, the loops, system:run_script) and its
primitives (pmap, task?, match-tasks ...) register in the registries below, TASK_FORMS and
TASK_PRIMITIVES, as their modules are imported, never in the core's. `install` adds them to one
interpreter, with the rest of what the task system gives a language, and checks.TaskChecks adds
its checks to `sexp check`; the composition root (runtime.py) does both.
"""

from __future__ import annotations

from ...lang.forms import FormRegistry
from ...lang.interpreter import Interpreter
from ...lang.primitives import PrimitiveRegistry
from ...resources import data_dir
from ...run_context import operator_defaults
from ..runner import TaskSystem
from ..task_services import TaskServices
from ..template_docs import template_docs

TASK_FORMS = FormRegistry()
TASK_PRIMITIVES = PrimitiveRegistry()

# The task system's forms and primitives register in the registries above as these are imported.
from . import (  # noqa: E402,F401
    loop_support,
    pmap,
    scripts,
    sequential,
    task_calls,
    task_loops,
    task_primitives,
)


def install(system: TaskSystem, core: Interpreter, ctx: TaskServices | None) -> None:
    """Give one interpreter the task system: its special forms (in the compiler's table, and so
    among the reserved names), its primitives (bound in the globals, given ctx), its hook around
    reduce's calls, its dynamic variable `*loop-config*` (the compiler's), the task procedures
    written in the language (stdlib/tasks.sexp, loops.sexp, in the prelude); the forms find system
    through the compiler, and a name nothing else binds may be a task template (SPEC §2.5:
    templates come last), and documents the templates (help, `sexp doc`). ctx None: a program
    that is only checked, never run."""
    core.compiler.add_forms(TASK_FORMS)
    TASK_PRIMITIVES.install(core.globals, ctx)
    core.globals.operator_calls.install(operator_defaults)  # a task reducing gets reduce's defaults
    core.compiler.add_dynamic_variable(task_loops.LOOP_CONFIG)
    core.compiler.extend(system)
    core.prelude.add_file(data_dir("stdlib") / "tasks.sexp")
    core.prelude.add_file(data_dir("stdlib") / "loops.sexp")
    core.globals.resolvers.append(system.task)
    system.globals = core.globals.values  # its procedures may be tools
    core.globals.name_sources.append(lambda: system.library.templates)
    core.documentation.sources.append(lambda: template_docs(system.library.templates))
