"""The typed Python face (SPEC §11.3): `sexp_tasks.Settings` types every keyword setting (a
misspelt one is a mypy error), `call` and `eval` have useful types, `help()` lists the settings,
and `dir(sexp_tasks)` names the API without loading it."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

from conftest import ROOT, scaled

import sexp_tasks
from sexp_tasks.api.settings_type import BatchSettings
from sexp_tasks.config.setting_table import API_SETTINGS

TYPED = Path(__file__).parent / "typed"
PUBLIC = ("PythonValue", "Session", "Settings", "SexpError", "TaskResult", "batch", "run", "run_file")


def test_settings_keys_are_the_tables_api_keywords() -> None:
    assert set(typing.get_type_hints(sexp_tasks.Settings)) == set(API_SETTINGS)
    assert sexp_tasks.Settings.__required_keys__ == frozenset()
    assert set(BatchSettings.__annotations__) == set(API_SETTINGS) - {"concurrency"}


def test_an_unknown_keyword_is_still_a_settings_error() -> None:
    try:
        sexp_tasks.Session(modle="mock/x")  # type: ignore[call-arg]
    except sexp_tasks.SexpError as err:
        assert "unknown setting 'modle'" in str(err)
    else:
        raise AssertionError("Session(modle=...) was accepted")


def test_help_lists_the_settings() -> None:
    for fn in (sexp_tasks.run, sexp_tasks.run_file, sexp_tasks.Session, sexp_tasks.batch):
        doc = fn.__doc__ or ""
        assert "Settings (keywords" in doc, fn
        for name in API_SETTINGS:
            assert re.search(rf"^\s+{name} \(", doc, re.MULTILINE), (fn, name)


def test_dir_and_all_list_the_public_names() -> None:
    assert set(PUBLIC) <= set(dir(sexp_tasks))
    assert set(PUBLIC) <= set(sexp_tasks.__all__)
    for name in PUBLIC:
        assert getattr(sexp_tasks, name) is not None


def test_import_and_dir_stay_light() -> None:
    code = (
        "import sys, sexp_tasks; names = dir(sexp_tasks); "
        "print(sorted(m for m in ('litellm', 'pydantic', 'sqlite3', 'sexp_tasks.api') if m in sys.modules)); "
        "print('Session' in names)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(30), cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "True"]


def test_mypy_strict_accepts_typical_use_and_refuses_mistakes(tmp_path: Path) -> None:
    mypy = Path(sys.executable).with_name("mypy")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")
    done = subprocess.run(
        [
            str(mypy),
            "--strict",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(TYPED / "typed_ok.py"),
            str(TYPED / "typed_bad.py"),
        ],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=tmp_path,
    )
    errors = [
        (Path(m[1]).name, int(m[2]), m[3])
        for m in re.finditer(r"^(.*?):(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.MULTILINE)
    ]
    assert errors == [
        ("typed_bad.py", 8, "call-arg"),  # Session(modle=...)
        ("typed_bad.py", 10, "assignment"),  # count: int = result.content
        ("typed_bad.py", 11, "arg-type"),  # max_turns="3"
        ("typed_bad.py", 12, "call-arg"),  # batch(..., modle=...)
        ("typed_bad.py", 13, "assignment"),  # total: int = run(...)
    ], done.stdout + done.stderr
    assert 'Unexpected keyword argument "modle" for "Session"' in done.stdout
    assert done.returncode == 1
