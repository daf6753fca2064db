"""`batch` and `abatch` take one list of keywords, `BatchKeywords` (sexp_tasks/api/batch_runs.py):
the batch's own options and the settings, typed for mypy and split at run time by that one
definition. (`arun`'s settings are typed too: its mypy check is here.)"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled

import sexp_tasks
from sexp_tasks.api.batch_runs import BatchKeywords
from sexp_tasks.api.settings_type import BatchSettings

TYPED = """
from __future__ import annotations

from pathlib import Path

import sexp_tasks


async def rows() -> None:
    async for row in sexp_tasks.abatch("p.sexp", [{"n": 1}], out=Path("o.jsonl"), concurrency=2, quiet=True):
        print(row["index"])
    async for row in sexp_tasks.abatch("p.sexp", [], modle="mock/x"):
        print(row)
    total: int = await sexp_tasks.arun("(+ 1 2)", model="mock/x")
    await sexp_tasks.arun("(+ 1 2)", modle="mock/x")


sexp_tasks.batch("p.sexp", [], executor=2)
sexp_tasks.batch("p.sexp", [], resume="abc", retry_failed=True, force=False, ray_address=None, model="m")
"""


def test_the_keywords_are_the_options_and_the_settings() -> None:
    own = set(BatchKeywords.__annotations__) - set(BatchSettings.__annotations__)
    assert own == {
        "out",
        "concurrency",
        "executor",
        "ray_address",
        "resume",
        "force",
        "retry_failed",
        "reuse",
        "score",
    }


def test_mypy_checks_abatch_s_keywords_as_batch_s(tmp_path: Path) -> None:
    """abatch took `**options: Any` and arun `**settings: Any` before: a misspelt setting passed
    mypy, and arun's value was Any."""
    (tmp_path / "use.py").write_text(TYPED, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = Path(sys.executable).with_name("mypy")
    done = subprocess.run(
        [str(mypy), "--strict", "--config-file", "mypy.ini", "--cache-dir", "cache", "use.py"],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=tmp_path,
    )
    errors = re.findall(r"^use\.py:(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.MULTILINE)
    expected = [("12", "call-arg"), ("14", "assignment"), ("15", "call-arg"), ("18", "arg-type")]
    assert errors == expected, done.stdout + done.stderr


def test_batch_and_abatch_take_the_options_and_the_settings(workspace: Path) -> None:
    (workspace / "double.sexp").write_text("(* 2 n)\n", encoding="utf-8")
    out = workspace / "doubled.jsonl"
    rows = sexp_tasks.batch("double.sexp", [{"n": 1}, {"n": 2}], out=out, concurrency=1, quiet=True)
    assert [row["value"] for row in rows] == [2, 4] and out.exists()

    async def collect() -> list[int]:
        found = sexp_tasks.abatch("double.sexp", [{"n": 5}], out=str(out), executor="threads", quiet=True)
        return [row["value"] async for row in found]

    assert asyncio.run(collect()) == [10]


def test_an_unknown_keyword_is_an_unknown_setting(workspace: Path) -> None:
    (workspace / "double.sexp").write_text("(* 2 n)\n", encoding="utf-8")
    with pytest.raises(sexp_tasks.SexpError, match="unknown setting 'outt'"):
        sexp_tasks.batch("double.sexp", [{"n": 1}], outt="x.jsonl")  # type: ignore[call-arg]
