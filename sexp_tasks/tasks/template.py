"""Atomic task templates (SPEC §3.1): validated once, at load time, into typed objects."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config.model_chain import ModelChainError, model_chain
from ..errors import Source, Span, TemplateError
from ..generation import GenerationError, from_texts
from ..handler.json_schema import schema_problem
from ..handler.tool_schema import is_tool_name
from ..xmltools import XmlNode, parse_template_document

# image and file: a workspace path or an http(s) URL, sent as a content part (handler/attachments.py)
INPUT_TYPES = ("string", "integer", "number", "boolean", "array", "object", "any", "image", "file")
ATTACHMENT_TYPES = ("image", "file")
TYPE_ALIASES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}
NATIVE_MODES = ("auto", "always", "never")  # <output_format native="...">
SUBTYPES = ("standard", "subtask", "director", "evaluator")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_\-]*)((?:\.[A-Za-z0-9_\-]+)*)\s*\}\}")


@dataclass(frozen=True)
class InputSpec:
    """A declared input: its type, whether it is required, and its default (as written)."""

    name: str
    type: str = "any"
    required: bool = True
    default: str | None = None
    description: str = ""


@dataclass(frozen=True)
class OutputFormat:
    """text, or json with a schema kind (object, array, string[] ...) or a JSON Schema."""

    type: str = "text"
    schema: str | None = None
    json_schema: dict[str, Any] | None = None
    native: str = "auto"  # response_format with the JSON Schema: auto | always | never (SPEC §10.2)
    retries: int = 0  # repair messages after an answer that fails the format
    # response_format's "strict" (SPEC §11.1): None sends it when the schema can be strict
    strict: bool | None = None
    # A check after the schema's, its violations repaired as the schema's are: a pydantic model's
    # validators, for one Session.call's output_type (api/typed.py); never from a template's XML.
    validate: Callable[[Any], list[str]] | None = field(default=None, repr=False, compare=False)

    def options(self) -> str:
        """`, native always, strict true, retries 2` for the settings not at their defaults; else ``."""
        native = f", native {self.native}" if self.native != "auto" else ""
        strict = "" if self.strict is None else f", strict {str(self.strict).lower()}"
        return native + strict + (f", retries {self.retries}" if self.retries else "")


@dataclass(frozen=True)
class ContextSettings:
    """A template's or a call's context-management overrides; None leaves the default."""

    inherit_context: str | None = None
    accumulate_data: bool | None = None
    accumulation_format: str | None = None
    fresh_context: str | None = None


@dataclass(frozen=True)
class FilePaths:
    """Where a task's files come from."""

    source: str = "literal"
    paths: tuple[str, ...] = ()
    command: str | None = None
    description: str | None = None
    context_query: str | None = None


@dataclass(frozen=True)
class TaskTemplate:
    """One atomic task, ready to render and run."""

    name: str
    description: str
    instructions: str
    subtype: str = "standard"
    system: str | None = None
    provider: str | None = None
    models: tuple[str, ...] = ()  # its <model>s: a chain, tried in order (SPEC §11.4); () for none
    inputs: tuple[InputSpec, ...] = ()
    output_format: OutputFormat = OutputFormat()
    context: ContextSettings = ContextSettings()
    file_paths: FilePaths | None = None
    manual_xml: bool = False
    disable_reparsing: bool = False
    criteria: str | None = None
    tools: tuple[str, ...] = ()
    limits: dict[str, float] = field(default_factory=dict)
    # <generation> settings (temperature, max_tokens, stop...), as sent; a call's own win per key
    generation: dict[str, Any] = field(default_factory=dict)
    origin: str = "<builtin>"
    span: Span | None = field(default=None, compare=False)

    def input(self, name: str) -> InputSpec | None:
        return next((i for i in self.inputs if i.name == name), None)

    def describe(self) -> str:
        """The template in full, as `sexp tasks show` and the REPL's `:show` print it."""
        lines = [
            f"task {self.name} ({self.subtype})  from {self.origin}",
            f"  description: {self.description}",
        ]
        if self.models:
            lines.append(f"  model: {', '.join(self.models)}")
        for spec in self.inputs:
            optional = "" if spec.required else f" (optional, default {spec.default!r})"
            lines.append(f"  input {spec.name}: {spec.type}{optional}  {spec.description}".rstrip())
        out = self.output_format
        schema = (f" {out.schema}" if out.schema else "") + (" (JSON Schema)" if out.json_schema else "")
        lines.append(f"  output: {out.type}{schema}{out.options()}")
        if self.tools:
            lines.append(f"  tools: {' '.join(self.tools)}")
        lines.append("  instructions:")
        lines += [f"    {line}" for line in self.instructions.splitlines()]
        return "\n".join(lines)


def check_rules(template: TaskTemplate) -> None:
    """The rules XSD 1.0 cannot state; VALIDATION_ERROR like a schema violation."""
    context = template.context
    # Fresh context cannot be combined with the caller's whole context; with the relevant part
    # of it (subset) it can: that is the subtask default (SPEC §3.1, §10.1).
    if context.fresh_context == "enabled" and context.inherit_context == "full":
        raise TemplateError(
            "VALIDATION_ERROR",
            f"task '{template.name}': fresh_context enabled cannot be combined with inherit_context full",
            template.span,
        )
    declared = {i.name for i in template.inputs}
    for text in (template.instructions, template.system or ""):
        for match in PLACEHOLDER.finditer(text):
            if match.group(1) not in declared:
                raise TemplateError(
                    "VALIDATION_ERROR",
                    f"task '{template.name}': {{{{{match.group(1)}}}}} is not a declared input"
                    + (
                        f" (declared: {', '.join(sorted(declared))})"
                        if declared
                        else " (it declares no inputs)"
                    ),
                    template.span,
                )


def check_json_schema(template: TaskTemplate) -> None:
    """A VALIDATION_ERROR naming the template when its <json_schema> is JSON but no JSON Schema
    answers can be checked against: too deep, not a schema, a $ref that does not resolve inside it
    or that loops (handler/json_schema.py). Not done when the template loads: it needs jsonschema,
    which a start leaves out; a task's first call does it, before any request, and
    `sexp tasks validate`."""
    schema = template.output_format.json_schema
    problem = None if schema is None else schema_problem(schema)
    if problem is not None:
        message = f"task '{template.name}': its json_schema is not a JSON Schema: {problem}"
        raise TemplateError("VALIDATION_ERROR", message, template.span)


def load_templates(text: str, origin: str) -> list[TaskTemplate]:
    """The templates of one XML file (a <task>, or several in <tasks>), validated."""
    nodes, source = parse_template_document(text, origin)
    templates = [_template(node, source, origin) for node in nodes]
    for template in templates:
        check_rules(template)
    return templates


def _template(node: XmlNode, source: Source, origin: str) -> TaskTemplate:
    span = Span((source, node.line, 1))
    name = node.attributes["name"]

    def single(tag: str, required: bool = False) -> str | None:
        found = node.all(tag)
        if len(found) > 1:
            raise TemplateError("VALIDATION_ERROR", f"task '{name}': <{tag}> appears more than once", span)
        if not found:
            if required:
                raise TemplateError("VALIDATION_ERROR", f"task '{name}': missing <{tag}>", span)
            return None
        return found[0].text.strip()

    tools, limits = node.child("tools"), node.child("limits")
    return TaskTemplate(
        name=name,
        subtype=node.attributes.get("subtype", "standard"),
        description=single("description", required=True) or "",
        instructions=single("instructions", required=True) or "",
        system=single("system"),
        provider=single("provider"),
        models=_models(node, name, span),
        inputs=tuple(_inputs(node.child("inputs"))),
        output_format=_output_format(node.child("output_format"), name, span),
        context=_context(node.child("context_management")),
        file_paths=_file_paths(node.child("file_paths")),
        manual_xml=_boolean(single("manual_xml")),
        disable_reparsing=_boolean(single("disable_reparsing")),
        criteria=single("criteria"),
        tools=_tools(tools, name, span),
        limits={k: float(v) for k, v in limits.attributes.items()} if limits else {},
        generation=_generation(node.child("generation"), name, span),
        origin=origin,
        span=span,
    )


def _models(node: XmlNode, name: str, span: Span) -> tuple[str, ...]:
    """The chain its <model>s name, in order (one may also name several, separated by commas);
    a VALIDATION_ERROR for an empty one."""
    texts = [model.text for model in node.all("model")]
    if not texts:
        return ()
    try:
        return model_chain(texts)
    except ModelChainError as err:
        raise TemplateError("VALIDATION_ERROR", f"task '{name}': <model>: {err}", span) from None


def _tools(node: XmlNode | None, name: str, span: Span) -> tuple[str, ...]:
    """The names <tools> lists; a VALIDATION_ERROR for one that can name no tool (which tools
    exist is known only where the template is used: tasks/procedure_tools.py)."""
    names = tuple(tool.text.strip() for tool in node.all("tool")) if node else ()
    for tool in names:
        if not is_tool_name(tool):
            raise TemplateError(
                "VALIDATION_ERROR",
                f"task '{name}': <tool>{tool}</tool> can name no tool (a tool's name is 1 to 64 letters,"
                " digits, '_' or '-'; a server's tools are NAME/tool or NAME/*)",
                span,
            )
    return names


def _generation(node: XmlNode | None, name: str, span: Span) -> dict[str, Any]:
    if node is None:
        return {}
    try:
        return from_texts([(c.tag, c.text) for c in node.children], f"task '{name}': <generation>")
    except GenerationError as err:
        raise TemplateError("VALIDATION_ERROR", str(err), span) from None


def _boolean(text: str | None) -> bool:
    return text is not None and text.strip() in ("true", "1")


def _inputs(node: XmlNode | None) -> list[InputSpec]:
    if node is None:
        return []
    specs = []
    for child in node.all("input"):
        default = child.attributes.get("default")
        required_attr = child.attributes.get("required")
        required = _boolean(required_attr) if required_attr is not None else default is None
        specs.append(
            InputSpec(
                child.attributes["name"],
                child.attributes.get("type", "any"),
                required,
                default,
                child.text.strip(),
            )
        )
    return specs


def _output_format(node: XmlNode | None, name: str, span: Span) -> OutputFormat:
    """The output format; a <json_schema> that is JSON but no JSON Schema is refused when the task
    is first called (TaskSystem.prepare): checking it needs jsonschema, which a start leaves out."""
    if node is None:
        return OutputFormat()
    schema_node = node.child("json_schema")
    json_schema = None
    if schema_node is not None:
        try:
            json_schema = json.loads(schema_node.text)
        except json.JSONDecodeError as err:
            raise TemplateError(
                "VALIDATION_ERROR", f"task '{name}': <json_schema> is not JSON: {err.msg}", span
            ) from None
    return OutputFormat(
        node.attributes["type"],
        node.attributes.get("schema"),
        json_schema,
        node.attributes.get("native", "auto"),
        int(node.attributes.get("retries", "0")),  # the XSD checked it is a non-negative integer
        None if "strict" not in node.attributes else _boolean(node.attributes["strict"]),
    )


def _context(node: XmlNode | None) -> ContextSettings:
    if node is None:
        return ContextSettings()

    def text(tag: str) -> str | None:
        child = node.child(tag)
        return child.text.strip() if child is not None else None

    accumulate = text("accumulate_data")
    return ContextSettings(
        inherit_context=text("inherit_context"),
        accumulate_data=None if accumulate is None else _boolean(accumulate),
        accumulation_format=text("accumulation_format"),
        fresh_context=text("fresh_context"),
    )


def _file_paths(node: XmlNode | None) -> FilePaths | None:
    if node is None:
        return None

    def text(tag: str) -> str | None:
        child = node.child(tag)
        return child.text.strip() if child is not None else None

    return FilePaths(
        source=node.attributes.get("source", "literal"),
        paths=tuple(p.text.strip() for p in node.all("path")),
        command=text("command"),
        description=text("description"),
        context_query=text("context_query"),
    )
