"""Finding the files that ship with the package, installed or in a checkout: the grammar and
stdlib (data_dir) and files of the package's own tree (package_file)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the directory `name` (grammar, stdlib): inside the installed package, else the checkout."""
    installed = _PACKAGE / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def package_file(*parts: str) -> Path:
    """The file at parts inside the package (schemas/task.xsd, process/launcher.py): it is there
    installed and in a checkout alike."""
    return _PACKAGE.joinpath(*parts)
