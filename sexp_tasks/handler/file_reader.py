"""The files a task is given (SPEC §3.5 file_paths, fresh context): read by the Handler alone.

Every path is confined to the workspace; a missing or unreadable one is a warning in the
task's notes, never a failure. An image or a PDF among them (by its first bytes) is sent as a
content part after the user message's text when every model of the call's chain takes it (SPEC
§11.4: a fallback is asked the same conversation), else it is a warning too, naming the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import AttachmentError, SexpError
from ..process.workspace import Workspace
from .attachments import MAX_ATTACHMENT_BYTES, Attachment, content_parts, model_refusal, sniff
from .data_urls import format_size

FILE_LIMIT = 100_000  # characters of one file put in the prompt


def file_block(paths: tuple[str, ...], workspace: Path) -> tuple[str, list[str]]:
    """The <files> section for paths (empty when none can be read) and a warning per problem."""
    if not paths:
        return "", []
    root = Workspace(workspace)
    parts: list[str] = []
    warnings: list[str] = []
    for path in dict.fromkeys(paths):  # each file once, in the order given
        try:  # at most 4 bytes a character: enough bytes for FILE_LIMIT characters
            text, unread = root.read_prefix(path, 4 * FILE_LIMIT)
        except SexpError as err:
            warnings.append(f"file {path!r} not included: {err.message.removeprefix('read-file: ')}")
            continue
        if unread:
            more = f"{unread + len(text[FILE_LIMIT:].encode('utf-8'))} more bytes"
            text = text[:FILE_LIMIT] + f"\n[... {more} not shown]"
        elif len(text) > FILE_LIMIT:
            text = text[:FILE_LIMIT] + f"\n[... {len(text) - FILE_LIMIT} more characters not shown]"
        parts.append(f'<file path="{path}">\n{text}\n</file>')
    return ("<files>\n" + "\n".join(parts) + "\n</files>" if parts else ""), warnings


def media_files(
    paths: tuple[str, ...], models: tuple[str, ...], workspace: Path
) -> tuple[list[dict[str, Any]], tuple[str, ...], list[str]]:
    """The content parts of the images and PDFs among paths (by their first bytes) that every
    model of the chain takes, the other paths (for file_block), and a warning per image or PDF
    not sent or sent to a model litellm does not know. No path, no workspace resolved."""
    if not paths:
        return [], (), []
    root = Workspace(workspace)
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    warnings: list[str] = []
    for path in dict.fromkeys(paths):
        try:
            head, size = root.read_bytes(path, 16)
        except SexpError:  # file_block says why
            texts.append(path)
            continue
        kind = sniff(head)
        if kind is None:
            texts.append(path)
            continue
        attachment = Attachment(path, path, kind, size)
        refusal, unknown = _chain_refusal(models, attachment)
        if size > MAX_ATTACHMENT_BYTES:
            refusal = (
                f"{format_size(size)}, over the {format_size(MAX_ATTACHMENT_BYTES)} limit of an image or PDF"
            )
        if refusal is None:
            try:
                parts += content_parts(attachment, workspace)
            except AttachmentError as err:
                refusal = str(err)
        if refusal is not None:
            warnings.append(f"file {path!r} not included: {refusal}")
        else:
            warnings += [warning for warning in unknown if warning not in warnings]
    return parts, tuple(texts), warnings


def _chain_refusal(models: tuple[str, ...], attachment: Attachment) -> tuple[str | None, list[str]]:
    """Why the first model of the chain that cannot take the attachment cannot (None when all
    can), and a warning per model litellm does not know."""
    unknown: list[str] = []
    for model in models or ("",):
        refusal, warning = model_refusal(model, attachment)
        if refusal is not None:
            return refusal, unknown
        if warning is not None:
            unknown.append(warning)
    return None, unknown
