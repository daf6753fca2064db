"""The template `(defatom name clauses...)` defines: what defatom registers when it runs, and
what `sexp check` checks calls of it against."""

from __future__ import annotations

import json
from typing import Any

from ...config.model_chain import ModelChainError, model_chain
from ...errors import FormError
from ...generation import GenerationError, check_generation
from ...lang.printer import to_repr
from ...lang.quoting import datum
from ...syntax.nodes import DictNode, FunctionCallNode, Keyword, ListNode, Literal, Node, Symbol, elements
from ..template import (
    INPUT_TYPES,
    NATIVE_MODES,
    TYPE_ALIASES,
    ContextSettings,
    InputSpec,
    OutputFormat,
    TaskTemplate,
    check_rules,
)

NAME = "defatom"  # the form's name: where it registers (task_calls.py), and what the checks look for
USAGE = f'{NAME}: expected ({NAME} name (params ...) (instructions "...") ...)'
_TEXT_CLAUSES = ("instructions", "description", "system", "subtype", "provider", "criteria")


def defatom_template(form: FunctionCallNode) -> TaskTemplate:
    """The template `(defatom name clauses...)` defines, checked as an XML template is (what
    defatom registers when it runs, and what `sexp check` checks calls against)."""
    name = form.args[0]
    if not isinstance(name, Symbol):
        raise FormError(USAGE, form.span)
    template = _template(name.name, form.args[1:], form)
    check_rules(template)
    return template


def _template(name: str, clauses: tuple[Node, ...], form: FunctionCallNode) -> TaskTemplate:
    values: dict[str, Any] = {"description": f"Dynamically defined task: {name}"}
    inputs: list[InputSpec] = []
    for clause in clauses:
        if not isinstance(clause, FunctionCallNode):
            raise FormError(
                f'defatom {name}: expected a clause such as (instructions "..."), got {_show(clause)}',
                clause.span or form.span,
            )
        key, parts = clause.name, clause.args
        if key in _TEXT_CLAUSES:
            values[key] = _text(name, key, parts, clause)
        elif key == "model":
            values["models"] = _models(name, parts, clause)
        elif key == "params":
            for param in parts:
                if isinstance(param, Symbol):
                    inputs.append(InputSpec(param.name))
                elif isinstance(param, FunctionCallNode) and len(param.args) == 1:
                    kind = _word(param.args[0])
                    kind = TYPE_ALIASES.get(kind, kind)
                    if kind not in INPUT_TYPES:
                        known = ", ".join(INPUT_TYPES)
                        raise FormError(
                            f"defatom {name}: ({param.name} {kind}): unknown type (known: {known})",
                            param.span,
                        )
                    inputs.append(InputSpec(param.name, kind))
                else:
                    raise FormError(
                        f"defatom {name}: a parameter is name or (name type), got {_show(param)}", clause.span
                    )
        elif key == "output_format":
            settings = _settings(parts if not _is_nested(parts) else elements(parts[0]) or (), name, clause)
            values["output_format"] = _output_format(settings, name, clause)
        elif key == "context":
            settings = _settings(parts, name, clause)
            accumulate = settings.get("accumulate_data")
            values["context"] = ContextSettings(
                settings.get("inherit_context"),
                None if accumulate is None else str(accumulate).lower() == "true",
                settings.get("accumulation_format"),
                settings.get("fresh_context"),
            )
        elif key == "tools":
            values["tools"] = tuple(_word(p) for p in parts)
        elif key == "generation":
            values["generation"] = _generation(parts, name, clause)
        else:
            raise FormError(f"defatom {name}: unknown clause ({key} ...)", clause.span)
    if "instructions" not in values:
        raise FormError(f'defatom {name}: missing (instructions "...")', form.span)
    return TaskTemplate(
        name=name,
        inputs=tuple(inputs),
        origin=form.span.origin if form.span else "<defatom>",
        span=form.span,
        **values,
    )


def _is_nested(parts: tuple[Node, ...]) -> bool:
    return len(parts) == 1 and isinstance(parts[0], ListNode)


def _settings(parts: tuple[Node, ...] | list[Node], name: str, clause: FunctionCallNode) -> dict[str, str]:
    settings: dict[str, str] = {}
    for part in parts:
        if not (isinstance(part, FunctionCallNode) and len(part.args) == 1):
            raise FormError(f'defatom {name}: expected (key "value") in ({clause.name} ...)', clause.span)
        settings[part.name] = _word(part.args[0])
    return settings


_OUTPUT_KEYS = ("type", "schema", "json_schema", "native", "retries", "strict")


def _output_format(settings: dict[str, str], name: str, clause: FunctionCallNode) -> OutputFormat:
    """`(output_format (type "json") (json_schema "{...}") (native "always") (retries 2)
    (strict "true"))`, each value checked as the XSD checks a template's (SPEC §10.2, §11.1)."""
    where = f"defatom {name}: (output_format ...)"
    for key in settings:
        if key not in _OUTPUT_KEYS:
            raise FormError(f"{where}: unknown key {key!r} (known: {', '.join(_OUTPUT_KEYS)})", clause.span)
    kind, native, retries = (
        settings.get("type", "text"),
        settings.get("native", "auto"),
        settings.get("retries", "0"),
    )
    if kind not in ("text", "json"):
        raise FormError(f'{where}: type is "text" or "json", not {kind!r}', clause.span)
    if native not in NATIVE_MODES:
        raise FormError(f"{where}: native is one of {', '.join(NATIVE_MODES)}, not {native!r}", clause.span)
    if not (retries.isascii() and retries.isdigit()):
        raise FormError(f"{where}: retries is a non-negative integer, not {retries!r}", clause.span)
    strict = settings.get("strict")
    if strict not in (None, "true", "false"):
        raise FormError(f'{where}: strict is "true" or "false", not {strict!r}', clause.span)
    json_schema = None
    if "json_schema" in settings:
        try:
            json_schema = json.loads(settings["json_schema"])
        except json.JSONDecodeError as err:
            raise FormError(f"{where}: json_schema is not JSON: {err.msg}", clause.span) from None
        if not isinstance(json_schema, dict):
            raise FormError(f"{where}: json_schema must be a JSON object", clause.span)
    forced = None if strict is None else strict == "true"
    return OutputFormat(kind, settings.get("schema"), json_schema, native, int(retries), forced)


def _generation(parts: tuple[Node, ...], name: str, clause: FunctionCallNode) -> dict[str, Any]:
    """`(generation (temperature 0.2) (max_tokens 300) (stop "a" "b"))`, checked (SPEC §10.2)."""
    settings: dict[str, Any] = {}
    for part in parts:
        if not (isinstance(part, FunctionCallNode) and part.args):
            raise FormError(f"defatom {name}: expected (key value) in (generation ...)", clause.span)
        given = [_value(arg) for arg in part.args]
        settings[part.name] = given if part.name == "stop" else given[0] if len(given) == 1 else given
    try:
        return check_generation(settings, f"defatom {name}: (generation ...)")
    except GenerationError as err:
        raise FormError(str(err), clause.span) from None


def _value(node: Node) -> Any:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, DictNode):  # (extra {"top_k" 40})
        return datum(node)
    return _word(node)


def _text(name: str, key: str, parts: tuple[Node, ...], clause: FunctionCallNode) -> str:
    if len(parts) == 1 and isinstance(parts[0], Literal) and isinstance(parts[0].value, str):
        return parts[0].value
    raise FormError(f"defatom {name}: ({key} ...) takes one string", clause.span)


def _models(name: str, parts: tuple[Node, ...], clause: FunctionCallNode) -> tuple[str, ...]:
    """`(model "a" "b")`: the chain of models tried in order (SPEC §11.4); one string may also
    name several, separated by commas."""
    texts = [part.value for part in parts if isinstance(part, Literal) and isinstance(part.value, str)]
    if not parts or len(texts) < len(parts):
        raise FormError(f"defatom {name}: (model ...) takes one or more strings", clause.span)
    try:
        return model_chain(texts)
    except ModelChainError as err:
        raise FormError(f"defatom {name}: (model ...): {err}", clause.span) from None


def _word(node: Node) -> str:
    if isinstance(node, (Symbol, Keyword)):
        return node.name
    if isinstance(node, Literal):
        return str(node.value).lower() if isinstance(node.value, bool) else str(node.value)
    raise FormError(f"expected a name or a string, got {_show(node)}", getattr(node, "span", None))


def _show(node: Node) -> str:
    return to_repr(datum(node))
