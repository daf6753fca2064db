"""The files a task is given (SPEC §3.5 file_paths, fresh context): read by the Handler alone.

Every path is confined to the workspace; a missing or unreadable one is a warning in the
task's notes, never a failure.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SexpError
from ..process.workspace import Workspace

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
