"""The answer cache (SPEC §11.2): with `--cache` (sexp.toml `cache = true`, the API's
`cache=True`) every completed paid answer is kept in the store by its request's fingerprint, and
any later run answers exactly that request from it without sending it; `sexp cache clear`
empties it. Checked against the local server (tests/llm_server.py), which counts requests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import Cli, store_rows, write
from llm_server import LLMServer, Scripted

import sexp_tasks

TEMPLATE = """<task name="t" type="atomic">
  <description>t</description>
  <instructions>{instructions}</instructions>
  {extra}
</task>
"""
SCHEMA = """<output_format type="json" native="always">
    <json_schema>{{"type": "object", "properties": {{"{key}": {{"type": "string"}}}}}}</json_schema>
  </output_format>"""
SUMMARY = re.compile(r"^run: [0-9a-f]{12} (\d+) model calls, .* s(.*)$", re.M)


@pytest.fixture
def server(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache")
    monkeypatch.setenv("SEXP_API_BASE", server.base_url)
    monkeypatch.setenv("SEXP_MODEL", "openai/test-model")
    monkeypatch.setenv("SEXP_RETRY_BASE_DELAY", "0.001")
    server.script('<output>{"a": "hi"}</output>')
    return server


def template(workspace: Path, instructions: str = "Say hi.", extra: str = "") -> None:
    write(workspace / "tasks" / "t.xml", TEMPLATE.format(instructions=instructions, extra=extra))


def ask(**settings: object) -> object:
    """One call of t in a new session with the cache on."""
    return sexp_tasks.run("(t)", cache=True, **settings)


def test_a_second_run_asks_nothing(server: LLMServer, workspace: Path, sexp_in_process: Cli) -> None:
    template(workspace)
    write(workspace / "p.sexp", "(task-content (t))\n")
    status, out, err = sexp_in_process("run", "p.sexp", "--cache", run_lines=True)
    assert (status, SUMMARY.search(err).groups()) == (0, ("1", "")), err
    status, again, err = sexp_in_process("run", "p.sexp", "--cache", run_lines=True)
    assert (status, again, SUMMARY.search(err).groups()) == (0, out, ("1", ", 1 cached"))
    assert len(server.requests) == 1
    run_id = re.search(r"^run: ([0-9a-f]{12})$", err, re.M).group(1)
    _, trace, _ = sexp_in_process("trace", run_id)
    assert trace.splitlines()[1].endswith("  [cached]")
    _, data, _ = sexp_in_process("trace", run_id, "--json")
    assert json.loads(data)["steps"][0]["turns"] == [{"source": "cached"}]
    status, _, _ = sexp_in_process("run", "p.sexp")  # the cache is off by default
    assert len(server.requests) == 2


def test_sexp_toml_and_the_api_turn_it_on_and_eval_uses_it(
    server: LLMServer, workspace: Path, sexp_in_process: Cli
) -> None:
    template(workspace)
    ask()
    write(workspace / "sexp.toml", "cache = true\n")
    status, out, _ = sexp_in_process("eval", "(task-content (t))")
    assert (status, len(server.requests)) == (0, 1), out
    assert json.loads(sexp_in_process("config", "--json")[1])["cache"] == {
        "value": True,
        "source": "sexp.toml",
    }
    write(workspace / "sexp.toml", 'cache = "yes"\n')
    status, _, err = sexp_in_process("eval", "1")
    assert (status, err) == (2, "error: sexp.toml: 'cache' has the wrong type (str); True or False\n")
    with pytest.raises(sexp_tasks.SexpError, match="'cache' has the wrong type"):
        sexp_tasks.run("1", cache="yes")


@pytest.mark.parametrize(
    ("changed", "settings"),
    [
        ("model", {"model": "openai/other-model"}),
        ("messages", {}),
        ("settings", {"generation": {"temperature": 0.5}}),
        ("tools", {}),
        ("schema", {}),
    ],
)
def test_a_request_that_differs_in_any_part_is_sent(
    server: LLMServer, workspace: Path, changed: str, settings: dict[str, object]
) -> None:
    extra = SCHEMA.format(key="a") if changed == "schema" else ""
    template(workspace, extra=extra)
    ask()
    ask()
    assert len(server.requests) == 1
    if changed == "messages":
        template(workspace, instructions="Say hi!")
    elif changed == "tools":
        template(workspace, extra="<tools><tool>read_file</tool></tools>")
    elif changed == "schema":
        template(workspace, extra=SCHEMA.format(key="b"))
    ask(**settings)
    assert len(server.requests) == 2  # sent: no cached answer was asked exactly this
    ask(**settings)
    assert len(server.requests) == 2  # and now it is kept too


@pytest.mark.parametrize(
    "failed",
    [
        Scripted(content="<output>cut off", finish_reason="length"),
        Scripted(content=""),
        Scripted(no_choices=True),
        Scripted(status=400, error={"message": "bad request", "type": "invalid_request_error"}),
    ],
    ids=["length", "empty", "no-choice", "error"],
)
def test_a_failed_answer_is_not_kept(server: LLMServer, workspace: Path, failed: Scripted) -> None:
    template(workspace)
    server.queue.clear()
    server.script(failed, '<output>{"a": "hi"}</output>')
    first = ask(max_retries=0)
    assert first.status == "FAILED"
    assert ask().status == "COMPLETE"
    assert ask().status == "COMPLETE"
    assert len(server.requests) == 2


def test_cache_clear_empties_it_and_says_how_many(
    server: LLMServer, workspace: Path, sexp_in_process: Cli
) -> None:
    assert sexp_in_process("cache", "clear") == (0, "cleared 0 cached answers\n", "")
    assert not (workspace / ".sexp").exists()  # no store: none is made
    status, _, err = sexp_in_process("cache")
    assert status == 2 and err.startswith("usage: sexp cache")
    template(workspace)
    write(workspace / "p.sexp", "(task-content (t))\n")
    assert sexp_in_process("run", "p.sexp")[0] == 0
    assert store_rows(workspace, "SELECT COUNT(*) FROM answers") == [
        (0,)
    ]  # the store's (migration 3); none kept
    assert sexp_in_process("cache", "clear") == (0, "cleared 0 cached answers\n", "")
    ask()
    sexp_tasks.run('(t :model "openai/two")', cache=True)
    assert sexp_in_process("cache", "clear", "--json") == (0, '{"answers": 2}\n', "")
    assert sexp_in_process("cache", "clear") == (0, "cleared 0 cached answers\n", "")
    ask()
    assert len(server.requests) == 4  # sent again once cleared
    assert sexp_in_process("cache", "clear") == (0, "cleared 1 cached answer\n", "")
