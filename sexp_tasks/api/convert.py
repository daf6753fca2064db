"""Values across the border: the language's values to Python's and back (SPEC §10.4)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import PythonError, SexpError, TypeError_
from ..lang.calls import apply_procedure
from ..lang.deepstack import run_with_deep_stack
from ..lang.values import NamedProcedure, Primitive, Procedure, Value
from ..results import ScriptResult, TaskError
from ..results import TaskResult as LanguageTaskResult
from ..syntax.nodes import Keyword, Symbol


@dataclass(frozen=True)
class TaskResult:
    """A task's result as Python sees it: `status` (COMPLETE, CONTINUATION or FAILED), `content`
    (the answer's text), `parsed` (its parsed content, converted), `notes`, `error` (the
    TaskError as a dict, None unless FAILED) and `criteria` (an evaluator's, else None). A
    script's result also has `stdout`, `stderr` and `exit_code` (None for a task's; exit_code is
    None too when the script timed out)."""

    status: str
    content: str
    parsed: Any
    notes: dict[str, Any]
    error: dict[str, Any] | None
    criteria: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    exit_code: int | None = None

    @property
    def failed(self) -> bool:
        """Whether the task failed."""
        return self.status == "FAILED"


def to_python(value: Value) -> Any:
    """nil → None, lists → list, dicts → dict, a TaskResult → TaskResult; symbols and keywords
    become their names (a keyword's with its colon); a procedure becomes a Python callable
    (LanguageProcedure); numbers, strings and booleans stay as they are."""
    if isinstance(value, list):
        return [to_python(item) for item in value]
    if isinstance(value, dict):
        return {key: to_python(item) for key, item in value.items()}
    if isinstance(value, LanguageTaskResult):
        error = value.error.to_dict() if value.error is not None else None
        parsed, notes = to_python(value.parsed_content), to_python(value.notes)
        fields = (value.status, value.content, parsed, notes, error, value.criteria)
        if isinstance(value, ScriptResult):
            return TaskResult(*fields, stdout=value.stdout, stderr=value.stderr, exit_code=value.exit_code)
        return TaskResult(*fields)
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, Keyword):
        return ":" + value.name
    if isinstance(value, Procedure):
        return LanguageProcedure(value)
    return value


class LanguageProcedure:
    """A procedure or task of the language, callable from Python: arguments converted from Python,
    keyword arguments as `:key value` pairs (a task's named inputs), the value converted back.
    Given back to the language, it is the procedure it wraps."""

    def __init__(self, procedure: Procedure) -> None:
        self.procedure = procedure

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        def call() -> Value:
            return call_procedure(self.procedure, list(args), kwargs, self.procedure.name)

        # on the interpreter's deep stack, as a program's own calls run
        inside = threading.current_thread().name.startswith("sexp")
        return to_python(call() if inside else run_with_deep_stack(call))

    def __repr__(self) -> str:
        return repr(self.procedure)


def call_procedure(fn: Procedure, args: list[Any], kwargs: dict[str, Any], name: str) -> Value:
    """fn called with Python arguments: a task given keyword arguments only takes them as its
    named inputs, another procedure as `:key value` pairs after the positional ones."""
    values = [from_python(arg, name) for arg in args]
    if isinstance(fn, NamedProcedure) and kwargs and not values:
        return fn.call_named({key: from_python(v, name) for key, v in kwargs.items()})
    for key, value in kwargs.items():
        values += [Keyword(key), from_python(value, name)]
    return apply_procedure(fn, values, 0)


def from_python(value: Any, name: str = "value") -> Value:
    """A Python value as the language's: None, booleans, numbers and strings as they are, lists
    and tuples as lists, dicts with string keys as dicts, a TaskResult as the language's task
    result, a callable as a procedure named name. A list or dict that contains itself, or is
    nested too deep for Python to walk, is a TYPE_ERROR."""
    try:
        return _from_python(value, name, set())
    except RecursionError:
        raise TypeError_(f"{name}: the value is nested too deep to convert") from None


def _from_python(value: Any, name: str, around: set[int]) -> Value:
    """from_python's walk; around holds the ids of the lists and dicts value is inside of."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, dict)):
        if id(value) in around:
            raise TypeError_(
                f"{name}: a {type(value).__name__} that contains itself has no value in the language"
            )
        around.add(id(value))
        try:
            if not isinstance(value, dict):
                return [_from_python(item, name, around) for item in value]
            converted: dict[str, Value] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise TypeError_(f"{name}: a dict key must be a string (got {type(key).__name__})")
                converted[key] = _from_python(item, name, around)
            return converted
        finally:
            around.discard(id(value))
    if isinstance(value, TaskResult):
        error = _task_error(value.error) if value.error is not None else None
        parsed, notes = _from_python(value.parsed, name, around), _from_python(value.notes, name, around)
        content, status, criteria = value.content, value.status, value.criteria
        notes = notes if isinstance(notes, dict) else {}  # a TaskResult's notes are a dict
        if value.stdout is not None or value.stderr is not None:  # a script's: the fields it had
            script_out, script_err = value.stdout or "", value.stderr or ""
            return ScriptResult(
                content, status, notes, parsed, criteria, error, script_out, script_err, value.exit_code
            )
        return LanguageTaskResult(content, status, notes, parsed, criteria, error)
    if isinstance(value, Procedure):
        return value  # a procedure the language gave
    if isinstance(value, LanguageProcedure):
        return value.procedure
    if callable(value):
        return python_procedure(name, value)
    raise TypeError_(f"{name}: a Python {type(value).__name__} has no value in the language")


def _task_error(error: dict[str, Any]) -> TaskError:
    """A TaskResult's error dict as the TaskError it was made from (keys it does not know left out)."""
    known = {key: error[key] for key in TaskError.__dataclass_fields__ if key in error}
    return TaskError(**{"type": "TASK_FAILURE", "message": "", **known})


def python_procedure(name: str, fn: Callable[..., Any]) -> Primitive:
    """fn as a procedure: trailing `:key value` pairs become its keyword arguments, the other
    arguments its positional ones; an exception it raises is a language error (catchable with
    `try`) whose message is the exception's."""

    def call(*args: Value) -> Value:
        positional, keywords = split_keywords(name, list(args))
        try:
            result = fn(*[to_python(a) for a in positional], **{k: to_python(v) for k, v in keywords.items()})
        except SexpError:
            raise
        except Exception as exc:  # the Python function's own failure, the program's to handle
            raise PythonError(f"{name}: {exc}", details={"python_type": type(exc).__name__}) from exc
        return from_python(result, name)

    doc = (getattr(fn, "__doc__", None) or f"The Python function {name}.").strip().splitlines()[0]
    return Primitive(name, call, 0, None, doc, (f"({name} args... :key value...)",))


def split_keywords(name: str, args: list[Value]) -> tuple[list[Value], dict[str, Value]]:
    """The positional arguments before the first keyword, and the `:key value` pairs after it."""
    for index, arg in enumerate(args):
        if isinstance(arg, Keyword):
            pairs = args[index:]
            if len(pairs) % 2 or not all(isinstance(k, Keyword) for k in pairs[::2]):
                raise TypeError_(f"{name}: keyword arguments come as `:key value` pairs after the others")
            return args[:index], {k.name: v for k, v in zip(pairs[::2], pairs[1::2], strict=True)}  # type: ignore[union-attr]
    return args, {}
