"""Images and PDFs sent to a model as content parts of the user message (SPEC §11.4).

An input of type `image` or `file` names a path inside the workspace or an http(s) URL. A local
file is checked when the task is called, before any request (confined to the workspace, at most
MAX_ATTACHMENT_BYTES, its type read from its first bytes, not its name), and read by the Handler
into a base64 data URL: an image as an `image_url` part, a PDF as litellm's `file` part with
`file_data`. A URL goes as it is (an image's as `image_url`, a PDF's as `file` with `file_id`,
litellm's form for a URL).

A request's record holds each data URL elided (data_urls.py).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from ..errors import AttachmentError, FileError
from ..process.workspace import Workspace
from ..redact import mask_url
from . import llm
from .data_urls import format_size

MAX_ATTACHMENT_BYTES = 20_000_000  # the largest image or PDF sent (20 MB: OpenAI's limit for one image)
PDF = "application/pdf"
# media type -> how the file's first bytes begin (WebP: RIFF, 4 bytes of size, then WEBP)
_SIGNATURES: tuple[tuple[str, bytes], ...] = (
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF87a"),
    ("image/gif", b"GIF89a"),
    (PDF, b"%PDF-"),
)
_EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": PDF,
}
IMAGE_FORMATS = "PNG, JPEG, GIF or WebP"


@dataclass(frozen=True)
class Attachment:
    """One image or PDF a task sends: the input (or the file of `:files`) it came from, where it
    is (a workspace path or an http(s) URL), its media type and its size (0 for a URL)."""

    name: str
    source: str
    media_type: str
    size: int = 0

    @property
    def kind(self) -> str:
        """`pdf` or `image`: which capability the model needs (supports_pdf_input, supports_vision)."""
        return "pdf" if self.media_type == PDF else "image"

    @property
    def is_url(self) -> bool:
        return is_url(self.source)

    @property
    def shown(self) -> str:
        """The source as text, messages and records show it: a URL's credentials and signed
        query masked (redact.mask_url; only its content part carries the real URL)."""
        return mask_url(self.source) if self.is_url else self.source

    def label(self) -> str:
        """How the attachment is named in the text: `[image: photo.png]`, `[file: report.pdf]`."""
        return f"[{'file' if self.kind == 'pdf' else 'image'}: {self.shown}]"


def is_url(value: str) -> bool:
    """Whether value is an http(s) URL."""
    return value.startswith(("http://", "https://"))


def sniff(head: bytes) -> str | None:
    """The media type a file's first bytes say it is (an image or a PDF), None for any other."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for kind, start in _SIGNATURES if head.startswith(start)), None)


def check_attachment(name: str, value: str, declared: str, workspace: Path) -> Attachment:
    """The attachment input `name` (declared `image` or `file`) names; AttachmentError saying why
    it cannot be sent. A local file's type is read from its first bytes."""
    if is_url(value):
        kind = _EXTENSIONS.get(PurePosixPath(urlparse(value).path).suffix.lower())
        if declared == "image" and kind == PDF:
            shown = mask_url(value)
            raise AttachmentError(f'{shown!r} is a PDF, not an image: declare the input type="file"')
        # a URL whose name says nothing: an image input's is an image, a file input's a PDF
        return Attachment(name, value, kind or ("image/*" if declared == "image" else PDF))
    if not value or "://" in value or value.startswith("data:"):
        shown = mask_url(value) if "://" in value else value
        raise AttachmentError(f"{shown!r} is neither a path in the workspace nor an http(s) URL")
    head, size = _read(value, 16, workspace)
    kind = sniff(head)
    if kind is None:
        wanted = (
            f"an image ({IMAGE_FORMATS})" if declared == "image" else f"a PDF or an image ({IMAGE_FORMATS})"
        )
        raise AttachmentError(f"{value!r} is not {wanted}")
    if declared == "image" and kind == PDF:
        raise AttachmentError(f'{value!r} is a PDF, not an image: declare the input type="file"')
    if size > MAX_ATTACHMENT_BYTES:
        raise AttachmentError(
            f"{value!r} is {format_size(size)}, over the {format_size(MAX_ATTACHMENT_BYTES)} limit"
            " of an image or PDF sent to a model"
        )
    return Attachment(name, value, kind, size)


def _read(path: str, limit: int, workspace: Path) -> tuple[bytes, int]:
    """The first limit bytes of a workspace file and its size; AttachmentError when it cannot be read."""
    try:
        return Workspace(workspace).read_bytes(path, limit, "attach")
    except FileError as err:
        raise AttachmentError(err.message.removeprefix("attach: ")) from None


def content_parts(attachment: Attachment, workspace: Path) -> list[dict[str, Any]]:
    """The attachment's label as a text part, then the attachment's own part (a local file read
    now, as a base64 data URL); AttachmentError when the file cannot be read any more."""
    source = attachment.source
    if attachment.is_url:
        part = (
            {"type": "file", "file": {"file_id": source}}
            if attachment.kind == "pdf"
            else {"type": "image_url", "image_url": {"url": source}}
        )
    else:
        where = f"input '{attachment.name}': " if attachment.name != source else ""  # else a file of :files
        try:
            data, size = _read(source, MAX_ATTACHMENT_BYTES + 1, workspace)
        except AttachmentError as err:  # gone since the call was checked
            raise AttachmentError(where + err.message) from None
        if size > MAX_ATTACHMENT_BYTES:  # it grew since the call was checked
            limit = format_size(MAX_ATTACHMENT_BYTES)
            raise AttachmentError(f"{where}{source!r} is {format_size(size)}, over the {limit} limit")
        url = f"data:{attachment.media_type};base64,{base64.b64encode(data).decode('ascii')}"
        part = (
            {"type": "file", "file": {"filename": PurePosixPath(source).name, "file_data": url}}
            if attachment.kind == "pdf"
            else {"type": "image_url", "image_url": {"url": url}}
        )
    return [{"type": "text", "text": attachment.label()}, part]


_NEEDS = {"image": ("images", "supports_vision"), "pdf": ("PDFs", "supports_pdf_input")}


def model_refusal(model: str, attachment: Attachment) -> tuple[str | None, str | None]:
    """Why model cannot take the attachment (None when it can, as litellm says), and a warning
    when litellm does not know the model: then it is sent, and the provider answers for it."""
    takes = llm.takes_input(model, attachment.kind)
    what, flag = _NEEDS[attachment.kind]
    if takes is False:
        return f"model {model} does not take {what} (litellm's {flag} is false for it)", None
    if takes is None:
        return (
            None,
            f"litellm does not know model {model}, nor whether it takes {what}: {attachment.shown!r} is sent",
        )
    return None, None


def user_content(text: str, parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A user message's content: its text alone, or a text part followed by the attachments' parts."""
    return [{"type": "text", "text": text}, *parts] if parts else text
