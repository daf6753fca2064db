"""The one module that imports tiktoken: message token counts, offline (SPEC §1)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from functools import cache, lru_cache
from typing import Any


@cache
def _cache_dir() -> str | None:
    """The directory of the encodings litellm ships (tiktoken's cache layout), or None."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")


def _offline(name: str) -> Any:
    """tiktoken's encoding `name` from the copy litellm ships, or None when it ships none: never a
    download (tiktoken fetches a missing one from the network). The cache directory is set on
    each load, not once: a test's environment is put back between tests."""
    directory = _cache_dir()
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    cached = hashlib.sha1(url.encode()).hexdigest()  # tiktoken's name for a cached encoding
    if directory is None or not os.path.exists(os.path.join(directory, cached)):
        return None
    os.environ["TIKTOKEN_CACHE_DIR"] = directory
    import tiktoken  # lazy (a start-up saving: cli/startup.py)

    return tiktoken.get_encoding(name)


@cache
def _encoding() -> Any:
    """cl100k_base, loaded once per process from the copy litellm ships."""
    encoding = _offline("cl100k_base")
    if encoding is None:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")  # no copy: as tiktoken does (a download)
    return encoding


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
    """The model's own tokenizer, as a function of text to its token count, when litellm ships its
    encoding (OpenAI's models: o200k_base and cl100k_base); None for the others, whose tokens
    cl100k counts only roughly (far more for scripts other than Latin), and when it is missing."""
    import tiktoken.model

    name = model.split("/", 1)[1] if model.startswith(("openai/", "azure/")) else model
    try:
        encoding = _offline(tiktoken.model.encoding_name_for_model(name))
    except (KeyError, ValueError):
        return None
    if encoding is None:
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
