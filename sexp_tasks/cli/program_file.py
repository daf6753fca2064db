"""Reading the program file a command was given (`sexp run FILE`, `sexp check FILE...`), with a
bound on its size: a file larger than a program may be is refused before it is read whole."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..process.workspace import READ_LIMIT

# The most a program file may hold: what (load) and read-file read; a program is text people write.
PROGRAM_SIZE_LIMIT = READ_LIMIT


def read_program(path: Path, shown: str) -> str:
    """The text of the program file at path; a UsageError (`cannot read 'SHOWN': ...`) when it
    cannot be read, is not UTF-8, or is larger than PROGRAM_SIZE_LIMIT bytes (said from its size
    before anything is read, or once more than the limit has been read from a file of no size)."""
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(PROGRAM_SIZE_LIMIT + 1) if size <= PROGRAM_SIZE_LIMIT else b""
            text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read '{shown}': {getattr(err, 'strerror', None) or err}") from None
    if size > PROGRAM_SIZE_LIMIT or len(data) > PROGRAM_SIZE_LIMIT:
        written = size if size > PROGRAM_SIZE_LIMIT else f"more than {PROGRAM_SIZE_LIMIT}"
        raise UsageError(
            f"cannot read '{shown}': it is {written} bytes, more than a program file may be "
            f"({PROGRAM_SIZE_LIMIT} bytes)"
        )
    return text
