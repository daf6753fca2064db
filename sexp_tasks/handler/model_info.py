"""What litellm's model map says of a model — its input window, its output limit — read from the
map litellm ships, on disk, without importing litellm: a replayed or budget-checked run does not pay
seconds for the import (llm.py, litellm's one importer, asks litellm itself what the map lacks).
The map (megabytes of JSON) is read once per process: the first of a batch's threads to ask reads
it, the others wait for it."""

from __future__ import annotations

import json
import os
import threading
from functools import cache
from importlib.util import find_spec
from typing import Any

DEFAULT_INPUT_WINDOW = 100_000
DEFAULT_OUTPUT_LIMIT = 4096  # output tokens a call reserves against a budget when the model gives none
_map: dict[str, Any] | None = None  # the map, once read
_map_lock = threading.Lock()


def model_info(model: str) -> dict[str, Any]:
    """The map's entry for model (a mock/ model as openai/), by its full name or its bare one; {}
    when the map does not list it."""
    name = "openai/" + model.removeprefix("mock/") if model.startswith("mock/") else model
    models = model_map()
    found = models.get(name) or models.get(name.split("/", 1)[-1]) or {}
    return found if isinstance(found, dict) else {}


@cache
def input_window(model: str) -> int:
    """The model's input window in tokens from litellm's model info, 100,000 when unknown."""
    info = model_info(model)
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else DEFAULT_INPUT_WINDOW


@cache
def known_output_limit(model: str) -> int | None:
    """The most output tokens one call to model can give, as litellm's model info says; None when
    it does not say."""
    info = model_info(model)
    found = info.get("max_output_tokens") or info.get("max_tokens")
    return found if isinstance(found, int) and found > 0 else None


def output_limit(model: str) -> int:
    """known_output_limit, DEFAULT_OUTPUT_LIMIT when unknown: what a call without max_tokens
    reserves against a budget (cost.py)."""
    return known_output_limit(model) or DEFAULT_OUTPUT_LIMIT


def model_map() -> dict[str, Any]:
    """litellm's bundled model map, found on disk and read once per process (threads asking
    meanwhile wait for it); {} when it cannot be read."""
    global _map
    if _map is None:
        with _map_lock:
            if _map is None:
                _map = _read_map()
    return _map


def _read_map() -> dict[str, Any]:
    spec = find_spec("litellm")  # locates the package without running it
    for directory in (spec.submodule_search_locations or []) if spec else []:
        try:
            with open(os.path.join(directory, "model_prices_and_context_window_backup.json")) as file:
                found = json.load(file)
        except (OSError, ValueError):
            continue
        return found if isinstance(found, dict) else {}
    return {}
