"""The workspace: the one directory a program's files live in; nothing escapes it.

Reads open regular files only (a FIFO or a device is refused before it can block) and read at
most a limit of bytes, so a huge file costs no more memory than the limit. Writes go through a
temporary file created exclusively, without following links, in the real parent directory, then
renamed over the target: a symlink planted where the temporary goes cannot redirect the write.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from ..errors import FileError
from ..redact import is_secret_file

READ_LIMIT = 8 * 1024 * 1024  # bytes of one file read-file returns: more than a large model's context
PROC = Path("/proc")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Workspace:
    """Resolves paths against a root and refuses any that lead outside it (`..` or symlinks)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(root))

    def _refuse_secret(self, path: str, real: Path, action: str) -> None:
        if is_secret_file(str(real.relative_to(self.root)) if real != self.root else ""):
            raise FileError(
                f"{action}: '{path}' holds secrets (keys or the run store); it is not open to programs"
            )

    def resolve(self, path: str, action: str, base: Path | None = None) -> Path:
        """The real path of `path` (relative to base, by default the root), or FileError when it
        lies outside the workspace or in /proc."""
        real = Path(os.path.realpath((base or self.root) / path))
        if real == PROC or PROC in real.parents:  # the process's own environment and memory
            raise FileError(f"{action}: '{path}' is not open to programs")
        if real != self.root and self.root not in real.parents:
            raise FileError(f"{action}: '{path}' is outside the workspace ({self.root})")
        return real

    def read_prefix(
        self, path: str, limit: int, action: str = "read-file", base: Path | None = None
    ) -> tuple[str, int]:
        """The text of at most the first `limit` bytes of a regular file inside the workspace
        (never one that holds keys), and how many bytes were left unread."""
        data, size = self.read_bytes(path, limit + 1, action, base)
        unread = max(size - limit, 1) if len(data) > limit else 0
        try:  # a character cut at the limit is left out, not an error
            text = codecs.getincrementaldecoder("utf-8")().decode(data[:limit], final=not unread)
        except UnicodeDecodeError:
            raise FileError(f"{action}: '{path}' is not UTF-8 text") from None
        return text, unread

    def read_bytes(
        self, path: str, limit: int, action: str = "read-file", base: Path | None = None
    ) -> tuple[bytes, int]:
        """At most the first `limit` bytes of a regular file inside the workspace (never one that
        holds keys), and the file's size in bytes."""
        real = self.resolve(path, action, base)
        self._refuse_secret(path, real, action)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW | _NONBLOCK)
        except FileNotFoundError:
            raise FileError(f"{action}: no such file '{path}'") from None
        except OSError as err:
            raise FileError(f"{action}: cannot read '{path}': {err.strerror}") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise FileError(f"{action}: '{path}' is {kind}")
        with os.fdopen(fd, "rb") as handle:
            try:
                return handle.read(limit), os.fstat(fd).st_size
            except OSError as err:
                raise FileError(f"{action}: cannot read '{path}': {err.strerror}") from None

    def read_text(self, path: str, limit: int = READ_LIMIT) -> str:
        """The text of a file inside the workspace; past limit bytes, the rest noted as not read."""
        text, unread = self.read_prefix(path, limit)
        if unread:
            text += f"\n[... {unread} more bytes not read: read-file reads at most {limit} bytes]"
        return text

    def write_text(self, path: str, text: str) -> str:
        """Write a file inside the workspace (creating directories); return the path given."""
        real = self.resolve(path, "write-file")
        self._refuse_secret(path, real, "write-file")
        if real == self.root:
            raise FileError(f"write-file: cannot write '{path}': Is a directory")
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise FileError(f"write-file: cannot write '{path}': {err.strerror}") from None
        parent = Path(os.path.realpath(real.parent))  # made now: is it still inside?
        if parent != self.root and self.root not in parent.parents:
            raise FileError(f"write-file: '{path}' is outside the workspace ({self.root})")
        try:
            directory = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | _NOFOLLOW)
        except OSError as err:
            raise FileError(f"write-file: cannot write '{path}': {err.strerror}") from None
        try:
            _replace(directory, real.name, text.encode("utf-8"))
        except OSError as err:
            raise FileError(f"write-file: cannot write '{path}': {err.strerror}") from None
        finally:
            os.close(directory)
        return path


def _replace(directory: int, name: str, data: bytes) -> None:
    """Write data to a new temporary file in directory (an open descriptor), then rename it to name.

    The temporary is created exclusively (O_EXCL: a planted file or symlink of that name makes
    it fail, never redirects it) and keeps the mode of the file it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW
    for _ in range(100):
        temporary = f".{name}.{os.urandom(4).hex()}.sexp-tmp"
        try:
            fd = os.open(temporary, flags, 0o666, dir_fd=directory)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(17, "no free temporary file name")
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=directory)
        except OSError:
            pass
        raise
