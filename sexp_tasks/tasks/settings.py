"""Reading a call's settings dicts (`context`, `history_config`): each setting has a parser in a
table; keys may be snake_case, camelCase or symbols; an association list works like a dict."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")

# setting name -> parser(name, raw value) -> the checked value; raises ValueError with a message
Parsers = dict[str, Callable[[str, Any], Any]]


def name_of(value: Any) -> str:
    """A string, or a symbol's or keyword's name."""
    return str(getattr(value, "name", value))


def setting_key(raw: Any) -> str:
    """`inheritContext`, `inherit-context` and `inherit_context` all name inherit_context."""
    return _CAMEL.sub("_", name_of(raw)).lower().replace("-", "_")


def read_settings(value: Any, parsers: Parsers, what: str, example: str) -> dict[str, Any]:
    """The checked settings of a dict (or association list); ValueError naming what is wrong."""
    if isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
        value = {name_of(k): v for k, v in value}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a dict of settings, e.g. {example}")
    settings: dict[str, Any] = {}
    for raw_key, raw in value.items():
        key = setting_key(raw_key)
        parse = parsers.get(key)
        if parse is None:
            raise ValueError(f"unknown {what} setting '{name_of(raw_key)}' (settings: {', '.join(parsers)})")
        settings[key] = parse(key, raw)
    return settings


def choice(allowed: tuple[str, ...]) -> Callable[[str, Any], str]:
    """A parser accepting one of allowed (as a string or symbol)."""

    def parse(key: str, raw: Any) -> str:
        text = name_of(raw) if raw is not None else None
        if text not in allowed:
            raise ValueError(f"{key} must be one of {', '.join(allowed)}, got {text!r}")
        return text

    return parse


def flag(key: str, raw: Any) -> bool:
    """true/false (or enabled/disabled, yes/no as text)."""
    if isinstance(raw, bool):
        return raw
    text = name_of(raw).lower()
    if text in ("true", "enabled", "yes"):
        return True
    if text in ("false", "disabled", "no"):
        return False
    raise ValueError(f"{key} must be true or false, got {raw!r}")


def strict_flag(key: str, raw: Any) -> bool:
    """true or false only."""
    if not isinstance(raw, bool):
        raise ValueError(f"{key} must be true or false")
    return raw


def count(key: str, raw: Any) -> int:
    """A whole number ≥ 0."""
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 0:
        raise ValueError(f"{key} must be a whole number ≥ 0")
    return raw
