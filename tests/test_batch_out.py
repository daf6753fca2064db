"""`sexp batch`'s OUT file: never the input, never written by two batches at once, and a write
that fails (a full disk, /dev/full) ends the batch with a clear error and no torn line."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Cli, wait_for
from llm_server import LLMServer, Scripted

from sexp_tasks.batching import out_file
from sexp_tasks.batching.driver import BatchOptions, run_batch
from sexp_tasks.config import load_settings
from sexp_tasks.errors import BatchError

ROWS = "".join(json.dumps({"x": i}) + "\n" for i in range(3))


def program(workspace: Path, name: str = "d.sexp") -> Path:
    path = workspace / name
    path.write_text("(+ 1 x)\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["--out", "symlink", "default"])
def test_an_out_that_is_the_input_is_refused_and_the_input_is_kept(
    cli: Cli, workspace: Path, how: str
) -> None:
    program(workspace)
    data = workspace / ("d.results.jsonl" if how == "default" else "in.jsonl")
    data.write_text(ROWS, encoding="utf-8")
    args = ["batch", "d.sexp", "--data", data.name]
    if how == "--out":
        args += ["--out", "./in.jsonl"]
    elif how == "symlink":
        (workspace / "link.jsonl").symlink_to(data)
        args += ["--out", "link.jsonl"]
    status, out, err = cli(*args)
    named = {"--out": "in.jsonl", "symlink": "link.jsonl", "default": "d.results.jsonl"}[how]
    assert status == 2 and out == "", err
    assert err == f"error: the results file '{named}' is the input: give another --out\n"
    assert data.read_text(encoding="utf-8") == ROWS


def test_an_out_that_is_the_program_is_refused(cli: Cli, workspace: Path) -> None:
    text = program(workspace).read_text()
    (workspace / "in.jsonl").write_text(ROWS, encoding="utf-8")
    status, _, err = cli("batch", "d.sexp", "--data", "in.jsonl", "--out", "d.sexp")
    assert status == 2 and err == "error: the results file 'd.sexp' is the program: give another --out\n"
    assert (workspace / "d.sexp").read_text() == text


def test_a_second_batch_writing_the_same_out_is_refused(workspace: Path, server: LLMServer) -> None:
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        release.wait(60)
        return "<output>hi</output>"

    server.answer = answer
    (workspace / "p.sexp").write_text(
        '(defatom greet (params (x int)) (instructions "Greet {{x}}"))\n(task-content (greet x))\n'
    )
    (workspace / "in.jsonl").write_text(ROWS, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/test-model",
        "OPENAI_API_KEY": "sk-test-out",
    }
    command = [sys.executable, "-m", "sexp_tasks", "batch", "p.sexp", "--data", "in.jsonl"]
    command += ["--out", "o.jsonl"]
    first = subprocess.Popen(command, cwd=workspace, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: server.requests, 60, "the first batch's rows never called the model")
        second = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stderr == "error: the results file 'o.jsonl' is being written by another batch\n"
    finally:
        release.set()
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    lines = (workspace / "o.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["value"] for line in lines] == ["hi"] * 3


def test_out_on_dev_full_is_a_clear_error(cli: Cli, workspace: Path) -> None:
    program(workspace)
    (workspace / "in.jsonl").write_text(ROWS, encoding="utf-8")
    status, out, err = cli("batch", "d.sexp", "--data", "in.jsonl", "--out", "/dev/full")
    assert (status, out) == (1, ""), err
    assert re.fullmatch(
        r"batch: ([0-9a-f]{12})\nerror: cannot write '/dev/full': No space left on device"
        r" \(the batch stopped; resume with: sexp batch d\.sexp --resume \1\)\n",
        err,
    ), err


def test_a_full_disk_leaves_whole_lines_only(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk with room for 150 bytes of OUT: the line that does not fit is taken back whole."""
    program(workspace)
    data = workspace / "in.jsonl"
    data.write_text(ROWS, encoding="utf-8")
    target = workspace / "o.jsonl"
    real_write = os.write

    def disk_write(fd: int, data: bytes) -> int:  # a disk that fills up at 150 bytes of o.jsonl
        if os.readlink(f"/proc/self/fd/{fd}") != str(target):
            return real_write(fd, data)
        room = 150 - os.lseek(fd, 0, os.SEEK_CUR)
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data[:room]))

    monkeypatch.setattr(out_file.os, "write", disk_write)
    settings = load_settings(workspace, {"workspace": str(workspace), "quiet": True})
    options = BatchOptions(program=workspace / "d.sexp", data=data, out=target, concurrency=1)
    with pytest.raises(BatchError) as raised:
        run_batch(options, settings, io.StringIO())
    assert raised.value.message.startswith(f"cannot write '{target}': No space left on device (the batch")
    text = target.read_text(encoding="utf-8")
    assert text.endswith("\n") and [json.loads(line)["index"] for line in text.splitlines()] == [0]


def test_max_cost_holds_in_the_first_wave_of_concurrent_rows(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    """No max_tokens: each call reserves the model's largest output, so 32 rows starting at once
    pass the budget by one call's worth at most (each call costs 0.00075 at gpt-4o-mini's prices)."""
    server.script(
        Scripted("<output>hi</output>", usage={"prompt_tokens": 1000, "completion_tokens": 1000}, delay=0.2)
    )
    (workspace / "p.sexp").write_text(
        '(defatom greet (params (x int)) (instructions "Greet {{x}}"))\n(greet x)\n', encoding="utf-8"
    )
    (workspace / "in.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(32)))
    env = {
        "SEXP_API_BASE": server.base_url,
        "SEXP_MODEL": "openai/gpt-4o-mini",
        "OPENAI_API_KEY": "sk-test-cost",
    }
    status, _, err = cli(
        "batch", "p.sexp", "--data", "in.jsonl", "--concurrency", "32", "--max-cost", "0.003", env=env
    )
    rows = [json.loads(line) for line in (workspace / "p.results.jsonl").read_text().splitlines()]
    paid = [row for row in rows if row["status"] == "ok"]
    assert status == 1 and len(rows) == 32 and len(paid) == len(server.requests) >= 4, err
    assert sum(row["cost_usd"] for row in rows) <= 0.003 + 0.00075 + 1e-9
    refused = [row for row in rows if row["status"] == "error"]
    assert all("RESOURCE_EXHAUSTION" in row["error"] for row in refused)
