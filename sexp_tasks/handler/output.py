"""The output protocol (SPEC §3.4): what the model is asked for, and how its answer is read."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..lang.values import parse_json_text
from ..xmltools import Answer, split_answer
from .contract import OutputSpec
from .json_schema import violations

_PLAIN = r"[^<&\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*"
_PLAIN_NOTE = re.compile(rf"<([A-Za-z_][\w.-]*)>({_PLAIN})</\1>")
_PLAIN_ANSWER = re.compile(
    rf"\s*<output>({_PLAIN})</output>\s*(?:<notes>((?:\s*<([A-Za-z_][\w.-]*)>{_PLAIN}</\3>)*)\s*</notes>\s*)?"
)
_KIND_TEXT = {
    "object": "a JSON object",
    "array": "a JSON array",
    "[]": "a JSON array",
    "string[]": "a JSON array of strings",
    "number": "a JSON number",
    "integer": "a JSON integer",
    "boolean": "a JSON boolean (true or false)",
    "string": "a JSON string",
}


def instructions(spec: OutputSpec, bare: bool = False) -> str | None:
    """The output instructions for the system message; None when the template manages its own.

    bare: the request carries the JSON Schema as response_format (SPEC §10.2), so the answer is
    the JSON itself, not wrapped in <output>/<notes> (a native JSON answer cannot be wrapped)."""
    if bare and spec.type == "json" and not spec.manual_xml:
        return _json_sentence(spec) + " Answer with the JSON only, without code fences."
    if spec.disable_reparsing or spec.manual_xml:
        return _json_sentence(spec) if spec.type == "json" else None
    parts = [
        "Put your answer inside <output>...</output>. After it, add "
        "<notes><data_usage>how you used the data you were given</data_usage></notes>.",
    ]
    if spec.type == "json":
        parts.append(_json_sentence(spec) + " Write the JSON directly inside <output>, without code fences.")
    return "\n".join(parts)


def _json_sentence(spec: OutputSpec) -> str:
    if spec.json_schema is not None:
        return "The output must be JSON valid against this JSON Schema: " + json.dumps(spec.json_schema)
    return f"The output must be {_KIND_TEXT.get(spec.schema or '', 'JSON')}."


@dataclass
class Reading:
    """What an answer gave: content, parsed content, notes, warnings, and any format violations."""

    content: str
    parsed: Any = None
    notes: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    violations: list[str] | None = None


def read_answer(text: str, spec: OutputSpec, bare: bool = False) -> Reading:
    """Split the answer leniently (unless reparsing is off), then parse and check JSON output.

    bare: the answer was asked for as bare JSON (response_format): the whole text is the
    content, without a warning, unless it still comes inside <output>."""
    reading = Reading(text)
    if bare and not text.lstrip().startswith("<output>"):
        pass
    elif not spec.disable_reparsing:
        answer = _plain_answer(text) or split_answer(text)
        if answer.output is not None:
            reading.content = answer.output
        reading.warnings = [
            f"{p}; the whole answer is taken as the content" if "output" in p else p for p in answer.problems
        ]
        reading.notes = _notes(answer.notes)
    if spec.type == "json":
        reading.parsed, reading.violations = check_json(reading.content, spec)
    return reading


def notes_cut_warning(text: str) -> str | None:
    """The warning an answer cut off at the output limit is accepted with when its <output>
    section is complete and only the <notes> trailer after it was cut (SPEC §11.1); else None."""
    answer = split_answer(text)
    if answer.output is None or answer.problems:
        return None
    return "the answer was cut off at max_tokens after its <output>: its <notes> are incomplete or missing"


def _plain_answer(text: str) -> Answer | None:
    """The split of a well-formed answer whose parts hold plain text, without an XML parser; else None.

    Plain means what lxml would give back unchanged: no markup, entities, CR or control characters
    inside the sections, so this reads exactly what split_answer reads, only faster."""
    match = _PLAIN_ANSWER.fullmatch(text)
    if match is None or "]]>" in text:
        return None
    notes = {tag: value.strip() for tag, value in _PLAIN_NOTE.findall(match.group(2) or "")}
    return Answer(match.group(1).strip("\n"), notes, [])


def _notes(raw: dict[str, Any]) -> dict[str, Any]:
    """The model's notes under the keys of SPEC §3.3 (data_usage → dataUsage, success as a bool)."""
    notes: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "data_usage":
            notes["dataUsage"] = value
        elif key == "success" and value.lower() in ("true", "false"):
            notes["success"] = value.lower() == "true"
        else:
            notes[key] = value
    return notes


def check_json(content: str, spec: OutputSpec) -> tuple[Any, list[str] | None]:
    """The parsed JSON and None, or (None | value, violations) when it is not JSON or breaks the schema."""
    text = strip_fence(content)
    if _nested_deeper_than(text, MAX_JSON_DEPTH):
        return None, [f"the output is not JSON that can be read: it nests more than {MAX_JSON_DEPTH} deep"]
    try:
        value = parse_json_text(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as err:
        return None, [f"the output is not JSON: {err.msg} at line {err.lineno} column {err.colno}"]
    except _NotFinite as err:
        return None, [f"the output is not JSON: {err} is not a JSON number (JSON has no NaN or Infinity)"]
    except RecursionError:
        return None, ["the output is not JSON that can be read: it is nested too deeply"]
    if spec.json_schema is not None:
        broken = violations(value, spec.json_schema)
        if not broken and spec.validate is not None:
            broken = spec.validate(value) or None
        return value, broken
    if spec.schema and not _matches_kind(value, spec.schema):
        return value, [
            f"the output must be {_KIND_TEXT.get(spec.schema, spec.schema)}, not {type_name(value)}"
        ]
    return value, None


# json's C reader and jsonschema recurse once per level: past the thread's C stack that is a crash,
# not an exception, whatever the recursion limit says. No answer worth reading nests this deep.
MAX_JSON_DEPTH = 500


def _nested_deeper_than(text: str, limit: int) -> bool:
    """Whether JSON text opens more than limit arrays or objects inside each other (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


class _NotFinite(ValueError):
    """NaN, Infinity or a number too large for a float: Python's json reads them, JSON has none."""


def _no_constant(name: str) -> Any:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def strip_fence(content: str) -> str:
    """The text inside a code fence around the whole content (```json ... ```), stripped; else content.

    The fence opens with ``` and an optional info word, and closes with the last ``` of the content.
    A scan, not a pattern: the answer is untrusted and this runs in time linear in it (SPEC §10.1)."""
    text = content.lstrip()
    if not text.startswith("```"):
        return content
    start = 3
    while start < len(text) and (text[start].isalnum() or text[start] in "_-"):
        start += 1  # the info word, e.g. json
    rest = text[start:].rstrip()
    return rest[:-3].strip() if rest.endswith("```") else content


def _matches_kind(value: Any, kind: str) -> bool:
    match kind:
        case "object":
            return isinstance(value, dict)
        case "array" | "[]":
            return isinstance(value, list)
        case "string[]":
            return isinstance(value, list) and all(isinstance(v, str) for v in value)
        case "number":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
        case "string":
            return isinstance(value, str)
    return True  # an unknown kind was refused when the template loaded


def type_name(value: Any) -> str:
    """The JSON name of a value's type."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
