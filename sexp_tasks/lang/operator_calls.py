"""What the calls a higher-order operator of the core makes run inside, in one interpreter.

The core's `reduce` calls the procedure it is given for every element. The core knows no task;
the task system gives a task called there the reduce context defaults (SPEC §3.5), and it does so
by installing a hook here, in the interpreter it is installed in (tasks.forms.install), as it
installs its forms and primitives. A plain Interpreter has no hook: the calls run as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

# operator -> what its calls run inside ("reduce" -> the reduce context defaults)
OperatorHook = Callable[[str], AbstractContextManager[object]]


class OperatorCalls:
    """One interpreter's hook around the calls its operators make; none until one is installed."""

    def __init__(self) -> None:
        self._hook: OperatorHook | None = None

    def install(self, hook: OperatorHook) -> None:
        """Run the calls of every operator inside hook(operator); a second hook is an error (none
        overrides another's)."""
        if self._hook is not None:
            raise ValueError("an operator hook is installed twice")
        self._hook = hook

    def of(self, operator: str) -> AbstractContextManager[object]:
        """What the calls operator makes now run inside (nothing, without a hook)."""
        return nullcontext() if self._hook is None else self._hook(operator)
