"""Sessions, run and run_file: the language from Python (SPEC §10.4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..config import SHOWN_SETTINGS, TOML_KEYS, Settings, check_setting, check_type, load_settings
from ..errors import SettingsError, UsageError
from ..lang.calls import apply_procedure
from ..lang.deepstack import run_with_deep_stack
from ..lang.values import NamedProcedure, Procedure, Value
from ..runtime import Runtime
from ..syntax.nodes import Keyword
from .convert import TaskResult, from_python, to_python

__all__ = ["Session", "TaskResult", "run", "run_file"]

T = TypeVar("T")

# The settings a session takes: the sexp.toml keys, the mock, cassette and quiet ones.
KNOWN_SETTINGS = (*SHOWN_SETTINGS, "quiet")


def api_settings(given: dict[str, Any], directory: Path | None = None) -> Settings:
    """Settings from directory's sexp.toml (the working directory's by default) and the
    environment, then the given keyword settings, checked as flags are."""
    unknown = sorted(set(given) - set(KNOWN_SETTINGS))
    if unknown:
        raise SettingsError(f"unknown setting '{unknown[0]}'; known settings: {', '.join(KNOWN_SETTINGS)}")
    overrides = {key: _templates(value) if key == "templates" else value for key, value in given.items()}
    try:
        for key, value in overrides.items():
            if value is None:
                continue  # not given
            if key in TOML_KEYS:
                check_type(key, list(value) if isinstance(value, tuple) else value, f"'{key}'")
            check_setting(key, value, key)  # named as the caller named it, not as the flag
        return load_settings(directory or Path.cwd(), overrides)
    except UsageError as err:
        raise SettingsError(str(err)) from None


def _templates(value: Any) -> Any:
    """A list of template directories as a tuple of paths (a single path is one directory)."""
    if isinstance(value, (str, Path)):
        return (str(value),)
    return tuple(map(str, value)) if isinstance(value, (list, tuple)) else value


class Session:
    """A session of the language: definitions persist across `eval` calls.

    Settings are the sexp.toml keys (`model`, `api_base`, `templates`, `workspace`, `store`,
    `max_cost_usd`, ...) and `mock_responses`, `record`, `replay`, `quiet`. A program's `print`
    writes to sys.stdout, warnings
    to sys.stderr (as they are when the session is made).
    """

    def __init__(self, _program: Path | None = None, **settings: Any) -> None:
        self.settings = api_settings(settings)
        self._runtime = Runtime(self.settings, program=_program)

    def eval(self, text: str) -> Any:
        """Run every form of text; the last one's value, converted to Python."""
        return to_python(_deep(lambda: self._runtime.run_source(text, "<python>")))

    def run_file(self, path: str | Path, inputs: dict[str, Any] | None = None) -> Any:
        """Bind inputs (as `--set` does), run the program file at path; its last value."""
        for name, value in (inputs or {}).items():
            self.define(name, value)
        target = Path(path)
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as err:
            raise SettingsError(f"cannot read {path}: {err.strerror or err}") from None
        return to_python(_deep(lambda: self._runtime.run_file(target, text)))

    def define(self, name: str, value: Any) -> None:
        """Bind name to a Python value, or to a callable the program can call (with `:key value`
        pairs as keyword arguments; an exception it raises is a language error)."""
        self._runtime.define(name, from_python(value, name))

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the procedure or task bound to name: a task takes keyword arguments as its named
        inputs, another procedure as `:key value` pairs."""
        return to_python(_deep(lambda: self._call(name, list(args), kwargs)))

    def _call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Value:
        globals_ = self._runtime.globals
        fn = globals_.values[name] if name in globals_.values else globals_.missing(name, None, None)
        if not isinstance(fn, Procedure):
            raise SettingsError(f"{name} is not a procedure or task")
        values = [from_python(arg, name) for arg in args]
        if isinstance(fn, NamedProcedure) and kwargs and not values:
            return fn.call_named({key: from_python(v, name) for key, v in kwargs.items()})
        for key, value in kwargs.items():
            values += [Keyword(key), from_python(value, name)]
        return apply_procedure(fn, values, 0)


def run(text: str, **settings: Any) -> Any:
    """Run a program's text in a new session; its last value, converted to Python."""
    return Session(**settings).eval(text)


def run_file(path: str | Path, inputs: dict[str, Any] | None = None, **settings: Any) -> Any:
    """Run a program file in a new session (its own tasks/ directory loaded), inputs bound as
    `--set` binds them; its last value, converted to Python."""
    return Session(_program=Path(path), **settings).run_file(path, inputs)


def _deep(action: Callable[[], T]) -> T:
    """action on a deep stack, as the command line runs programs."""
    return run_with_deep_stack(action)
