"""Generation settings (SPEC §10.2): temperature, max_tokens, stop... from a template's
`<generation>`, a defatom's `(generation ...)`, a call's reserved `generation` dict and
sexp.toml's `[generation]` table; per key the call wins over the template, the template over
sexp.toml. Each set key is sent under its OpenAI name (handler/request.py); unset keys are not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NUMBER, INTEGER, STRINGS, STRING = "a number", "an integer", "a list of strings", "a non-empty string"
POSITIVE = "a positive integer"

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
}


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
        merged.update({key: value for key, value in layer.items() if value is not None})
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
                settings[key] = float(text)
            elif kind in (INTEGER, POSITIVE):
                settings[key] = _value(key, kind, int(text), where)
            elif kind == STRINGS:
                settings.setdefault(key, []).append(text)
            else:
                settings[key] = _value(key, kind, text.strip(), where)
        except ValueError:
            raise GenerationError(key, f"{where}: {key} must be {kind}, got {text!r}") from None
    return settings


def _value(key: str, kind: str, value: Any, where: str) -> Any:
    value = getattr(value, "name", value) if kind == STRING else value
    ok = {
        NUMBER: isinstance(value, (int, float)) and not isinstance(value, bool),
        INTEGER: isinstance(value, int) and not isinstance(value, bool),
        POSITIVE: isinstance(value, int) and not isinstance(value, bool) and value > 0,
        STRING: isinstance(value, str) and bool(value.strip()),
        STRINGS: isinstance(value, str)
        or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)),
    }[kind]
    if not ok:
        out_of_range = kind == POSITIVE and isinstance(value, int) and not isinstance(value, bool)
        got = value if out_of_range else _kind(value)
        raise GenerationError(key, f"{where}: {key} must be {kind}, got {got} (known: {_known()})")
    if kind == STRINGS:
        return [value] if isinstance(value, str) else list(value)
    return value


def _kind(value: Any) -> str:
    if isinstance(value, str) and not value.strip():
        return "an empty string"
    return {bool: "a boolean", str: "a string", int: "an integer", float: "a number"}.get(
        type(value), "a list" if isinstance(value, (list, tuple)) else type(value).__name__
    )


def _known() -> str:
    return ", ".join(GENERATION_KEYS)
