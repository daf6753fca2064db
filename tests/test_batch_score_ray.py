"""Scoring a batch on Ray (SPEC §11.5): a procedure scorer runs where the row runs (a Ray worker),
a Python scorer in the driver on the row's value; the aggregates are the same as on threads."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, write
from local_ray import ray_for_tests

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")

import sexp_tasks  # noqa: E402
from sexp_tasks.batching import ray_executor  # noqa: E402

pytestmark = pytest.mark.slow
PROGRAM = """\
(define (exact value row) (if (= value (get row "want")) 1 0))
(define (picky value row)
  (if (= value "B") (error "no B") {"exact" (exact value row) "chars" (length value)}))
(if (= x "boom") (error "boom") (string-upcase x))
"""
ROWS = [
    {"x": "a", "want": "A"},
    {"x": "b", "want": "x"},
    {"x": "boom", "want": ""},
    {"x": "cc", "want": "CC"},
]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray (2 CPUs) for this file, started without this process's keys."""
    with ray_for_tests(keep_credentials=False):
        yield


@pytest.mark.parametrize("direct", [True, False], ids=["file", "keeper"])
def test_a_procedure_scores_rows_on_ray_workers(
    local_ray: None, workspace: Path, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    monkeypatch.setattr(ray_executor, "DIRECT_STORE", direct)
    write(workspace / "p.sexp", PROGRAM)
    rows = sexp_tasks.batch("p.sexp", ROWS, executor="ray", score="picky", quiet=True)
    assert [row["status"] for row in rows] == ["ok", "ok", "error", "ok"]
    assert [row["score"] for row in rows] == [{"exact": 1, "chars": 1}, None, None, {"exact": 1, "chars": 2}]
    # at the program's position (a worker runs the copy the driver shipped, as a row's own error says)
    assert re.fullmatch(r"scorer 'picky' failed: \S*p\.sexp:3:21: error: no B", rows[1]["score_error"])
    assert re.fullmatch(r"\S*p\.sexp:\d+:\d+: error: boom", rows[2]["error"])
    assert [metric.line() for metric in rows.summary.scores] == [
        "score: chars mean 1.5 min 1 max 2 n 2",
        "score: exact mean 1 min 1 max 1 n 2",
    ]


def test_a_python_scorer_runs_in_the_driver_on_ray(local_ray: None, workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)
    driver = os.getpid()
    where: list[int] = []

    def exact(value: str, row: dict[str, str]) -> int:
        where.append(os.getpid())
        return int(value == row["want"])

    rows = sexp_tasks.batch("p.sexp", ROWS, executor="ray", score=exact, quiet=True)
    assert [row["score"] for row in rows] == [1, 0, None, 1]
    assert where == [driver] * 3
    [metric] = rows.summary.scores
    assert metric.line() == "score: exact mean 0.6667 min 0 max 1 n 3"


def test_a_second_local_ray_in_one_process_runs_rows(tmp_path: Path) -> None:
    """Test files each start a local Ray, one after another in one pytest process: the second
    one's rows run (before tests/local_ray.py reset Ray's authentication state, every actor of
    the second Ray died as it was created, and its rows failed)."""
    write(tmp_path / "p.sexp", "(string-upcase x)\n")
    script = (
        "import sys, sexp_tasks\n"
        "from local_ray import ray_for_tests\n"
        "for keep in (False, True):\n"
        "    with ray_for_tests(keep_credentials=keep):\n"
        "        rows = sexp_tasks.batch('p.sexp', [{'x': 'a'}], executor='ray', quiet=True)\n"
        "        print(rows[0]['status'], rows[0]['value'])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.stdout.splitlines() == ["ok A", "ok A"], done.stderr[-2000:]
