"""sexp-tasks: a small Lisp for LLM workflows.

The Python API (SPEC §10.4, §10.5, §11.3): `run`, `run_file`, `batch`, `Session`, `TaskResult`,
`Settings` (the keyword settings, typed), `PythonValue` (a program's value in Python),
`SexpError` and the async twins `arun` and `abatch`, loaded when first used so that the command
line starts without the language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import SexpError

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import PythonValue, Session, Settings, TaskResult, abatch, arun, batch, run, run_file

__all__ = [
    "PythonValue",
    "Session",
    "Settings",
    "SexpError",
    "TaskResult",
    "abatch",
    "arun",
    "batch",
    "run",
    "run_file",
]


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use."""
    if name in __all__:
        from . import api  # lazy: the language, 38 ms, only for the API (cli/startup.py)

        return getattr(api, name)
    raise AttributeError(f"module 'sexp_tasks' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, the API's not yet loaded among them (tab completion lists them), without
    loading it; not the typing helpers the module itself imports (Any, TYPE_CHECKING...)."""
    return sorted({*__all__, "__version__", *(name for name in globals() if name.startswith("__"))})
