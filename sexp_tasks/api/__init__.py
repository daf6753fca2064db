"""The Python API (SPEC §10.4): run programs from Python, keep a session, and share values and
callables both ways. `import sexp_tasks` re-exports these names lazily (sexp_tasks/__init__.py)."""

from typing import TYPE_CHECKING, Any

from .batch_runs import batch
from .embed import Session, TaskResult, run, run_file
from .settings_type import PythonValue, Settings

if TYPE_CHECKING:
    from .async_api import abatch, arun

__all__ = ["PythonValue", "Session", "Settings", "TaskResult", "abatch", "arun", "batch", "run", "run_file"]


def __getattr__(name: str) -> Any:
    """The async twins, imported on first use (asyncio only for them)."""
    if name in ("abatch", "arun"):
        from . import async_api

        return getattr(async_api, name)
    raise AttributeError(f"module 'sexp_tasks.api' has no attribute {name!r}")
