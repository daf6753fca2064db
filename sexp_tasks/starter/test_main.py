"""main.sexp, run offline: a mock model answers from mock_responses.json, so the test needs no
network and no key, and always sees the same answer. Run it with `pytest` in this directory.

Test your own programs the same way: replies for each template they call in a mock file (a JSON
object from template names to lists of replies, given to that template's calls in order), then
`sexp run PROGRAM --model mock/NAME --mock-responses FILE` and a check of what it prints.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sexp(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `sexp ARGS...` in this directory, with the Python running the tests when it has sexp."""
    if importlib.util.find_spec("sexp_tasks") is not None:
        command = [sys.executable, "-m", "sexp_tasks"]
    else:
        command = [shutil.which("sexp") or "sexp"]
    return subprocess.run(
        [*command, *args], cwd=HERE, capture_output=True, text=True, encoding="utf-8", timeout=300
    )


def test_main_prints_the_summary() -> None:
    result = sexp("run", "main.sexp", "--model", "mock/starter", "--mock-responses", "mock_responses.json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "March support: 18% more tickets",
        "Tickets rose 18% to 1,240, mostly about the moved invoices page,"
        " and first replies slowed to 5 hours.",
        "- 310 tickets asked where invoices went",
        "- Add an invoices link to the dashboard",
        "- One more person on the April rota",
    ]


def test_an_answer_that_is_not_the_json_asked_for_fails_the_run(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"summarize": ["<output>Sorry, I cannot help.</output>"]}))
    result = sexp("run", "main.sexp", "--model", "mock/starter", "--mock-responses", str(replies))
    assert result.returncode == 1
    assert "error: TASK_FAILURE output_format_failure" in result.stderr
