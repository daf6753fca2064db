"""A batch's program travelling to a machine that may not have its files (the Ray executor).

The driver `pack`s the program's templates into its ProgramBundle: every template file the program
can load (its own tasks/, ./tasks, sexp.toml's and --templates directories, in the order they are
read), keyed by the file's absolute path on the driver. A worker `unpack`s it: where every file is
already there with the same text (the driver's own machine, or a shared file system) the row runs
on them as they are; elsewhere they are written once into a temporary directory of the worker
process, the program beside them, and the row's settings point at those directories.
"""

from __future__ import annotations

import atexit
import codecs
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import TemplateError
from ..tasks.runner import TaskSystem
from ..xmltools import read_template
from .rows import ProgramBundle


def pack(bundle: ProgramBundle, settings: dict[str, Any]) -> ProgramBundle:
    """bundle with the text of every template file its program can load (settings: a RowJob's)."""
    system = TaskSystem(Settings(**settings), lambda message: None)
    templates: dict[str, str] = {}
    for directory in system.template_directories(Path(bundle.path)):
        for path in sorted(directory.glob("*.xml")):
            templates[str(path.resolve())] = read_template(path)  # decoded as it declares
    return replace(bundle, templates=templates)


def unpack(bundle: ProgramBundle) -> tuple[ProgramBundle, dict[str, Any]]:
    """The bundle a row runs here, and the changes to its settings: as they are when this machine
    has the program's files, else re-created in a temporary directory (removed when the process
    exits), the template directories in their reading order."""
    wanted = {bundle.path: bundle.text, **bundle.templates}
    if all(_text(path) == text for path, text in wanted.items()):
        return bundle, {}
    root = Path(tempfile.mkdtemp(prefix="sexp-batch-"))
    atexit.register(shutil.rmtree, root, True)
    program = root / "program" / Path(bundle.path).name
    program.parent.mkdir()
    program.write_text(bundle.text, encoding="utf-8")
    directories: dict[str, Path] = {}  # the driver's directory -> its copy here, in reading order
    for path, text in bundle.templates.items():
        original = Path(path)
        copy = directories.setdefault(str(original.parent), root / f"templates{len(directories)}")
        copy.mkdir(exist_ok=True)
        # in UTF-8; with a byte-order mark when an XML declaration may name another encoding (the
        # mark wins over it: read_template)
        mark = codecs.BOM_UTF8 if text.startswith("<?xml") else b""
        (copy / original.name).write_bytes(mark + text.encode("utf-8"))
    flags = tuple(str(directory) for directory in directories.values())
    return replace(bundle, path=str(program)), {"templates": (), "template_flags": flags}


def _text(path: str) -> str | None:
    try:
        return read_template(Path(path))
    except (OSError, TemplateError):
        return None
