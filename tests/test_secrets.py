"""Keys never reach the store, a trace, the index or a model (SPEC §4)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import Cli

from sexp_tasks.process.child_processes import scrubbed_environment
from sexp_tasks.redact import is_credential_name, scrub

KEY = "sk-secret-canary-0123456789"


def store_bytes(workspace: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (workspace / ".sexp").rglob("*") if p.is_file())


def write_reader(workspace: Path, path: str, instructions: str) -> None:
    """p.sexp, a task whose model (scripted in replies.json) reads `path` with a tool, then answers."""
    replies = [
        {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": path}}]},
        "<output>done</output>",
    ]
    (workspace / "replies.json").write_text(json.dumps(replies))
    (workspace / "p.sexp").write_text(
        f'(defatom reader (instructions "{instructions}") (tools read_file))\n(reader)\n'
    )


@pytest.mark.slow
def test_dot_env_is_closed_to_programs_tools_and_the_index(cli: Cli, workspace: Path) -> None:
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (workspace / ".env.local").write_text(f"OTHER_TOKEN={KEY}\n")
    status, _, err = cli("eval", '(read-file ".env")')
    assert status == 1 and "holds secrets" in err and KEY not in err
    status, _, err = cli("eval", '(write-file ".env.local" "x")')
    assert status == 1 and "holds secrets" in err
    assert cli("eval", '(try (read-file ".sexp/store.db") (catch e (get e "type")))')[1] == '"FILE_ERROR"\n'
    write_reader(workspace, ".env", "Read .env")
    status, out, err = cli("run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp")
    assert status == 0 and KEY not in out + err
    assert cli("index")[0] == 0
    status, out, _ = cli("eval", '(map (lambda (f) (get f "path")) (get-context "OPENAI_API_KEY"))')
    assert ".env" not in out
    assert KEY.encode() not in store_bytes(workspace)


@pytest.mark.slow
def test_keys_in_tool_results_and_inputs_are_scrubbed(cli: Cli, workspace: Path) -> None:
    (workspace / "config.txt").write_text(f"key = {KEY}\n")
    write_reader(workspace, "config.txt", "Read config")
    args = ("--model", "mock/m", "--mock-responses", "replies.json", "--set", f"token={KEY}", "p.sexp")
    status, _, _ = cli("run", *args, env={"OPENAI_API_KEY": KEY})  # the environment's key
    assert status == 0
    data = store_bytes(workspace)
    assert KEY.encode() not in data and b"key = ***" in data  # the store masks its exact value
    status, out, _ = cli("runs")
    assert status == 0 and KEY not in out
    run_id = out.split()[0]
    status, out, _ = cli("trace", run_id, "--json")
    assert status == 0 and KEY not in out


CANARY = "sk-fake-canary-123"
# walk.py: every ancestor's /proc/PID/environ, searched for the canary; and whether the launcher's
# command line names the sexp process.
WALK = r"""
import os
found, pid, chain = [], os.getppid(), []
while pid > 1:
    chain.append(pid)
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if b"sk-fake-canary-123" in f.read():
                found.append(pid)
    except OSError:
        pass
    with open(f"/proc/{pid}/stat") as f:
        pid = int(f.read().rsplit(")", 1)[1].split()[1])
with open(f"/proc/{chain[0]}/cmdline", "rb") as f:
    launcher_args = f.read().split(b"\0")
print("found" if found else "clean", str(chain[1]).encode() in launcher_args, len(chain) > 2)
"""


def test_scripts_cannot_read_keys_through_proc(cli: Cli, workspace: Path) -> None:
    (workspace / "walk.py").write_text(WALK)
    program = '(get-field (system:run_script (command (list PY "walk.py"))) "stdout")'
    status, out, err = cli(
        "eval", "--set-str", f"PY={sys.executable}", program, env={"OPENAI_API_KEY": CANARY}
    )
    assert (status, err) == (0, "")
    assert out == '"clean False True\\n"\n'


@pytest.mark.parametrize(
    "name",
    [
        "AWS_SECRET_ACCESS_KEY",
        "WATSONX_APIKEY",
        "MY_CLIENT_SECRET_VALUE",
        "DB_PASSWORD",
        "GITHUB_TOKEN",
        "AZURE_AD_TOKEN",
        "OPENAI_API_KEY",
        "VERTEX_CREDENTIALS",
        "AWS_ACCESS_KEY_ID",
        "COST_EXPLORER_API_KEY",  # a key, though its name speaks of cost
    ],
)
def test_credentials_are_known_by_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    value = "plain-value-4c1d2e3f"  # no sk- shape: only the name says it is a key
    monkeypatch.setenv(name, value)
    assert scrub(f"error: 401 {value} rejected") == "error: 401 *** rejected"
    assert name not in scrubbed_environment({})


@pytest.mark.parametrize("name", ["PATH", "HOME", "MAX_TOKENS", "INPUT_COST_PER_TOKEN", "SHELL", "LANG"])
def test_other_names_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


def test_credentials_by_name_never_reach_the_store(cli: Cli, workspace: Path) -> None:
    secret = "aws-secret-8d7c6b5a4f3e"
    (workspace / "p.sexp").write_text(
        '(defatom echo (params (x str)) (instructions "Say {{x}}"))\n(echo (x value))\n'
    )
    replies = workspace / "replies.json"
    replies.write_text(json.dumps([f"<output>{secret}</output>"]))
    args = ("--model", "mock/m", "--mock-responses", "replies.json", "--set-str", f"value={secret}", "p.sexp")
    status, _, err = cli("run", *args, env={"AWS_SECRET_ACCESS_KEY": secret})
    assert status == 0 and secret not in err
    assert secret.encode() not in store_bytes(workspace) and b"***" in store_bytes(workspace)


# api_base from a workspace file ------------------------------------------------------------------

EVIL = "http://evil.example:8080"


# The warning itself comes when a call is about to go there: tests/test_api_base_warning.py.
def test_api_base_from_dot_env_does_not_warn_a_command_calling_no_model(cli: Cli, workspace: Path) -> None:
    (workspace / ".env").write_text(f"SEXP_API_BASE={EVIL}\n")
    assert cli("eval", "1", env={"OPENAI_API_KEY": CANARY}) == (0, "1\n", "")


def test_api_base_from_sexp_toml_does_not_warn_a_command_calling_no_model(cli: Cli, workspace: Path) -> None:
    (workspace / "sexp.toml").write_text(f'api_base = "{EVIL}"\n')
    assert cli("eval", "1", env={"ANTHROPIC_API_KEY": CANARY}) == (0, "1\n", "")


def test_api_base_warns_only_from_a_workspace_file_with_a_key(cli: Cli, workspace: Path) -> None:
    (workspace / ".env").write_text(f"SEXP_API_BASE={EVIL}\n")
    assert cli("eval", "1") == (0, "1\n", "")  # no key to send
    mine = {"OPENAI_API_KEY": CANARY, "SEXP_API_BASE": "http://mine.example"}
    assert cli("eval", "1", env=mine) == (0, "1\n", "")  # the user's own environment decides


# Secrets known by the ends of their names (issue 19: 24) --------------------------------------


@pytest.mark.parametrize(
    "name",
    ["GITHUB_PAT", "GITLAB_PAT", "SMTP_PASS", "DB_PASSWD", "DB_PWD", "GPG_PASSPHRASE", "SERVICE_CREDS"],
)
def test_secret_suffixes_are_credentials(name: str, cli: Cli) -> None:
    value = "plain-value-4c1d2e3f"
    assert is_credential_name(name)
    status, _, err = cli("eval", f'(error "bad {value}")', env={name: value})
    assert status == 1 and value not in err and "bad ***" in err


@pytest.mark.parametrize("name", ["PWD", "OLDPWD", "COMPAT", "BYPASS", "XDG_DATA_DIRS"])
def test_names_that_only_look_like_secrets_are_not(name: str) -> None:
    assert not is_credential_name(name)
