"""What a fresh review of issue 22 found leaking or waiting, fixed:

- a provider's error quoting the URL it failed to fetch (an image's or PDF's, with its password
  and signature) was kept verbatim in the store, `sexp trace --full` and spans;
- an MCP server's command-line secrets (`--token=X`) were printed in its failure messages;
- `sexp check` waited 60 s for a server that never answers, whatever its `timeout`, and once
  per file checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from llm_server import LLMServer, Scripted

from sexp_tasks.redact import mask_arguments, mask_url, mask_urls_in
from tests.conftest import run_cli

PASSWORD, SIGNATURE = "pdfpass77x", "pdfsig88x"
QUOTED = f"Unable to fetch image from URL url=https://bob:{PASSWORD}@example.com/r.pdf?sig={SIGNATURE}"


def test_a_provider_error_quoting_a_secret_url_is_kept_masked(workspace: Path, server: LLMServer) -> None:
    server.script(Scripted(status=400, error={"message": QUOTED, "type": "invalid_request_error"}))
    (workspace / "main.sexp").write_text(
        '(defatom ask (params) (instructions "Read it."))\n(print (get-field (ask) "status"))\n',
        encoding="utf-8",
    )
    env = {"OPENAI_API_KEY": "sk-fake-review-leaks", "SEXP_API_BASE": server.base_url}
    status, out, err = run_cli("run", "main.sexp", "--model", "openai/test-model", cwd=workspace, env=env)
    assert (status, out) == (0, "FAILED\n"), err
    run_id = run_cli("runs", cwd=workspace, env=env)[1].split()[0]
    _, trace, _ = run_cli("trace", run_id, "--full", cwd=workspace, env=env)
    assert "bob:***@example.com/r.pdf?sig=***" in trace  # the error is kept, its secrets masked
    stored = b"".join(path.read_bytes() for path in (workspace / ".sexp").glob("store.db*") if path.is_file())
    for secret in (PASSWORD, SIGNATURE):
        assert secret not in out + err + trace
        assert secret.encode() not in stored


def test_urls_in_text_are_masked_whole_and_a_fragment_s_token_too() -> None:
    assert mask_urls_in(f"{QUOTED}, then more") == (
        "Unable to fetch image from URL url=https://bob:***@example.com/r.pdf?sig=***, then more"
    )
    assert mask_url("https://h/a.png#access_token=frag123&x=1") == "https://h/a.png#access_token=***&x=1"
    assert mask_url("https://h/page#section") == "https://h/page#section"


def test_a_command_line_s_secret_options_are_masked() -> None:
    shown = mask_arguments(["srv", "--token=cmdtok66", "--api-key", "abc123def", "-v", "x", "https://u:pw9@h/"])
    assert shown == "srv --token=*** --api-key *** -v x https://u:***@h/"


def test_a_failing_server_s_message_hides_its_command_line_secret(workspace: Path) -> None:
    pytest.importorskip("mcp")
    command = [sys.executable, "-c", "import sys; sys.exit(3)", "--token=cmdtok66"]
    (workspace / "sexp.toml").write_text(f"[mcp.t]\ncommand = {json.dumps(command)}\ntimeout = 5\n")
    status, out, err = run_cli("tools", cwd=workspace)
    assert status != 0 and "MCP server 't'" in err and "--token=***" in err, err
    assert "cmdtok66" not in out + err


def test_check_waits_for_a_silent_server_its_own_timeout_once_for_every_file(workspace: Path) -> None:
    pytest.importorskip("mcp")
    silent = [sys.executable, "-c", "import time; time.sleep(600)"]
    (workspace / "sexp.toml").write_text(f"[mcp.t]\ncommand = {json.dumps(silent)}\ntimeout = 2\n")
    for name in ("a.sexp", "b.sexp"):
        (workspace / name).write_text('(defatom ask (params) (instructions "Go.") (tools t/add))\n(ask)\n')
    status, out, err = run_cli("check", "a.sexp", "b.sexp", cwd=workspace)
    assert (status, out) == (0, "a.sexp: ok\nb.sexp: ok\n"), err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, err  # the server was asked once, for both files
    assert "did not start within 2 s" in warnings[0]
