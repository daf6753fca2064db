"""What the task system adds to the language core.

Importing this package registers the task system's special forms (defatom, call-atomic-task,
sequential, the loops, system:run_script) and primitives (pmap, task?, match-tasks ...) in the
core's registries, as the core's own modules register theirs. `install` then gives one runtime's
language its task system, and checks.TaskChecks adds its checks to `sexp check`; the composition
root (runtime.py) does all three.
"""

from __future__ import annotations

from ...lang.compiler import Compiler
from ...lang.prelude import LazyDefinitions
from ...resources import data_dir
from ..runner import TaskSystem
from . import loop_support, pmap, scripts, sequential, task_calls, task_loops, task_primitives  # noqa: F401


def install(system: TaskSystem, compiler: Compiler, prelude: LazyDefinitions) -> None:
    """Give a language its task system: the forms find system through the compiler, the task
    procedures written in the language (stdlib/tasks.sexp, loops.sexp) join the prelude, and a
    name nothing else binds may be a task template (SPEC §2.5: templates come last)."""
    compiler.extend(system)
    prelude.add_file(data_dir("stdlib") / "tasks.sexp")
    prelude.add_file(data_dir("stdlib") / "loops.sexp")
    compiler.globals.resolvers.append(system.task)
    compiler.globals.name_sources.append(lambda: system.library.templates)
