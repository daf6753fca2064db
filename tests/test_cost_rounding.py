"""Costs are rounded to 6 significant digits (SPEC §11.1) wherever they are written: a result's
notes (and `sexp run --json`), traces, `sexp runs` and batch OUT rows: three calls at
$0.00000105 cost `3.15e-06`, never `3.1499999999999995e-06` (what adding the floats gives).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Cli
from llm_server import LLMServer, Scripted

import sexp_tasks

# gpt-4o-mini: 7 prompt tokens at $0.15/M
USAGE = {"prompt_tokens": 7, "completion_tokens": 0}
PROGRAM = '(defatom hi (instructions "Hi.") (model "openai/gpt-4o-mini"))\n(list (hi) (hi) (hi))\n'


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cost")
    llm = LLMServer().start()
    llm.script(Scripted(content="<output>hi</output>", usage=USAGE))
    yield llm
    llm.stop()


def test_a_results_cost_has_6_significant_digits(server: LLMServer) -> None:
    results = sexp_tasks.run(PROGRAM, api_base=server.base_url)
    assert [repr(result.notes["cost_usd"]) for result in results] == ["1.05e-06"] * 3


def test_run_json_traces_and_runs_carry_rounded_costs(cli: Cli, workspace: Path, server: LLMServer) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    status, out, err = cli("run", "p.sexp", "--json", env={"SEXP_API_BASE": server.base_url}, run_lines=True)
    assert status == 0, err
    assert '"cost_usd": 1.05e-06,' in out and "99999" not in out
    run_id = re.search(r"run: ([0-9a-f]{12})", err).group(1)  # type: ignore[union-attr]
    trace = cli("trace", run_id, "--json")[1]
    assert "99999" not in trace
    data = json.loads(trace)
    assert data["run"]["cost_usd"] == 3.15e-06
    assert [step["cost_usd"] for step in data["steps"]] == [1.05e-06] * 3
    runs = cli("runs", "--json")[1]
    assert json.loads(runs)[0]["cost_usd"] == 3.15e-06 and "99999" not in runs


def test_batch_rows_carry_rounded_costs(server: LLMServer, workspace: Path) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    rows = sexp_tasks.batch(workspace / "p.sexp", [{"n": 1}], api_base=server.base_url)
    assert rows[0]["cost_usd"] == 3.15e-06
    assert "99999" not in (workspace / "p.results.jsonl").read_text()
