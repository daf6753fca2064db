"""Generation settings (SPEC §10.2, §11.1): temperature, max_tokens, stop... from a template's
`<generation>`, a defatom's `(generation ...)`, a call's reserved `generation` dict and
sexp.toml's `[generation]` table; per key the call wins over the template, the template over
sexp.toml. Each set key is sent under its OpenAI name (handler/model_request.py); unset keys are not.
`extra` is a dict of settings sent to the provider as they are (`top_k`, `logprobs`,
Anthropic's `thinking` ...), merged key by key like the others.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

NUMBER, INTEGER, STRINGS, STRING = "a number", "an integer", "a list of strings", "a non-empty string"
POSITIVE = "a positive integer"
EXTRA = "a dict (in a template, a JSON object)"

# Each known key and the kind of value it takes.
GENERATION_KEYS: dict[str, str] = {
    "temperature": NUMBER,
    "top_p": NUMBER,
    "max_tokens": POSITIVE,
    "seed": INTEGER,
    "stop": STRINGS,
    "presence_penalty": NUMBER,
    "frequency_penalty": NUMBER,
    "reasoning_effort": STRING,
    "extra": EXTRA,
}

# What `extra` may not set: the request's own parts, and where it goes.
_NOT_EXTRA = frozenset(
    ("model", "messages", "tools", "response_format", "api_key", "api_base", "base_url", "timeout")
)


class GenerationError(ValueError):
    """A generation setting that is unknown or of the wrong type; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def check_generation(settings: Any, where: str = "generation") -> dict[str, Any]:
    """The settings as sent (`stop` always a list); GenerationError naming the first unknown key
    or wrongly typed value, and the known keys."""
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise GenerationError(where, f"{where} must be a dict of settings ({_known()})")
    checked: dict[str, Any] = {}
    for raw_key, value in settings.items():
        key = str(getattr(raw_key, "name", raw_key))
        kind = GENERATION_KEYS.get(key)
        if kind is None:
            raise GenerationError(key, f"{where}: unknown setting '{key}' (known: {_known()})")
        checked[key] = _value(key, kind, value, where)
    return checked


def merge_generation(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Per key, the last layer that sets it wins (pass sexp.toml, template, call)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "extra" and value:
                merged[key] = {**merged.get(key, {}), **value}
            elif value is not None and key != "extra":
                merged[key] = value
    return {key: merged[key] for key in GENERATION_KEYS if key in merged}


def from_texts(pairs: list[tuple[str, str]], where: str) -> dict[str, Any]:
    """Settings written as text (a template's `<generation>` children, in order): numbers and
    integers parsed, each `<stop>` adding one stop sequence."""
    settings: dict[str, Any] = {}
    for key, text in pairs:
        kind = GENERATION_KEYS.get(key)
        if kind is None:
            raise GenerationError(key, f"{where}: unknown setting '{key}' (known: {_known()})")
        try:
            if kind == NUMBER:
                settings[key] = _value(key, kind, float(text), where)
            elif kind == EXTRA:
                settings[key] = _extra(json.loads(text), where)
            elif kind in (INTEGER, POSITIVE):
                settings[key] = _value(key, kind, int(text), where)
            elif kind == STRINGS:
                settings.setdefault(key, []).append(text)
            else:
                settings[key] = _value(key, kind, text.strip(), where)
        except ValueError as err:
            if isinstance(err, GenerationError):
                raise
            raise GenerationError(key, f"{where}: {key} must be {kind}, got {text!r}") from None
    return settings


def _value(key: str, kind: str, value: Any, where: str) -> Any:
    if kind == EXTRA:
        return _extra(value, where)
    value = getattr(value, "name", value) if kind == STRING else value
    ok = {
        NUMBER: isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
        INTEGER: isinstance(value, int) and not isinstance(value, bool),
        POSITIVE: isinstance(value, int) and not isinstance(value, bool) and value > 0,
        STRING: isinstance(value, str) and bool(value.strip()),
        STRINGS: isinstance(value, str)
        or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)),
    }[kind]
    if not ok:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        out_of_range = number and (kind == NUMBER or (kind == POSITIVE and isinstance(value, int)))
        got = value if out_of_range else _kind(value)
        kind = "a finite number" if kind == NUMBER and out_of_range else kind
        raise GenerationError(key, f"{where}: {key} must be {kind}, got {got} (known: {_known()})")
    if kind == STRINGS:
        return [value] if isinstance(value, str) else list(value)
    return value


def _extra(value: Any, where: str) -> dict[str, Any]:
    """`extra` as sent: a dict of string keys to JSON values (symbols as their names)."""
    if not isinstance(value, dict):
        raise GenerationError("extra", f"{where}: extra must be {EXTRA}, got {_kind(value)}")
    extra = {str(getattr(key, "name", key)): _json(item, f"{where}: extra") for key, item in value.items()}
    refused = sorted(_NOT_EXTRA & set(extra))
    if refused:
        raise GenerationError("extra", f"{where}: extra may not set '{refused[0]}'")
    return extra


def _json(value: Any, where: str) -> Any:
    """value as JSON data; a GenerationError for what JSON cannot hold (NaN, a procedure ...)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise GenerationError("extra", f"{where}: {value} is not a finite number")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "name") and type(value).__name__ in ("Symbol", "Keyword"):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_json(item, where) for item in value]
    if isinstance(value, dict):
        return {str(getattr(key, "name", key)): _json(item, where) for key, item in value.items()}
    raise GenerationError("extra", f"{where}: a {type(value).__name__} cannot be sent as JSON")


def _kind(value: Any) -> str:
    if isinstance(value, str) and not value.strip():
        return "an empty string"
    return {bool: "a boolean", str: "a string", int: "an integer", float: "a number"}.get(
        type(value), "a list" if isinstance(value, (list, tuple)) else type(value).__name__
    )


def _known() -> str:
    return ", ".join(GENERATION_KEYS)
