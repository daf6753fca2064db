"""`sexp batch --executor ray` on a local Ray the batch starts: no Ray process carries the
provider key in its environment (a row's script could read it there), rows still call models
with it, Ray's own notices stay off the batch's stderr, and rows reserve from the batch's budget."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled, sexp_command, sexp_env, wait_for
from llm_server import LLMServer, Scripted

pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'sexp-tasks[ray]')")

pytestmark = pytest.mark.slow
KEY = "sk-test-ray-scrubbed-0123456789"


def environments_with(secret: bytes) -> list[str]:
    """`pid cmdline` of every process whose /proc environment holds secret."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:  # gone, or not ours to read
            continue
        if secret in environ:
            found.append(f"{entry} {command.decode(errors='replace')[:120]}")
    return found


def ray_batch(
    workspace: Path, program: str, *options: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`sexp batch PROGRAM --data in.jsonl --executor ray OPTIONS` on a local Ray of its own (no
    RAY_ADDRESS), stdout and stderr piped; wait with `communicate(timeout=scaled(...))`."""
    environment = sexp_env({"RAY_AUTH_MODE": "disabled", **(env or {})})
    environment.pop("RAY_ADDRESS", None)
    command = sexp_command("batch", program, "--data", "in.jsonl", "--executor", "ray", *options)
    return subprocess.Popen(
        command, cwd=workspace, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def against(server: LLMServer, model: str) -> dict[str, str]:
    return {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": model, "OPENAI_API_KEY": KEY}


def test_no_process_of_the_local_ray_has_the_key_and_rows_still_use_it(
    workspace: Path, server: LLMServer
) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        release.wait(120)
        return "<output>hi</output>"

    server.answer = answer
    (workspace / "p.sexp").write_text(
        '(defatom greet (params (x int)) (instructions "Greet {{x}}"))\n(task-content (greet x))\n'
    )
    (workspace / "in.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(2)))
    batch = ray_batch(workspace, "p.sexp", env=against(server, "openai/test-model"))
    try:
        wait_for(lambda: len(server.requests) == 2, 180, "the rows never called the model")
        assert environments_with(KEY.encode()) == []
    finally:
        release.set()
        _, err = batch.communicate(timeout=scaled(180))
    assert batch.returncode == 0, err
    sent = [{k.lower(): v for k, v in request.headers.items()} for request in server.requests]
    assert {headers.get("authorization") for headers in sent} == {f"Bearer {KEY}"}
    assert re.fullmatch(r"batch: (\w{12})\nbatch: \1 2/2 ok, 30 tokens, \$0\.00, [0-9.]+ s\n", err), err


def test_rows_on_ray_reserve_from_the_batch_s_one_budget(workspace: Path, server: LLMServer) -> None:
    """8 rows at once, no max_tokens: each call costs 0.00075 (gpt-4o-mini's prices); the batch
    passes its budget by one call's worth at most (rows given what was left when sent: 3.1x)."""
    server.script(
        Scripted("<output>hi</output>", usage={"prompt_tokens": 1000, "completion_tokens": 1000}, delay=0.3)
    )
    (workspace / "p.sexp").write_text(
        '(defatom greet (params (x int)) (instructions "Greet {{x}}"))\n(greet x)\n'
    )
    (workspace / "in.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(8)))
    options = ("--concurrency", "8", "--max-cost", "0.002")
    batch = ray_batch(workspace, "p.sexp", *options, env=against(server, "openai/gpt-4o-mini"))
    _, err = batch.communicate(timeout=scaled(300))
    rows = [json.loads(line) for line in (workspace / "p.results.jsonl").read_text().splitlines()]
    paid = [row for row in rows if row["status"] == "ok"]
    assert batch.returncode == 1 and len(rows) == 8 and 1 <= len(paid) == len(server.requests), err
    assert sum(row["cost_usd"] for row in rows) <= 0.002 + 0.00075 + 1e-9


def test_a_worker_that_dies_leaves_no_ray_notice_on_the_batch_s_output(workspace: Path) -> None:
    """The row's script kills its Ray worker (twice: the row runs again once): the row's error says
    so, and Ray's 600-character notice is on neither stdout nor stderr."""
    (workspace / "kill.sh").write_text('kill -9 "$(cut -d" " -f4 /proc/$PPID/stat)"\n')
    (workspace / "k.sexp").write_text(f'(system:run_script (command "sh {workspace / "kill.sh"}"))\n')
    (workspace / "in.jsonl").write_text('{"x": 1}\n')
    batch = ray_batch(workspace, "k.sexp")
    out, err = batch.communicate(timeout=scaled(300))
    assert batch.returncode == 1 and out == "", out
    assert re.fullmatch(r"batch: (\w{12})\nbatch: \1 0/1 ok, 0 tokens, \$0\.00, [0-9.]+ s\n", err), err
    row = json.loads((workspace / "k.results.jsonl").read_text())
    assert "the Ray worker running this row died" in row["error"]
