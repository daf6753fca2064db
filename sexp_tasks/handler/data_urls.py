"""A request's record with its images' and PDFs' data elided (SPEC §11.4).

What the journal keeps, `sexp trace` and `sexp tasks render` show, and the fingerprint digests
(model_request.ModelRequest.as_record) holds each base64 data URL of a content part elided to its
media type, size and SHA-256: the store does not keep a copy of every image a run sends, nothing
prints a base64 blob, and the fingerprint still changes when one byte of the file does. An
http(s) URL's credentials and signed query are masked alike (redact.mask_url): the request sent
carries the real URL, nothing kept or shown does. Eliding an elided URL leaves it as it is, so a
record read back has the fingerprint of the request sent.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..redact import mask_url

_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+);base64,")
_ELIDED = re.compile(r"data:([\w.+-]+/[\w.+-]+);sha256=([0-9a-f]{64});bytes=(\d+),")


def elide_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of messages whose content parts hold each data URL elided (elided_url); a message
    without parts is copied as it is."""
    copies = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            message = {**message, "content": [_elided_part(part) for part in content]}
        copies.append(dict(message))
    return copies


def _elided_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    if part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
        inner = part["image_url"]
        return {**part, "image_url": {**inner, "url": elided_url(str(inner.get("url", "")))}}
    if part.get("type") == "file" and isinstance(part.get("file"), dict):
        inner = part["file"]
        elided = {key: elided_url(str(inner[key])) for key in ("file_data", "file_id") if key in inner}
        return {**part, "file": {**inner, **elided}}
    return dict(part)


def elided_url(url: str) -> str:
    """`data:image/png;sha256=HEX;bytes=N,` for a base64 data URL (its decoded bytes' size and
    digest); an http(s) URL with its credentials and secret query values masked; any other (an
    elided one too) as it is."""
    if url.startswith(("http://", "https://")):
        return mask_url(url)
    return _elided_data_url(url)


@lru_cache(maxsize=32)  # each turn of a conversation records the same parts again
def _elided_data_url(url: str) -> str:
    found = _DATA_URL.match(url)
    if found is None:
        return url
    try:
        data = base64.b64decode(url[found.end() :], validate=False)
    except ValueError:
        data = url[found.end() :].encode("ascii", "replace")
    return f"data:{found.group(1)};sha256={hashlib.sha256(data).hexdigest()};bytes={len(data)},"


def describe_part(part: Any) -> str:
    """A content part as `sexp tasks render` and `sexp trace --full` show it: a text part's text,
    an image or file as `[image/png, 12.3 kB, data elided]` or its URL; never the data."""
    if not isinstance(part, dict):
        return str(part)
    if part.get("type") == "text":
        return str(part.get("text", ""))
    inner = part.get("image_url") or part.get("file") or {}
    url = (
        str(inner.get("url") or inner.get("file_data") or inner.get("file_id") or "")
        if isinstance(inner, dict)
        else ""
    )
    shown = _shown_url(url)
    return shown if shown.startswith("[") else f"[{part.get('type', '?')}: {shown}]"


def _shown_url(url: str) -> str:
    found = _ELIDED.match(url)
    if found is not None:
        return f"[{found.group(1)}, {format_size(int(found.group(3)))}, data elided]"
    found = _DATA_URL.match(url)
    if found is not None:  # not elided yet: its size from the base64 text's length
        return f"[{found.group(1)}, {format_size((len(url) - found.end()) * 3 // 4)}, data elided]"
    return url


def format_size(size: int) -> str:
    """`67 bytes`, `12.3 kB`, `20 MB` (1 kB = 1000 bytes)."""
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} byte{'' if size == 1 else 's'}"
