"""The Python API (SPEC §10.4): run programs from Python, keep a session, and share values and
callables both ways. `import sexp_tasks` re-exports these names lazily (sexp_tasks/__init__.py)."""

from .batch_runs import batch
from .embed import Session, TaskResult, run, run_file
from .settings_type import PythonValue, Settings

__all__ = ["PythonValue", "Session", "Settings", "TaskResult", "batch", "run", "run_file"]
