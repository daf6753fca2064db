"""The one module that imports tiktoken: message token counts, offline (SPEC §1)."""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cache, lru_cache
from typing import Any


@cache
def _encoding() -> Any:
    """cl100k_base, loaded once per process from the copy litellm ships."""
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        package = list(spec.submodule_search_locations)[0]
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(package, "litellm_core_utils", "tokenizers")
    import tiktoken  # lazy (a start-up saving: cli/startup.py)

    return tiktoken.get_encoding("cl100k_base")


@lru_cache(maxsize=4096)
def count_text(text: str) -> int:
    """The number of tokens in text (cached: a run sends the same system prompts again and again)."""
    return count_output(text)


def count_output(text: str) -> int:
    """The number of tokens in text, not cached (a streamed answer's pieces: each is seen once, and
    would push the prompts out of count_text's cache)."""
    return len(_encoding().encode(text, disallowed_special=()))


@lru_cache(maxsize=64)
def model_counter(model: str) -> Any:
    """The model's own tokenizer, as a function of text to its token count, when tiktoken has it
    offline (OpenAI's models: o200k_base and cl100k_base ship with litellm); None for the others,
    whose tokens cl100k counts only roughly (far more for scripts other than Latin)."""
    _encoding()  # the offline cache directory set
    import tiktoken

    name = model.split("/", 1)[1] if model.startswith(("openai/", "azure/")) else model
    try:
        encoding = tiktoken.encoding_for_model(name)
    except (KeyError, ValueError):
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def count_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Tokens a chat request takes: each message's text and tool calls, the tool schemas, framing."""
    total = 3
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):  # content parts: texts counted, images and PDFs estimated
            total += 4 + sum(_part_tokens(part) for part in content)
        else:
            total += 4 + count_text(str(content or ""))
        for call in message.get("tool_calls") or []:
            total += count_text(json.dumps(call, sort_keys=True))
    if tools:
        total += count_text(json.dumps(tools, sort_keys=True))
    return total


# What an image or a PDF part counts for in the context check, before sending: the provider counts
# the real number (an image ~85 to 1,600 tokens by its size; a PDF its pages'), which the notes keep.
PART_TOKENS = {"image_url": 1_000, "file": 3_000}


def _part_tokens(part: Any) -> int:
    if isinstance(part, dict) and part.get("type") == "text":
        return count_text(str(part.get("text") or ""))
    return PART_TOKENS.get(str(part.get("type")) if isinstance(part, dict) else "", 1_000)
