"""Sessions, run and run_file: the language from Python (SPEC §10.4)."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar, Unpack, overload

from ..config import Settings, load_settings
from ..errors import ReadError, RecursionDepthError, SettingsError, TypeError_, UsageError
from ..handler.python_tools import python_tool
from ..handler.tools import TOOL_SCHEMAS
from ..lang.deepstack import on_deep_stack, run_with_deep_stack
from ..lang.values import Procedure, Value
from ..runtime import Runtime
from ..syntax.nodes import Symbol
from ..syntax.reader import read
from .convert import TaskResult, call_procedure, from_python, to_python
from .settings_type import PythonValue, settings_doc
from .settings_type import Settings as SettingsKeywords
from .typed import call_typed

__all__ = ["Session", "TaskResult", "run", "run_file"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# How many Session.call calls made from inside a running program (a tool's) enclose the code
# running now: each is a level of nesting, limited by max_depth as subtasks are.
_NESTED_CALLS: ContextVar[int] = ContextVar("sexp_nested_calls", default=0)


def api_settings(given: Mapping[str, Any], directory: Path | None = None) -> Settings:
    """Settings from directory's sexp.toml (the working directory's by default) and the
    environment, then the given keyword settings, checked as flags are and ranking as they do:
    `model=` wins over a template's <model> as `--model` does, `templates=` adds directories
    loaded last as `--templates` does, `generation=` adds to sexp.toml's table key by key."""
    try:
        return load_settings(directory or Path.cwd(), given, from_api=True)
    except UsageError as err:
        raise SettingsError(str(err)) from None


class Session:
    """A session of the language: definitions persist across `eval` calls.

    Settings are the sexp.toml keys (`model`, `api_base`, `templates`, `workspace`, `store`,
    `max_cost_usd`, `cache`, ...) and `mock_responses`, `record`, `replay`, `quiet`, listed below
    and typed by `sexp_tasks.Settings` (a misspelt one is a type checker's error, and a
    SettingsError when run). A program's `print` writes to sys.stdout, warnings to sys.stderr (as
    they are when the session is made).
    """

    def __init__(self, _program: Path | None = None, **settings: Unpack[SettingsKeywords]) -> None:
        self.settings = api_settings(settings)
        self._runtime = Runtime(self.settings, program=_program)
        self.run_id: str | None = None  # the last recorded run's id (run_file(recorded=True))

    def eval(self, text: str) -> PythonValue:
        """Run every form of text; the last one's value, converted to Python: a PythonValue (None,
        bool, int, float, str, list, dict with str keys, TaskResult, or a callable procedure)."""
        _text(text, "eval")
        return to_python(_deep(lambda: self._runtime.run_source(text, "<python>")))

    def run_file(
        self,
        path: str | Path,
        inputs: dict[str, Any] | None = None,
        *,
        recorded: bool = False,
        resume: str | None = None,
        reuse: str | None = None,
    ) -> PythonValue:
        """Bind inputs (as `--set` does), run the program file at path; its last value.

        recorded=True records the run in the store (as `sexp run` does; its id is then
        `run_id`); resume=RUN_ID resumes that recorded run (as `sexp run --resume`): its
        completed steps, model turns and tool calls (a Python tool's too) come from the store.
        reuse=RUN_ID records a new run in which each model request that run made takes its
        recorded answer (as `sexp run --reuse`); not with resume."""
        if resume is not None and reuse is not None:
            raise SettingsError("run_file: give resume= (the same run again) or reuse= (a new run), not both")
        if inputs is not None and not isinstance(inputs, dict):
            raise SettingsError(f"inputs must be a dict of names to values, not {type(inputs).__name__}")
        given = {self._name(name): from_python(value, name) for name, value in (inputs or {}).items()}
        given = self._runtime.bind_inputs(list(given.items()), "input")
        target = Path(path)
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as err:
            raise SettingsError(f"cannot read {path}: {err.strerror or err}") from None
        if not recorded and resume is None and reuse is None:
            return to_python(_deep(lambda: self._runtime.run_file(target, text)))
        try:
            return to_python(
                _deep(lambda: self._runtime.run_recorded(target, text, given, resume, reuse=reuse))
            )
        finally:
            run = self._runtime.run
            self.run_id = run.run_id if run is not None and run.journal is not None else self.run_id

    def define(self, name: str, value: Any) -> None:
        """Bind name to a Python value, or to a callable the program can call (with `:key value`
        pairs as keyword arguments; an exception it raises is a language error). name is a name a
        program can use, not a special form's."""
        self._runtime.define(self._name(name), from_python(value, name))

    def _name(self, name: Any) -> str:
        """name, when a program can use it (a symbol, not a special form); else a SexpError."""
        if not isinstance(name, str):
            raise TypeError_(f"define: a name is a string, not {type(name).__name__}")
        if name in self._runtime.compiler.forms:
            raise SettingsError(f"define: '{name}' is a special form; it cannot be defined")
        try:
            forms = read(name, "define")
        except ReadError:
            forms = []
        if len(forms) != 1 or not isinstance(forms[0], Symbol) or forms[0].name != name:
            raise SettingsError(f"define: '{name}' is not a name a program can use")
        return name

    @overload
    def tool(self, fn: F, name: str | None = None) -> F: ...
    @overload
    def tool(self, fn: None = None, name: str | None = None) -> Callable[[F], F]: ...
    def tool(self, fn: F | None = None, name: str | None = None) -> F | Callable[[F], F]:
        """Offer fn to models as a tool named name (fn's __name__ by default): a template lists
        it in `<tools>` (defatom in its `(tools ...)` clause). Usable as a decorator,
        `@session.tool` or `@session.tool(name="...")`; returns fn.

        Its JSON schema comes from the signature's type hints (str, int, float, bool, list[X],
        dict, Literal[...], X | None: X or null; a parameter without a hint takes any JSON
        value; a pydantic model class, a dataclass, an Enum, a datetime and the other types
        pydantic knows: pydantic's schema, and fn receives the value pydantic makes of the
        argument, a Model instance for a model class) and the docstring (its first paragraph
        describes the tool, an `Args:` section each parameter); a parameter without a default
        is required. The model's arguments are checked against it (a violation is an answer
        naming it, fn not called); fn's result (an async fn's awaited) goes back to the model
        as text (a string as it is, anything else as JSON), an exception as
        `error: <ExceptionType>: <message>`, and the task goes on. A recorded run journals each
        call, so a resumed run does not call fn again. A name that is not 1 to 64 letters,
        digits, `_` or `-`, a built-in tool's name, or a type with no JSON form is a SexpError.
        Registering a name again replaces the tool.
        """
        if fn is None:
            return lambda given: self.tool(given, name)
        tool = python_tool(fn, name, lambda known: known in TOOL_SCHEMAS)
        self._runtime.tasks.add_python_tool(tool)
        return fn

    def call(self, name: str, /, *args: Any, output_type: Any = None, **kwargs: Any) -> TaskResult | Any:
        """Call the procedure or task bound to name: a task takes keyword arguments as its named
        inputs (`name` among them: this method's own is positional-only), another procedure as
        `:key value` pairs. Called from inside a running program (a tool that calls a task), it
        nests: at most `max_depth` such calls deep, a RecursionDepthError beyond.

        A task's call returns its TaskResult; another procedure's, its value converted (a
        PythonValue). The name is a string known only at run time, so the type says
        `TaskResult | Any`: mypy checks a task's result as a TaskResult (`r.content` is a str,
        a misspelt field an error), while a procedure's value needs a `cast` or an annotation
        on a variable of type Any.

        output_type, a pydantic model class, is a task's output format for this call: its JSON
        Schema replaces the template's (sent as response_format where the model takes it,
        checked, repaired as the template's retries allow), and the result's `parsed` is a
        model instance (`model_validate`); an answer the model rejects is a FAILED result
        naming the violations."""
        if not threading.current_thread().name.startswith("sexp"):
            return to_python(_deep(lambda: self._call(name, list(args), kwargs, output_type)))
        depth = _NESTED_CALLS.get() + 1  # on the running program's own deep stack
        if depth > self.settings.max_depth:
            raise RecursionDepthError(
                f"Session.call('{name}'): calls from inside a running program nest {depth} deep;"
                f" at most {self.settings.max_depth} (max_depth)"
            )
        nested = _NESTED_CALLS.set(depth)
        try:
            return to_python(self._call(name, list(args), kwargs, output_type))
        finally:
            _NESTED_CALLS.reset(nested)

    async def aeval(self, text: str) -> PythonValue:
        """`eval`'s async twin, run off the event loop (api/async_api.py); cancelling the awaiting
        task interrupts the evaluation, and the session goes on."""
        from .async_api import off_loop  # lazy: asyncio only for the async twins

        return await off_loop(lambda: self.eval(text))

    async def acall(
        self, name: str, /, *args: Any, output_type: Any = None, **kwargs: Any
    ) -> TaskResult | Any:
        """`call`'s async twin, run off the event loop (api/async_api.py): calls gathered on one
        loop run at once; cancelling the awaiting task interrupts the call, and the session goes on."""
        from .async_api import off_loop  # lazy: asyncio only for the async twins

        return await off_loop(lambda: self.call(name, *args, output_type=output_type, **kwargs))

    def stream(self, name: str, /, **inputs: Any) -> Iterator[str | TaskResult]:
        """Call the task bound to name with its named inputs, yielding its answer text in pieces
        as the model sends them, then the call's TaskResult as the last item (the pieces joined
        are the text the model sent). Only this call streams. Leaving the loop early interrupts
        the call (api/streaming.py)."""
        from .streaming import stream  # lazy: threads and queues only for streaming

        return stream(self, name, inputs)

    def astream(self, name: str, /, **inputs: Any) -> AsyncIterator[str | TaskResult]:
        """`stream`'s async twin, an async iterator: the call runs off the event loop; leaving
        the loop early or cancelling the awaiting task interrupts it (api/streaming.py)."""
        from .streaming import astream  # lazy: asyncio only for the async twins

        return astream(self, name, inputs)

    def _call(self, name: str, args: list[Any], kwargs: dict[str, Any], output_type: Any = None) -> Value:
        globals_ = self._runtime.globals
        fn = globals_.values[name] if name in globals_.values else globals_.missing(name, None, None)
        if not isinstance(fn, Procedure):
            raise SettingsError(f"{name} is not a procedure or task")
        if output_type is not None:
            return call_typed(fn, output_type, args, kwargs, name)
        return call_procedure(fn, args, kwargs, name)


def run(text: str, **settings: Unpack[SettingsKeywords]) -> PythonValue:
    """Run a program's text in a new session; its last value, converted to Python (a
    PythonValue)."""
    _text(text, "run")
    return Session(**settings).eval(text)


def run_file(
    path: str | Path, inputs: dict[str, Any] | None = None, **settings: Unpack[SettingsKeywords]
) -> PythonValue:
    """Run a program file in a new session (its own tasks/ directory loaded), inputs bound as
    `--set` binds them; its last value, converted to Python."""
    return Session(_program=Path(path), **settings).run_file(path, inputs)


# help(sexp_tasks.run) and the others list the settings they take, from the settings table.
for _documented in (Session, run, run_file):
    _documented.__doc__ = (_documented.__doc__ or "").rstrip() + settings_doc()


def _text(text: Any, caller: str) -> None:
    """A TYPE_ERROR unless text is a program's text (a str)."""
    if not isinstance(text, str):
        raise TypeError_(f"{caller} takes the program's text, not {type(text).__name__}")


def _deep(action: Callable[[], T]) -> T:
    """action on a deep stack, as the command line runs programs, in the caller's context (a
    Session.stream's text receiver goes along): in this thread when it has one (an async twin's,
    api/async_api.py), else in a new one."""
    context = contextvars.copy_context()
    if on_deep_stack():
        return context.run(action)
    return run_with_deep_stack(lambda: context.run(action))
