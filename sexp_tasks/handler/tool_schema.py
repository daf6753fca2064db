"""The tool schema of a Python function (SPEC §10.4): the OpenAI function schema a user would
write by hand for litellm, derived from the signature's type hints and the docstring.

Types: str → string, int → integer, float → number, bool → boolean, list[X] (tuple, set) →
array of X, dict → object, X | None and Optional[X] → X's schema or null (X's alone for a
parameter whose default is None: a null there is the default), Literal[...] → enum, Any or no
hint → no type constraint, another union → anyOf, Annotated[X, "text"] → X described by text;
any other type pydantic's (a model class, a dataclass, an Enum, a datetime: handler/pydantic_models.py,
its `$defs` gathered at the parameters' top), the function then taking pydantic's value. A
parameter without a default is required. The description is the docstring's first paragraph;
each parameter's comes from its Args section (Google: `name (type): text`), its Parameters
section (NumPy: `name : type` over indented text) or `:param name: text` lines (Sphinx).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from ..errors import SettingsError
from .pydantic_models import hint_schema, is_model_class, model_schema

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# An MCP server's tools (SPEC §11.4), as a template's <tools> names them: `NAME/*` or `NAME/tool`.
_SERVER_TOOL = re.compile(r"[a-zA-Z0-9_-]{1,64}/(\*|[a-zA-Z0-9_-]{1,64})")
_SIMPLE: dict[Any, str] = {
    str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"
}  # fmt: skip
_ARRAYS = (list, tuple, set, frozenset)
_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_OTHER_SECTIONS = {
    "returns", "return", "yields", "raises", "examples", "example", "notes", "note",
    "see also", "attributes", "warnings", "references",
}  # fmt: skip


def is_tool_name(name: str) -> bool:
    """Whether a `<tools>` entry could name a tool at all (a name models can call, or a server's)."""
    return bool(TOOL_NAME.fullmatch(name) or _SERVER_TOOL.fullmatch(name))


def function_schema(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    """fn's tool schema under name; a SettingsError for a parameter no model could fill (positional
    only, or a type with no JSON form)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as err:
        raise SettingsError(f"tool {name}: cannot read the signature of {fn!r}: {err}") from None
    hints = type_hints(fn, signature, name)
    summary, described = read_docstring(inspect.getdoc(fn) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue  # nothing a model can name
        if param.kind is param.POSITIONAL_ONLY:
            raise SettingsError(
                f"tool {name}: parameter '{param.name}' is positional-only; a model passes arguments by name"
            )
        where = f"tool {name}: parameter '{param.name}'"
        hint = hints.get(param.name, inspect.Parameter.empty)
        # a null for a parameter defaulting to None is that default (left out before the call):
        # its schema is the type's without None; elsewhere None in a hint lets a model send null
        prop = type_schema(_without_none(hint) if param.default is None else hint, where)
        if param.name in described:
            prop["description"] = described[param.name]
        properties[param.name] = prop
        if param.default is param.empty:
            required.append(param.name)
    function: dict[str, Any] = {"name": name}
    if summary:
        function["description"] = summary
    function["parameters"] = {"type": "object", "properties": properties, "required": required}
    definitions = _hoisted_definitions(properties)
    if definitions:  # a pydantic model's "#/$defs/..." references resolve from the parameters
        function["parameters"]["$defs"] = definitions
    return {"type": "function", "function": function}


def _hoisted_definitions(properties: dict[str, Any]) -> dict[str, Any]:
    """The `$defs` of the pydantic models' schemas among properties, taken out of them (each model
    schema is a copy) to sit at the parameters' top, where their `#/$defs/Name` references point."""
    found: dict[str, Any] = {}
    pending: list[Any] = list(properties.values())
    while pending:
        schema = pending.pop()
        if isinstance(schema, dict):
            if isinstance(schema.get("$defs"), dict):
                found.update(schema.pop("$defs"))
            pending.extend(schema.values())
        elif isinstance(schema, list):
            pending.extend(schema)
    return found


def validated_by_pydantic(hint: Any) -> bool:
    """Whether a parameter's hint names, anywhere in it, a type whose schema pydantic gave (a
    model class, a dataclass, an Enum, a datetime...): the function takes the value pydantic
    makes of the JSON argument, not the JSON itself."""
    pending = [hint]
    while pending:
        hint = pending.pop()
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            pending.append(typing.get_args(hint)[0])
        elif origin is typing.Literal:
            continue
        elif origin is not None:
            pending.extend(a for a in typing.get_args(hint) if a is not Ellipsis)
        elif is_model_class(hint) or not (
            hint in (Any, inspect.Parameter.empty, dict) or hint in _SIMPLE or hint in _ARRAYS
        ):
            return True
    return False


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


def collection_type(hint: Any) -> type | None:
    """tuple, set or frozenset when hint asks for one (a JSON array arrives as a list); else None."""
    hint = _without_none(hint)
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    kind = typing.get_origin(hint) or hint
    return kind if kind in (tuple, set, frozenset) else None


def type_schema(hint: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one type hint; where names it in an error."""
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if is_model_class(hint):  # a pydantic model: its own schema ($defs hoisted by function_schema)
        return dict(model_schema(hint))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        schema = type_schema(args[0], where)
        texts = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": texts[0]} if texts else schema
    if origin is typing.Literal:
        odd = [a for a in args if type(a) not in _SIMPLE]  # an Enum member is no JSON value
        if odd:
            raise SettingsError(
                f"{where}: the Literal value {odd[0]!r} has no JSON form (list strings, numbers,"
                " booleans or None: Literal['red', 'blue'])"
            )
        kinds = {_SIMPLE.get(type(a)) for a in args}
        schema = {"type": kinds.pop()} if len(kinds) == 1 and None not in kinds else {}
        return {**schema, "enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:  # Optional[X]: X's schema, or null
            schema = type_schema(options[0], where)
            if set(schema) == {"type"} and isinstance(schema["type"], str):
                return {"type": [schema["type"], "null"]}
            return {"anyOf": [schema, {"type": "null"}]} if schema else schema
        return {"anyOf": [type_schema(a, where) for a in args]}
    if hint in _ARRAYS or origin in _ARRAYS:
        items = [a for a in args if a is not Ellipsis]
        if origin is tuple and len(items) > 1:
            return {"type": "array", "prefixItems": [type_schema(a, where) for a in items]}
        # OpenAI refuses an array schema without items: any JSON value when the hint says none
        return {"type": "array", "items": type_schema(items[0], where) if items else {}}
    if hint is dict or origin is dict:
        if len(args) == 2 and args[1] is not Any:
            return {"type": "object", "additionalProperties": type_schema(args[1], where)}
        return {"type": "object"}
    known = hint_schema(hint)  # what pydantic knows beyond these: a dataclass, an Enum, a datetime
    if known is not None:
        return known
    raise SettingsError(
        f"{where}: the type {getattr(hint, '__name__', hint)} has no JSON form "
        "(use str, int, float, bool, list, dict, Literal, Optional or Any)"
    )


def _without_none(hint: Any) -> Any:
    """hint without None: X for Optional[X] (Annotated kept), the other options of a union."""
    if typing.get_origin(hint) is typing.Annotated:
        args = typing.get_args(hint)
        return typing.Annotated[(_without_none(args[0]), *args[1:])]  # type: ignore[valid-type]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return options[0] if len(options) == 1 else typing.Union[tuple(options)]  # noqa: UP007
    return hint


def read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph (its lines joined) and each documented parameter's text."""
    lines = doc.expandtabs().splitlines()
    first: list[str] = []
    for line in lines:
        if not line.strip() or _section(line) or line.strip().startswith(":"):
            break
        first.append(line.strip())
    return " ".join(first), _google(lines) | _numpy(lines) | _sphinx(lines)


def _section(line: str) -> str | None:
    """The section a heading line opens (`Args:`), in lower case; None for another line."""
    text = line.strip()
    if text.endswith(":") and text[:-1].lower() in _SECTIONS | _OTHER_SECTIONS:
        return text[:-1].lower()
    return None


def _google(lines: list[str]) -> dict[str, str]:
    """`Args:` then `name (type): text` entries, a longer indent continuing an entry."""
    found: dict[str, str] = {}
    inside, indent, current = False, 0, ""
    for line in lines:
        heading = _section(line)
        if heading is not None:
            inside, indent, current = heading in _SECTIONS, 0, ""
            continue
        if not inside or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        entry = re.match(r"\s*\**(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
        if entry and (indent == 0 or depth <= indent):
            indent, current = depth, entry.group(1)
            found[current] = entry.group(3).strip()
        elif current and depth > indent:
            found[current] = f"{found[current]} {line.strip()}".strip()
        else:
            inside = False  # the section ended
    return found


def _numpy(lines: list[str]) -> dict[str, str]:
    """`Parameters` over a dashed line, then `name : type` lines over indented text."""
    found: dict[str, str] = {}
    inside, current = False, ""
    for index, line in enumerate(lines):
        underline = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if line.strip() and set(line.strip()) == {"-"}:
            continue
        if underline and set(underline) == {"-"}:
            inside, current = line.strip().lower() in _SECTIONS, ""
            continue
        if not inside or not line.strip():
            continue
        if not line[0].isspace():
            current = re.split(r"\s*:", line.strip(), maxsplit=1)[0].strip().lstrip("*")
            found[current] = ""
        elif current:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return {name: text for name, text in found.items() if text}


def _sphinx(lines: list[str]) -> dict[str, str]:
    """`:param name: text` (or `:param type name: text`), continued by indented lines."""
    found: dict[str, str] = {}
    current = ""
    for line in lines:
        entry = re.match(r"\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$", line)
        if entry:
            current = entry.group(1)
            found[current] = entry.group(2).strip()
        elif current and line.strip() and line[0].isspace() and not line.strip().startswith(":"):
            found[current] = f"{found[current]} {line.strip()}"
        else:
            current = ""
    return found
