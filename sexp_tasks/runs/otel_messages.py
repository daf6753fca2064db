"""A model turn's messages as the OpenTelemetry GenAI semantic conventions shape them (SPEC §11.4):
what `gen_ai.input.messages`, `gen_ai.system_instructions` and `gen_ai.output.messages` hold
with `otel_content` on. Pure Python (otel_export.py, OpenTelemetry's one importer, sends them).

A message is its role and its parts: text as `{"type": "text", "content": ...}`, tool calls and
their results, and an image or PDF as a `uri` part with its modality and media type. Never its
data: a local file's part holds the data URL elided as the journal keeps it
(`data:image/png;sha256=HEX;bytes=N,`), a URL's has its credentials and signed query masked
(handler/data_urls.elided_url)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..handler.data_urls import elided_url
from ..handler.model_request import ModelAnswer

_MEDIA_TYPE = re.compile(r"data:([\w.+-]+/[\w.+-]+);")
PDF = "application/pdf"


def input_messages(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system instructions' parts, and the other messages as the conventions shape them
    (role and parts: text, images and PDFs, tool calls, tool results)."""
    system: list[dict[str, Any]] = []
    shaped: list[dict[str, Any]] = []
    for message in messages:
        role = str(message.get("role", "user"))
        if role == "system":
            system += content_parts(message.get("content"))
            continue
        if role == "tool":
            part = {
                "type": "tool_call_response",
                "id": message.get("tool_call_id"),
                "response": message.get("content"),
            }
            shaped.append({"role": "tool", "parts": [part]})
            continue
        parts = content_parts(message.get("content")) if message.get("content") else []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or call
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                }
            )
        shaped.append({"role": role, "parts": parts})
    return system, shaped


def output_message(answer: ModelAnswer) -> dict[str, Any]:
    """The answer as the conventions' one output message: its text and the tool calls it asks for."""
    parts: list[dict[str, Any]] = [{"type": "text", "content": answer.text}] if answer.text else []
    for call in answer.tool_calls:
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": call.get("arguments"),
            }
        )
    return {"role": "assistant", "parts": parts, "finish_reason": answer.finish_reason or ""}


def content_parts(content: Any) -> list[dict[str, Any]]:
    """A message's content as parts: a string is one text part; a list of chat content parts
    (text, image_url, file) is a part each."""
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    if not isinstance(content, list):
        return [{"type": "text", "content": json.dumps(content, default=str)}]
    return [_part(part) for part in content]


def _part(part: Any) -> dict[str, Any]:
    if not isinstance(part, dict):
        return {"type": "text", "content": str(part)}
    kind = part.get("type")
    inner = part.get("image_url") if kind == "image_url" else part.get("file")
    if kind == "text":
        return {"type": "text", "content": str(part.get("text", ""))}
    if kind == "image_url" and isinstance(inner, dict):
        return _uri_part(str(inner.get("url", "")), "image")
    if kind == "file" and isinstance(inner, dict):
        if "file_data" in inner:
            return _uri_part(str(inner["file_data"]), "document", PDF)
        file_id = str(inner.get("file_id", ""))
        if file_id.startswith(("http://", "https://")):  # litellm's form of a PDF's URL
            return _uri_part(file_id, "document", PDF)
        return {"type": "file", "modality": "document", "mime_type": PDF, "file_id": file_id}
    # a part of another kind: its type alone (its fields may hold data)
    return {"type": str(kind or "unknown")}


def _uri_part(url: str, modality: str, mime_type: str | None = None) -> dict[str, Any]:
    """An image or PDF as a `uri` part: its data elided, a URL's secrets masked."""
    uri = elided_url(url)
    found = _MEDIA_TYPE.match(uri)
    part: dict[str, Any] = {"type": "uri", "modality": modality, "uri": uri}
    mime = found.group(1) if found is not None else mime_type
    if mime is not None:
        part["mime_type"] = mime
    return part
