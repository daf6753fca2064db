"""examples/async_service/service.py, a support service in plain asyncio, run as a user runs it:
a real process, replayed from its cassette (no key, no network). Its requests are answered
concurrently with Session.acall, one times out, one is cancelled when its customer hangs up, and
a changed request is refused by the replay."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import scaled

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "async_service"
ANSWERED = {
    "r1 answered: Your desk lamp is on its way with UPS and should arrive by 2025-03-07.",
    "r2 answered: Your office chair is being packed and ships on 2025-03-10.",
    "r5 answered: Your mug (2) was delivered by DHL on 2025-03-02.",
}
SUMMARY = re.compile(r"5 requests in (?P<seconds>[0-9.]+) s: 3 answered, 1 cancelled, 1 timed out")


def serve(service: Path, workspace: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """The service run as its docstring says, from the workspace, with the given time limit."""
    return subprocess.run(
        [sys.executable, str(service), "--timeout", f"{timeout:g}"],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )


def test_the_service_answers_concurrently_times_one_out_and_cancels_one(workspace: Path) -> None:
    assert "OPENAI_API_KEY" not in os.environ
    timeout = scaled(3)
    done = serve(EXAMPLE / "service.py", workspace, timeout)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert len(lines) == 6
    assert set(lines[:4]) == {*ANSWERED, "r3 cancelled: the customer hung up"}  # as they finished
    assert lines[4] == f"r4 timed out: no answer within {timeout:g} s; a person will follow up"
    summary = SUMMARY.fullmatch(lines[5])
    assert summary is not None, lines[5]
    # One time limit, not two or five: the stuck requests did not hold the others up, and the
    # cancelled call and the timed-out one were let go at once.
    # (bounded by twice the limit, not the limit plus a fixed margin: a busy machine adds seconds)
    # (the summary shows seconds to one decimal: the limit as printed is the lower bound)
    assert round(timeout, 1) <= float(summary["seconds"]) < 2 * timeout + scaled(2)


def test_a_changed_request_is_refused_by_the_replay(workspace: Path) -> None:
    copy = Path(shutil.copytree(EXAMPLE, workspace / "async_service"))
    template = copy / "tasks" / "answer_customer.xml"
    text = template.read_text()
    assert text.count("</instructions>") == 1
    template.write_text(text.replace("</instructions>", " Be brief.</instructions>"))
    done = serve(copy / "service.py", workspace, scaled(3))
    assert (done.returncode, done.stderr) == (1, "")
    errors = [line for line in done.stdout.splitlines() if " error: " in line]
    assert len(errors) == 5  # every request, the stuck ones too, asks first with the new text
    assert all("has no recorded reply for this request" in line for line in errors)
    assert done.stdout.splitlines()[-1].endswith(": 5 error")
