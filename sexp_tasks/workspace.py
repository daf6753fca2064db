"""The workspace: the one directory a program's files live in; nothing escapes it."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import FileError
from .secrets import is_secret_file


class Workspace:
    """Resolves paths against a root and refuses any that lead outside it (`..` or symlinks)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(root))

    def _refuse_secret(self, path: str, real: Path, action: str) -> None:
        if is_secret_file(str(real.relative_to(self.root)) if real != self.root else ""):
            raise FileError(
                f"{action}: '{path}' holds secrets (keys or the run store); it is not open to programs"
            )

    def resolve(self, path: str, action: str) -> Path:
        """The real path of `path` (relative to the root), or FileError when it lies outside."""
        real = Path(os.path.realpath(self.root / path))
        if real != self.root and self.root not in real.parents:
            raise FileError(f"{action}: '{path}' is outside the workspace ({self.root})")
        return real

    def read_text(self, path: str) -> str:
        """The text of a file inside the workspace (never a file that holds keys)."""
        real = self.resolve(path, "read-file")
        self._refuse_secret(path, real, "read-file")
        try:
            return real.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileError(f"read-file: no such file '{path}'") from None
        except IsADirectoryError:
            raise FileError(f"read-file: '{path}' is a directory") from None
        except UnicodeDecodeError:
            raise FileError(f"read-file: '{path}' is not UTF-8 text") from None
        except OSError as err:
            raise FileError(f"read-file: cannot read '{path}': {err.strerror}") from None

    def write_text(self, path: str, text: str) -> str:
        """Write a file inside the workspace (creating directories); return the path given."""
        real = self.resolve(path, "write-file")
        self._refuse_secret(path, real, "write-file")
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            temporary = real.with_name(f".{real.name}.sexp-tmp")
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, real)  # never leave a half-written file behind
        except OSError as err:
            raise FileError(f"write-file: cannot write '{path}': {err.strerror}") from None
        return path
