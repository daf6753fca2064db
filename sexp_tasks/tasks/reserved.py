"""A task call's reserved parameters (SPEC §2.5, §10.2): files, context, model, subtype,
history_config, tools, generation.

Read and checked before anything is rendered or sent: a bad one fails the call as
`input_validation_failure` naming the parameter, like a bad input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config.model_chain import ModelChainError, model_chain
from ..generation import GenerationError, check_generation
from ..lang.values import Value, type_name
from .context import ContextError, parse_overrides
from .inputs import InputError
from .settings import Parsers, count, read_settings, strict_flag
from .template import SUBTYPES, ContextSettings, TaskTemplate


@dataclass(frozen=True)
class HistoryConfig:
    """Whether a call replays earlier exchanges of this session, how many, and whether it is kept."""

    use_history: bool = False
    max_exchanges: int = 5
    record: bool = True


@dataclass(frozen=True)
class CallOptions:
    """The reserved parameters of one call, checked."""

    models: tuple[str, ...]  # the call's model chain (SPEC §11.4); () when it names none
    tools: tuple[str, ...]
    files: tuple[str, ...]
    context: ContextSettings
    subtype: str
    history: HistoryConfig
    generation: dict[str, Any] = field(default_factory=dict)  # the call's own settings, checked


def read_options(template: TaskTemplate, reserved: dict[str, Value]) -> CallOptions:
    """The call's options; InputError naming the reserved parameter that is wrong."""
    models = _models(reserved.get("model"))
    tools = reserved.get("tools")
    tool_names = template.tools if tools is None else _names("tools", tools)
    files = () if reserved.get("files") is None else _names("files", reserved["files"])
    try:
        context = parse_overrides(reserved.get("context"))
    except ContextError as err:
        raise InputError("context", f"context: {err}") from None
    subtype = reserved.get("subtype")
    if subtype is None:
        subtype = template.subtype
    else:
        subtype = str(getattr(subtype, "name", subtype))
        if subtype not in SUBTYPES:
            raise InputError("subtype", f"subtype must be one of {', '.join(SUBTYPES)}, got {subtype!r}")
    try:
        generation = check_generation(reserved.get("generation"))
    except GenerationError as err:
        raise InputError("generation", str(err)) from None
    return CallOptions(
        models,
        tool_names,
        files,
        context,
        subtype,
        _history(reserved.get("history_config")),
        generation,
    )


def _models(value: Value) -> tuple[str, ...]:
    """A call's `model`: a string (models separated by commas) or a list of strings, a chain
    tried in order (SPEC §11.4); () when not given (or given as "", as before chains)."""
    if value is None or value == "":
        return ()
    if not isinstance(value, (str, list)):
        raise InputError("model", f"model must be a string or a list of strings, got {_kind(value)}")
    try:
        return model_chain(value)
    except ModelChainError as err:
        raise InputError("model", f"model: {err}") from None


def _names(parameter: str, value: Value) -> tuple[str, ...]:
    """A list of strings or symbols (one string alone is a list of one)."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) or hasattr(v, "name") for v in value):
        raise InputError(parameter, f"{parameter} must be a list of strings, got {_kind(value)}")
    return tuple(str(getattr(v, "name", v)) for v in value)


_HISTORY_SETTINGS: Parsers = {"use_history": strict_flag, "max_exchanges": count, "record": strict_flag}


def _history(value: Value) -> HistoryConfig:
    if value is None:
        return HistoryConfig()
    if not isinstance(value, (dict, list)):
        raise InputError("history_config", f"history_config must be a dict, got {_kind(value)}")
    try:
        settings = read_settings(value, _HISTORY_SETTINGS, "history_config", '(dict "use_history" true)')
    except ValueError as err:
        text = str(err)
        raise InputError(
            "history_config", text if "history_config" in text else f"history_config: {text}"
        ) from None
    return HistoryConfig(**settings)


def _kind(value: Value) -> str:
    return type_name(value)
