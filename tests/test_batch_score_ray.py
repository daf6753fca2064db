"""Scoring a batch on Ray (SPEC §11.5): a procedure scorer runs where the row runs (a Ray worker),
a Python scorer in the driver on the row's value; the aggregates are the same as on threads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, write

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")

import sexp_tasks  # noqa: E402
from sexp_tasks.batching import ray_executor  # noqa: E402
from sexp_tasks.batching.ray_executor import start_local_ray  # noqa: E402

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
    """A local Ray (2 CPUs) for this file, its workers importing this checkout."""
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "RAY_AUTH_MODE")}
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [saved["PYTHONPATH"]])])
    os.environ["RAY_AUTH_MODE"] = "disabled"
    start_local_ray(2)
    try:
        yield
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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
