"""Pydantic model classes standing for JSON Schemas (SPEC §10.4, issue 21): a task call's
`output_type=Model`, and a Python tool's parameters (`Session.tool`) as one model that gives
their schema and validates the model's arguments.

pydantic's one importer (an import-linter contract). It is never imported to ask whether a
value is a model class: a program that made one has imported pydantic already, so a value is
one only when pydantic is in sys.modules — `import sexp_tasks` and a program that calls no
model stay without it.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Sequence
from typing import Any, Protocol

from ..errors import SettingsError

# The JSON Schema of each model class asked for, kept: one dict per class, so a task call's
# schema is checked once (the Task System remembers the schemas it found valid by id).
_SCHEMAS: dict[type, dict[str, Any]] = {}


def is_model_class(value: Any) -> bool:
    """Whether value is a pydantic BaseModel subclass (pydantic is not imported to tell)."""
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None)
    return isinstance(value, type) and base is not None and issubclass(value, base)


def model_schema(model: type) -> dict[str, Any]:
    """The model's JSON Schema (`model_json_schema()`), the same dict for every call."""
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = _SCHEMAS[model] = model.model_json_schema()  # type: ignore[attr-defined]
    return schema


def validated(model: Any, data: Any, name: str = "") -> tuple[Any, list[str]]:
    """data as the model class's instance (`model_validate`) and no problems; or None and the
    violations, each `where: message` (where starts with name, when given)."""
    import pydantic  # lazy: only a call that names a model class gets here

    try:
        return model.model_validate(data), []
    except pydantic.ValidationError as err:
        return None, _problems(err, name)


def violations_of(model: Any, data: Any) -> list[str]:
    """Where data breaks the model class (its fields and its validators), each `where: message`;
    [] when it does not (an OutputSpec's validate: its violations are repaired as a schema's)."""
    return validated(model, data)[1]


def _problems(err: Any, name: str = "", shown: bool = False) -> list[str]:
    """A pydantic ValidationError's violations, each `where: message` (where starts with name);
    when shown, a value that is there but wrong follows as `, got <its JSON>` (cut at 60)."""
    problems = []
    for error in err.errors():
        where = ".".join(str(part) for part in (name, *error.get("loc", ())) if part != "") or "(root)"
        got = ""
        if shown and error.get("type") not in ("missing", "extra_forbidden"):
            text = json.dumps(error.get("input"), ensure_ascii=False, default=repr)
            got = f", got {text if len(text) <= 60 else text[:57] + '...'}"
        problems.append(f"{where}: {error.get('msg', 'invalid')}{got}")
    return problems


class ToolParameter(Protocol):
    """A parameter of a Python tool (handler/tool_schema.py's Parameter)."""

    @property
    def name(self) -> str: ...
    @property
    def hint(self) -> Any: ...
    @property
    def default(self) -> Any: ...  # inspect.Parameter.empty: required
    @property
    def description(self) -> str | None: ...


class ArgumentsModel:
    """A Python tool's parameters as one pydantic model, built on first use (the tool is being
    offered): its JSON Schema is the tool's `parameters`, and it validates the model's
    arguments, so what is offered and what is accepted cannot differ. Each parameter is a field
    aliased by its name (a parameter may be called `json` or `model_config`); an argument the
    signature does not name is refused unless the function takes **kwargs."""

    def __init__(self, tool: str, parameters: Sequence[ToolParameter], takes_more: bool) -> None:
        """The model of parameters; a SettingsError naming a parameter whose type has no JSON form."""
        import pydantic  # lazy: a tool is offered to a model now

        self._names = {f"p{index}": param.name for index, param in enumerate(parameters)}
        fields: dict[str, Any] = {}
        for field_name, param in zip(self._names, parameters, strict=True):
            default = ... if param.default is inspect.Parameter.empty else param.default
            # given only when known: a description given as None would hide an Annotated Field's
            described: dict[str, Any] = {"description": param.description} if param.description else {}
            info = pydantic.Field(default, alias=param.name, **described)
            fields[field_name] = (param.hint, info)
        config = pydantic.ConfigDict(extra="allow" if takes_more else "forbid")
        try:
            self._model = pydantic.create_model("Arguments", __config__=config, **fields)
            self.schema = _tool_parameters(
                self._model.model_json_schema(schema_generator=_json_schema_generator())
            )
        except (pydantic.PydanticUserError, TypeError, ValueError, NameError) as err:
            raise _no_json_form(tool, parameters, err) from None

    def validated(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The function's keyword arguments made of the model's JSON arguments (a model instance,
        a dataclass, a tuple, an Enum member... as each hint asks; only those given, so the
        function's own defaults apply) and no problems; or None and the violations."""
        import pydantic  # lazy: only a tool that is being called gets here

        try:  # as JSON: an Enum by its value, a date by its text, as the schema says they are sent
            made = self._model.model_validate_json(json.dumps(arguments))
        except pydantic.ValidationError as err:
            return None, _problems(err, shown=True)
        given = {
            name: getattr(made, field)
            for field, name in self._names.items()
            if field in made.model_fields_set
        }
        return {**given, **(made.model_extra or {})}, []


def _tool_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The model's JSON Schema as a tool's parameters: without the titles pydantic makes of the
    model's and the parameters' names (nested models keep theirs), and without
    `additionalProperties` (what OpenAI wants only in strict mode, which tools are not sent in;
    the arguments are checked against it all the same), so that a tool of plain types is offered
    exactly as before and its recorded requests keep their fingerprints."""
    schema.pop("title", None)
    schema.pop("additionalProperties", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("required", [])
    _drop_open_objects(schema)
    return schema


def _drop_open_objects(node: Any) -> None:
    """Take out every `"additionalProperties": true` (a bare dict's): JSON Schema's default, which
    the hand-written schemas never said, so a tool with a dict parameter keeps its fingerprint."""
    if isinstance(node, dict):
        if node.get("additionalProperties") is True:
            del node["additionalProperties"]
        for value in node.values():
            _drop_open_objects(value)
    elif isinstance(node, list):
        for value in node:
            _drop_open_objects(value)


def _json_schema_generator() -> type:
    """pydantic's JSON Schema generator, quiet about a default with no JSON form (left out)."""
    from pydantic.json_schema import GenerateJsonSchema

    class ToolJsonSchema(GenerateJsonSchema):
        ignored_warning_kinds = {"skipped-choice", "non-serializable-default"}  # noqa: RUF012

    return ToolJsonSchema


def _no_json_form(tool: str, parameters: Sequence[ToolParameter], err: Exception) -> SettingsError:
    """The SettingsError for parameters pydantic could make no schema of: the first whose type
    has none named, with pydantic's reason."""
    import pydantic

    for param in parameters:
        try:
            pydantic.TypeAdapter(param.hint).json_schema()
        except (pydantic.PydanticUserError, TypeError, ValueError, NameError) as own:
            kind = getattr(param.hint, "__name__", param.hint)
            reason = str(own).splitlines()[0]
            if isinstance(own, pydantic.PydanticSchemaGenerationError):  # its advice is for its own models
                reason = (
                    "use str, int, float, bool, list, dict, Literal, a pydantic model, a dataclass or an Enum"
                )
            return SettingsError(
                f"tool {tool}: parameter '{param.name}': the type {kind} has no JSON form ({reason})"
            )
    return SettingsError(f"tool {tool}: its parameters have no JSON Schema ({str(err).splitlines()[0]})")
