"""An api_base from a workspace file is warned about once, when a call is about to go there, from
the command line, the REPL and the Python API alike; passwords in it are never shown (issue 19: 10, 24)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Cli
from llm_server import LLMServer

from sexp_tasks.redact import mask_url

KEY = "sk-test-api-base-0123456789"
PROGRAM = (
    '(defatom ask (params (n int)) (instructions "Say {{n}}"))\n'
    "(pmap (lambda (n) (task-content (ask n))) (list 1 2 3))\n"
)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    running = LLMServer().start()
    running.script("<output>ok</output>")
    yield running
    running.stop()


def warning(url: str, origin: str) -> str:
    return f"warning: api_base {url} comes from {origin}; your provider key will be sent there"


def warnings_in(err: str) -> list[str]:
    return [line for line in err.splitlines() if "your provider key will be sent there" in line]


@pytest.mark.parametrize("origin", ["./sexp.toml", "./.env"])
def test_a_command_that_calls_no_model_does_not_warn(cli: Cli, workspace: Path, origin: str) -> None:
    write_api_base(workspace, origin, "http://evil.example:8080/v1")
    env = {"OPENAI_API_KEY": KEY}
    assert cli("eval", "(+ 1 2)", env=env) == (0, "3\n", "")
    status, _, err = cli("runs", env=env)
    assert status == 0 and not warnings_in(err)
    (workspace / "r.json").write_text(json.dumps(["<output>hi</output>"]))
    status, _, err = cli("eval", PROGRAM, "--model", "mock/m", "--mock-responses", "r.json", env=env)
    assert status == 0 and not warnings_in(err)  # a mock model sends nothing anywhere


@pytest.mark.parametrize("origin", ["./sexp.toml", "./.env"])
def test_a_run_that_calls_the_host_warns_once(
    cli: Cli, workspace: Path, server: LLMServer, origin: str
) -> None:
    write_api_base(workspace, origin, server.base_url)
    (workspace / "p.sexp").write_text(PROGRAM)
    status, out, err = cli("run", "p.sexp", "--model", "openai/test", env={"OPENAI_API_KEY": KEY})
    assert (status, out) == (0, '("ok" "ok" "ok")\n'), err
    assert len(server.requests) == 3
    assert warnings_in(err) == [warning(server.base_url, origin)]


def test_the_repl_warns_once_when_it_calls_the_host(workspace: Path, server: LLMServer) -> None:
    write_api_base(workspace, "./sexp.toml", server.base_url)
    inputs = "(+ 1 2)\n" + PROGRAM + "(task-content (ask 4))\n"
    done = subprocess.run(
        [sys.executable, "-m", "sexp_tasks", "--model", "openai/test"],
        input=inputs, capture_output=True, text=True, cwd=workspace, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert done.stdout.splitlines()[0] == "3"
    assert len(server.requests) == 4
    assert warnings_in(done.stderr) == [warning(server.base_url, "./sexp.toml")]


def test_the_python_api_warns_about_a_workspace_api_base(workspace: Path, server: LLMServer) -> None:
    write_api_base(workspace, "./sexp.toml", server.base_url)
    code = (
        "import sexp_tasks\n"
        "s = sexp_tasks.Session(model='openai/test')\n"
        "print(s.eval('(+ 1 2)'), flush=True)\n"
        f"print(s.eval({PROGRAM!r}))\n"
        "print(s.eval('(task-content (ask 9))'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=workspace, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "3\n['ok', 'ok', 'ok']\nok\n"
    assert warnings_in(done.stderr) == [warning(server.base_url, "./sexp.toml")]


# Passwords in api_base ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://user:hunter2pass@proxy.example/v1", "https://user:***@proxy.example/v1"),
        ("https://ghp_tokenvalue123@proxy.example/v1", "https://***@proxy.example/v1"),
        (
            "https://proxy.example/v1?api_key=abc123456&region=eu",
            "https://proxy.example/v1?api_key=***&region=eu",
        ),
        (
            "https://proxy.example/v1?key=abc&token=def&sig=ghi",
            "https://proxy.example/v1?key=***&token=***&sig=***",
        ),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("not a url", "not a url"),
    ],
)
def test_mask_url_hides_userinfo_and_key_like_parameters(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_config_and_the_warning_never_show_a_password_in_api_base(
    cli: Cli, workspace: Path, server: LLMServer
) -> None:
    secret_url = server.base_url.replace("http://", "http://user:hunter2pass@") + "?api_key=zzz999"
    write_api_base(workspace, "./sexp.toml", secret_url)
    env = {"OPENAI_API_KEY": KEY}
    status, out, _ = cli("config", env=env)
    assert status == 0 and "hunter2pass" not in out and "zzz999" not in out
    assert "user:***@127.0.0.1" in out
    status, out, _ = cli("config", "--json", env=env)
    assert json.loads(out)["api_base"]["value"].startswith("http://user:***@")
    write_api_base(workspace, "./sexp.toml", server.base_url.replace("http://", "http://user:hunter2pass@"))
    status, _, err = cli("eval", PROGRAM, "--model", "openai/test", env=env)
    assert status == 0 and "hunter2pass" not in err
    assert warnings_in(err) == [
        warning(server.base_url.replace("http://", "http://user:***@"), "./sexp.toml")
    ]


def write_api_base(workspace: Path, origin: str, url: str) -> None:
    if origin == "./sexp.toml":
        (workspace / "sexp.toml").write_text(f'api_base = "{url}"\n')
    else:
        (workspace / ".env").write_text(f"SEXP_API_BASE={url}\n")


def test_a_batch_warns_once_for_all_its_rows(cli: Cli, workspace: Path, server: LLMServer) -> None:
    write_api_base(workspace, "./sexp.toml", server.base_url)
    (workspace / "p.sexp").write_text(
        '(defatom ask (params (n int)) (instructions "Say {{n}}"))\n(task-content (ask n))\n'
    )
    (workspace / "in.jsonl").write_text("".join(f'{{"n": {n}}}\n' for n in range(4)))
    status, _, err = cli(
        "batch", "p.sexp", "--data", "in.jsonl", "--model", "openai/test", env={"OPENAI_API_KEY": KEY}
    )
    assert status == 0, err
    assert len(server.requests) == 4
    # written by the row whose call went there first, so labelled as what rows write is (docs/batch.md)
    (line,) = warnings_in(err)
    assert re.fullmatch(r"row \d: (.*)", line)[1] == warning(server.base_url, "./sexp.toml")  # type: ignore[index]


def test_quiet_does_not_hide_where_the_key_goes(cli: Cli, workspace: Path, server: LLMServer) -> None:
    write_api_base(workspace, "./sexp.toml", server.base_url)
    status, out, err = cli(
        "eval", "-q", "--json", PROGRAM, "--model", "openai/test", env={"OPENAI_API_KEY": KEY}
    )
    assert (status, out) == (0, '["ok", "ok", "ok"]\n'), err
    assert warnings_in(err) == [warning(server.base_url, "./sexp.toml")]
