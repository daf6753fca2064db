"""Python functions offered to models as tools (SPEC §10.4, `Session.tool`): the registration,
and a call the tool loop makes: its arguments checked against the tool's schema (a function's
by pydantic, handler/tool_schema.py; a procedure's by its JSON Schema), its result or exception
the text the model reads."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import SettingsError, SexpError
from .json_schema import violations
from .tool_schema import TOOL_NAME, FunctionArguments

ANSWER_LIMIT = (
    1024 * 1024
)  # bytes of a Python tool's answer sent to the model (as script_output_limit's default)


class ToolArguments(Protocol):
    """How a tool's arguments are described to the model and checked before it is called."""

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema sent in the request's `tools`."""
        ...

    def checked(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The keyword arguments to call the tool with and no problems; or None and the violations."""
        ...


@dataclass(frozen=True)
class SchemaArguments:
    """Arguments described by a JSON Schema given whole (a procedure's tool) and checked against it."""

    schema: dict[str, Any]
    takes_more: bool = False  # whether the tool takes arguments its schema does not name

    def checked(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """arguments, when the parameters' schema holds them; else None and the violations."""
        parameters = self.schema["function"]["parameters"]
        if not self.takes_more:
            parameters = {**parameters, "additionalProperties": False}
        problems = violations(arguments, parameters)
        return (None, problems) if problems else (arguments, [])


@dataclass(frozen=True)
class PythonTool:
    """A Python function a template may list in `<tools>` by name, with its arguments' schema."""

    name: str
    fn: Callable[..., Any]
    arguments: ToolArguments  # the schema offered and the check of what the model passes

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema sent in the request's `tools`."""
        return self.arguments.schema

    def run(self, arguments: dict[str, Any]) -> str:
        """The answer the model reads: the result (a string as it is, else JSON), `error: ...`
        naming the arguments' violations (fn not called), or `error: <Type>: <message>` when
        fn raised."""
        given, problems = self.arguments.checked(arguments)
        if given is None:
            return f"error: {self.name}: invalid arguments: " + "; ".join(problems)
        try:
            result = self.fn(**given)
            if inspect.isawaitable(result):  # an async function: run to its end (no loop runs here)
                import asyncio  # lazy: only an async tool needs it (a start-up saving: cli/startup.py)

                result = asyncio.run(_awaited(result))
        except SexpError as exc:  # a procedure's error (or a nested Session.call's): its type
            return f"error: {exc.type}: {exc.message}"
        except Exception as exc:  # the function's failure is an answer the model can act on
            return f"error: {type(exc).__name__}: {exc}"
        if not isinstance(result, str):
            try:
                result = json.dumps(result, ensure_ascii=False, default=str)
            except (ValueError, TypeError, RecursionError) as exc:  # circular, tuple keys, too deep
                return f"error: {self.name}: the result has no JSON form ({exc})"
        return capped(result)


def capped(answer: str) -> str:
    """answer, or its first ANSWER_LIMIT bytes and a line saying how many more were left out."""
    data = answer.encode("utf-8", "surrogatepass")
    if len(data) <= ANSWER_LIMIT:
        return answer
    head = data[:ANSWER_LIMIT].decode("utf-8", "ignore")  # a character cut in two is left out
    more = len(data) - len(head.encode("utf-8", "surrogatepass"))
    return f"{head}\n[... {more} more bytes not sent: a tool's answer is at most {ANSWER_LIMIT} bytes]"


async def _awaited(awaitable: Any) -> Any:
    """What awaitable gives (asyncio.run takes a coroutine, not any awaitable)."""
    return await awaitable


def python_tool(fn: Any, name: str | None, builtin: Callable[[str], bool]) -> PythonTool:
    """fn as a tool named name (fn's __name__ by default); a SettingsError for what is no callable,
    a name models cannot call or that a built-in tool (builtin(name)) has, or a signature a model
    cannot call (its schema is built when the tool is first offered)."""
    if not callable(fn):
        raise SettingsError(f"tool: expected a callable, got a {type(fn).__name__}")
    tool_name = name if name is not None else getattr(fn, "__name__", None)
    if not isinstance(tool_name, str):
        raise SettingsError(f"tool: {fn!r} has no __name__; give the tool a name (name=...)")
    if not TOOL_NAME.fullmatch(tool_name):
        raise SettingsError(
            f"tool: the name {tool_name!r} is not a tool name (1 to 64 letters, digits, '_' or '-');"
            " give the tool a name (name=...)"
        )
    if builtin(tool_name):
        raise SettingsError(f"tool: {tool_name!r} is the name of a built-in tool; give another (name=...)")
    return PythonTool(tool_name, fn, FunctionArguments(fn, tool_name))
