"""Python functions offered to models as tools (SPEC §10.4, `Session.tool`): the registration,
and a call the tool loop makes: its arguments checked against the function's schema, its result
or exception the text the model reads."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SettingsError, SexpError
from .json_schema import violations
from .pydantic_models import validated
from .tool_schema import TOOL_NAME, collection_type, function_schema, type_hints, validated_by_pydantic

ANSWER_LIMIT = (
    1024 * 1024
)  # bytes of a Python tool's answer sent to the model (as script_output_limit's default)


@dataclass(frozen=True)
class PythonTool:
    """A Python function a template may list in `<tools>` by name, with its tool schema."""

    name: str
    fn: Callable[..., Any]
    schema: dict[str, Any]  # the OpenAI function schema sent in the request's `tools`
    takes_more: bool  # whether fn takes **kwargs (arguments its schema does not name)
    nullable: frozenset[str] = frozenset()  # parameters whose default is None: a null is left out
    collections: tuple[tuple[str, type], ...] = ()  # parameters typed tuple, set or frozenset
    # parameters whose hint pydantic gave the schema of (a model class, a dataclass, an Enum...),
    # with the hint: their values are what pydantic makes of the JSON arguments
    pydantic_hints: tuple[tuple[str, Any], ...] = ()

    def run(self, arguments: dict[str, Any]) -> str:
        """The answer the model reads: the result (a string as it is, else JSON), `error: ...`
        naming the arguments' violations (fn not called), or `error: <Type>: <message>` when
        fn raised."""
        arguments = {k: v for k, v in arguments.items() if v is not None or k not in self.nullable}
        parameters = self.schema["function"]["parameters"]
        if not self.takes_more:
            parameters = {**parameters, "additionalProperties": False}
        problems = violations(arguments, parameters)  # the arguments against the parameters' schema
        if problems:
            return f"error: {self.name}: invalid arguments: " + "; ".join(problems)
        for name, hint in self.pydantic_hints:  # a JSON argument as pydantic makes it: a model instance...
            if name in arguments:
                arguments[name], problems = validated(hint, arguments[name], name)
                if problems:
                    return f"error: {self.name}: invalid arguments: " + "; ".join(problems)
        try:
            for name, kind in self.collections:  # a JSON array as the tuple or set the hint asks for
                if isinstance(arguments.get(name), list):
                    arguments[name] = kind(arguments[name])  # a set of unhashable items: an error answer
            result = self.fn(**arguments)
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
    a name models cannot call or that a built-in tool (builtin(name)) has, or a signature with no schema."""
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
    schema = function_schema(fn, tool_name)
    parameters = inspect.signature(fn).parameters.values()
    takes_more = any(p.kind is p.VAR_KEYWORD for p in parameters)
    nullable = frozenset(p.name for p in parameters if p.default is None)
    hints = type_hints(fn, inspect.signature(fn), tool_name)
    kinds = ((name, collection_type(hint)) for name, hint in hints.items() if name != "return")
    collections = tuple((name, kind) for name, kind in kinds if kind is not None)
    by_pydantic = tuple(
        (name, hint) for name, hint in hints.items() if name != "return" and validated_by_pydantic(hint)
    )
    return PythonTool(tool_name, fn, schema, takes_more, nullable, collections, by_pydantic)
