"""The tool schema of a Python function (SPEC §10.4): the OpenAI function schema a user would
write by hand for litellm, and the check of the model's arguments against it.

Both are pydantic's: one model of the function's parameters (handler/pydantic_models.py) gives
the parameters' JSON Schema (each type as `TypeAdapter(hint).json_schema()` gives it: str →
string, list[X] → array of X, X | None → X or null, Literal → enum, a model class, a dataclass,
an Enum, a datetime..., its `$defs` at the parameters' top) and validates the arguments, so the
two always agree. A parameter without a default is required; one with a default shows it. The
tool's description is the docstring's first paragraph, a parameter's its docstring entry
(handler/docstrings.py) or the text of an `Annotated[X, "text"]` hint.

Registering a tool reads only the signature (a positional-only parameter, a hint that cannot be
read, or an Enum member in a Literal, which pydantic offers by its value but refuses back, is a
SettingsError then); pydantic builds the schema when a request first offers the tool (a type
it has no schema for is a SettingsError then, before anything is sent), so that a program that
sends nothing never imports it. The `$defs` stay: litellm inlines them for the providers that
want no `$ref` (Gemini, Bedrock).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..errors import SettingsError
from .docstrings import read_docstring
from .pydantic_models import ArgumentsModel

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# An MCP server's tools (SPEC §11.4), as a template's <tools> names them: `NAME/*` or `NAME/tool`.
_SERVER_TOOL = re.compile(r"[a-zA-Z0-9_-]{1,64}/(\*|[a-zA-Z0-9_-]{1,64})")
_JSON_SCALARS = (str, int, float, bool, type(None))


def is_tool_name(name: str) -> bool:
    """Whether a `<tools>` entry could name a tool at all (a name models can call, or a server's)."""
    return bool(TOOL_NAME.fullmatch(name) or _SERVER_TOOL.fullmatch(name))


@dataclass(frozen=True)
class Parameter:
    """One parameter a model passes by name: its type hint (Any when none), its default
    (inspect.Parameter.empty when it has none: required) and its description, when known."""

    name: str
    hint: Any
    default: Any
    description: str | None


class FunctionArguments:
    """What a model passes to a Python function: the parameters, read from the signature when
    the tool is registered; their schema and validator, built by pydantic when first needed."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        """fn's parameters as the tool name's; a SettingsError for a positional-only parameter or
        a hint that cannot be read."""
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as err:
            raise SettingsError(f"tool {name}: cannot read the signature of {fn!r}: {err}") from None
        hints = type_hints(fn, signature, name)
        self.name = name
        self.summary, described = read_docstring(inspect.getdoc(fn) or "")
        parameters: list[Parameter] = []
        for param in signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue  # nothing a model can name
            if param.kind is param.POSITIONAL_ONLY:
                where = f"tool {name}: parameter '{param.name}'"
                raise SettingsError(f"{where} is positional-only; a model passes arguments by name")
            hint = hints.get(param.name, Any)
            _check_literals(hint, f"tool {name}: parameter '{param.name}'")
            description = described.get(param.name) or _annotated_text(hint)
            parameters.append(Parameter(param.name, hint, param.default, description))
        self.parameters = tuple(parameters)
        self.takes_more = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        # a null for a parameter defaulting to None is that default: left out before the check
        self.nullable = frozenset(p.name for p in parameters if p.default is None)

    @cached_property
    def _model(self) -> ArgumentsModel:
        return ArgumentsModel(self.name, self.parameters, self.takes_more)

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema; a SettingsError for a type pydantic has no schema for."""
        function: dict[str, Any] = {"name": self.name}
        if self.summary:
            function["description"] = self.summary
        function["parameters"] = self._model.schema
        return {"type": "function", "function": function}

    def checked(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The keyword arguments to call the function with (each as its hint asks: a model
        instance, a tuple, an Enum member...) and no problems; or None and the violations."""
        given = {k: v for k, v in arguments.items() if v is not None or k not in self.nullable}
        return self._model.validated(given)


def _annotated_text(hint: Any) -> str | None:
    """The text of an `Annotated[X, "text"]` hint (its first string); None for another hint."""
    if typing.get_origin(hint) is typing.Annotated:
        return next((a for a in typing.get_args(hint)[1:] if isinstance(a, str)), None)
    return None


def _check_literals(hint: Any, where: str) -> None:
    """A SettingsError for a Literal value in hint that is no JSON value: an Enum member, which
    pydantic offers by its value but refuses back (the Enum type itself is fine)."""
    pending = [hint]
    while pending:
        hint = pending.pop()
        args = typing.get_args(hint)
        odd = (
            [a for a in args if type(a) not in _JSON_SCALARS]
            if typing.get_origin(hint) is typing.Literal
            else []
        )
        if odd:
            raise SettingsError(
                f"{where}: the Literal value {odd[0]!r} has no JSON form (list strings, numbers,"
                " booleans or None: Literal['red', 'blue'])"
            )
        if typing.get_origin(hint) is not typing.Literal:
            pending.extend(a for a in args if a is not Ellipsis)


def type_hints(fn: Callable[..., Any], signature: inspect.Signature, name: str) -> dict[str, Any]:
    """fn's parameters' type hints; a SettingsError when one names something unknown."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except TypeError:  # not a function (a partial, an object with __call__): the annotations as written
        return {p.name: p.annotation for p in signature.parameters.values() if p.annotation is not p.empty}
    except NameError as err:
        raise SettingsError(f"tool {name}: a type hint names something unknown: {err}") from None
    except Exception as err:  # a string hint that is no expression ("list["), or fails to evaluate
        raise SettingsError(f"tool {name}: a type hint cannot be read: {err}") from None
