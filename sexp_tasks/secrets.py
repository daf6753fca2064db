"""Keeping secrets out of what sexp writes and what models see (SPEC §4: API keys never appear in
output, logs, traces or the store)."""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")


def scrub(text: str, shaped: bool = True) -> str:
    """text with every API key from the environment (and, if shaped, anything like `sk-...`) masked."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and ("API_KEY" in name or name.endswith("_TOKEN")):
            text = text.replace(value, "***")
    return _KEY_PATTERN.sub("sk-***", text) if shaped else text


def is_secret_file(path: str) -> bool:
    """Files that hold keys by convention (.env, .env.local ...) or the run store itself."""
    parts = PurePosixPath(path.replace(os.sep, "/")).parts
    name = parts[-1] if parts else ""
    return name == ".env" or name.startswith(".env.") or ".sexp" in parts[:-1]
