"""OpenTelemetry export (SPEC §11.4): spans of the run, its task calls, model turns, tool calls and
scripts, sent over OTLP/HTTP to a real receiver on 127.0.0.1 (tests/otlp_receiver.py decodes the
protobuf export with opentelemetry-proto), against the local OpenAI-compatible server.

Checked: the span tree, the GenAI conventions' attributes and ours, message content only with
otel_content, no key anywhere in the bytes received, `sexp run --otel` as a real process, an
endpoint that is down (the run still succeeds, with a warning, quickly), a batch's rows under
one batch span, and the clear error when the otel extra is missing."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, Cli, scaled, sexp_env, spawn_sexp, wait_for, write
from llm_server import LLMServer, Scripted

pytest.importorskip(
    "opentelemetry.sdk", reason="the otel extra is not installed (pip install 'sexp-tasks[otel]')"
)
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from otlp_receiver import OtlpReceiver, ReceivedSpan  # noqa: E402

import sexp_tasks  # noqa: E402
from sexp_tasks.errors import SettingsError  # noqa: E402

KEY = "sk-fake-otel-provider-0123456789"
SCRIPT_KEY = "sk-fake-otel-script-9876543210"
PASSWORD = "otelpass-4f9a2c71"
ERROR = 2  # the protobuf Status code of an error

TEMPLATE = """<task name="echo" type="atomic">
  <description>Echo a value</description>
  <instructions>Echo {{x}}</instructions>
  <inputs><input name="x" type="string">the value</input></inputs>
  <tools><tool>read_file</tool></tools>
  <generation><temperature>0.25</temperature><max_tokens>64</max_tokens></generation>
</task>
"""

# A script (its env holding a key), then two task calls in pmap branches; the first branch's
# model reads a file with a tool before answering (the server answers in arrival order, so the
# branches take turns: they are sequential here, concurrency 1).
PROGRAM = f"""(system:run_script (command "echo hi") (env (dict "SERVICE_TOKEN" "{SCRIPT_KEY}")))
(pmap (lambda (x) (task-content (echo :x x))) (list "first" "second"))
"""


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


@pytest.fixture
def project(workspace: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with the echo template, a file to read and the program; the server's replies:
    a tool call, then the answers."""
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    write(workspace / "notes.txt", "the notes")
    write(workspace / "sexp.toml", "concurrency = 1\n")
    server.script(
        Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}]),
        "<output>ONE</output>",
        "<output>TWO</output>",
    )
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    base = server.base_url.replace("http://", f"http://sexp:{PASSWORD}@")
    monkeypatch.setenv("SEXP_API_BASE", base)
    monkeypatch.setenv("SEXP_MODEL", "openai/test-model")
    return write(workspace / "p.sexp", PROGRAM)


def run_program(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch, **settings: object
) -> None:
    """Run the program as a recorded run through the API, exporting to the receiver, then close."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    session = sexp_tasks.Session(**settings)  # type: ignore[arg-type]
    assert session.run_file(project, recorded=True) == ["ONE", "TWO"]
    session._runtime.close_telemetry()


def only(spans: list[ReceivedSpan]) -> ReceivedSpan:
    assert len(spans) == 1, [span.name for span in spans]
    return spans[0]


def test_spans_nest_as_the_run_ran(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_program(project, receiver, monkeypatch)
    run = only(receiver.named("sexp.run"))
    assert run.parent_id == "" and run.attributes["sexp.status"] == "completed"
    assert run.resource["service.name"] == "sexp-tasks"
    script = only(receiver.named("sexp.script"))
    assert receiver.parent(script) == run and script.attributes["sexp.script.command"] == "echo hi"
    tasks = receiver.named("invoke_agent echo")
    assert len(tasks) == 2 and all(receiver.parent(task) == run for task in tasks)  # pmap's branches
    chats = receiver.named("chat openai/test-model")
    assert len(chats) == 3 and {receiver.parent(chat).name for chat in chats} == {"invoke_agent echo"}  # type: ignore[union-attr]
    tool = only(receiver.named("execute_tool read_file"))
    with_tool = receiver.parent(tool)
    assert with_tool in tasks
    assert sorted(chat.attributes["sexp.turn"] for chat in chats if receiver.parent(chat) == with_tool) == [
        1,
        2,
    ]
    assert {span.trace_id for span in receiver.received()} == {run.trace_id}
    run_id = run.attributes["sexp.run_id"]
    assert all(span.attributes["sexp.run_id"] == run_id for span in receiver.received())


def test_spans_carry_the_genai_conventions_and_ours(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_program(project, receiver, monkeypatch)
    chat = receiver.named("chat openai/test-model")[-1]
    attributes = chat.attributes
    assert chat.kind == 3  # SPAN_KIND_CLIENT
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == "openai/test-model"
    assert attributes["gen_ai.response.model"] == "test-model"
    assert attributes["gen_ai.request.temperature"] == 0.25
    assert attributes["gen_ai.request.max_tokens"] == 64
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (10, 5)
    assert attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert attributes["sexp.source"] == "paid" and attributes["sexp.reused"] is False
    assert isinstance(attributes["sexp.cost_usd"], float) and "sexp.step" in attributes
    task = receiver.parent(chat)
    assert task is not None and task.attributes["sexp.task"] == "echo"
    assert (
        task.attributes["gen_ai.operation.name"] == "invoke_agent"
        and task.attributes["sexp.status"] == "COMPLETE"
    )
    assert task.attributes["sexp.step"] == attributes["sexp.step"]  # the turn is journaled under its task
    tool = only(receiver.named("execute_tool"))
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "read_file"


def test_content_is_left_out_unless_asked_for(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_program(project, receiver, monkeypatch)
    content = (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    )
    assert not any(name in span.attributes for span in receiver.received() for name in content)
    assert b"Echo first" not in receiver.raw() and b"the notes" not in receiver.raw()


def test_content_is_there_with_otel_content(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch, server: LLMServer
) -> None:
    run_program(project, receiver, monkeypatch, otel_content=True)
    first = receiver.named("chat")[0].attributes
    messages = json.loads(first["gen_ai.input.messages"])
    assert messages[0]["role"] == "user" and "Echo first" in messages[0]["parts"][0]["content"]
    assert json.loads(first["gen_ai.system_instructions"])[0]["type"] == "text"
    calls = json.loads(first["gen_ai.output.messages"])[0]["parts"]
    assert calls[0]["type"] == "tool_call" and calls[0]["name"] == "read_file"
    tool = only(receiver.named("execute_tool")).attributes
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"path": "notes.txt"}
    assert tool["gen_ai.tool.call.result"] == "the notes"


def test_no_key_reaches_the_receiver(
    project: Path, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The provider key, a key in a script's env and the api_base's password: in no byte sent,
    even with content on and the key in a prompt."""
    write(workspace / "p.sexp", PROGRAM.replace('(list "first" "second")', f'(list "first {KEY}" "second")'))
    run_program(project, receiver, monkeypatch, otel_content=True)
    raw = receiver.raw()
    assert raw and b"Echo first" in raw  # content was sent
    for secret in (KEY, SCRIPT_KEY, PASSWORD):
        assert secret.encode() not in raw


def test_failed_calls_set_an_error_status(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    server.script(Scripted(status=500, error={"message": "the server broke", "type": "server_error"}))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    session = sexp_tasks.Session(model="openai/test-model", api_base=server.base_url, max_retries=0)
    result = session.eval('(echo :x "a")')
    session._runtime.close_telemetry()
    assert result.failed  # type: ignore[union-attr]
    chat, task = only(receiver.named("chat")), only(receiver.named("invoke_agent"))
    assert receiver.parent(chat) == task and task.parent_id == ""  # no run: the task call is the root
    for span in (chat, task):
        assert span.status_code == ERROR and span.attributes["error.type"] == "TASK_FAILURE"
        assert "the server broke" in span.status_message


def test_a_tool_s_error_answer_is_an_error_span(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    missing = Scripted(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "gone.txt"}}])
    server.script(missing, "<output>A</output>")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    session = sexp_tasks.Session(model="openai/test-model", api_base=server.base_url)
    assert session.eval('(task-content (echo :x "a"))') == "A"  # the model saw the error and answered
    session._runtime.close_telemetry()
    tool = only(receiver.named("execute_tool read_file"))
    assert tool.status_code == ERROR and tool.attributes["error.type"] == "tool_error"
    assert "gone.txt" in tool.status_message
    assert only(receiver.named("invoke_agent")).status_code != ERROR


def test_an_answer_from_the_cache_says_so(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sexp.source and sexp.reused: a paid turn, then the same request answered from the cache."""
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    server.script("<output>A</output>")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    session = sexp_tasks.Session(model="openai/test-model", api_base=server.base_url, cache=True)
    write(workspace / "p.sexp", '(task-content (echo :x "a"))\n')
    assert session.run_file("p.sexp", recorded=True) == "A"
    assert session.run_file("p.sexp", recorded=True) == "A"
    session._runtime.close_telemetry()
    assert len(server.requests) == 1
    sources = [
        (chat.attributes["sexp.source"], chat.attributes["sexp.reused"]) for chat in receiver.named("chat")
    ]
    assert sorted(sources) == [("cached", True), ("paid", False)]


def test_otel_in_sexp_toml_turns_it_on(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """otel = true with the endpoint given the standard way, in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT."""
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    write(workspace / "sexp.toml", 'otel = true\nmodel = "openai/test-model"\n')
    server.script("<output>A</output>")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint + "/v1/traces")
    session = sexp_tasks.Session(api_base=server.base_url)
    assert session.eval('(task-content (echo :x "a"))') == "A"
    session._runtime.close_telemetry()
    assert only(receiver.named("chat")).attributes["gen_ai.usage.output_tokens"] == 5


def test_sexp_run_otel_exports_from_a_real_process(
    cli: Cli, project: Path, receiver: OtlpReceiver, server: LLMServer
) -> None:
    env = {"OPENAI_API_KEY": KEY, "SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    status, out, err = cli("run", "--otel", "p.sexp", env=env)
    assert (status, err) == (0, "")
    assert '"ONE"' in out
    run = only(receiver.named("sexp.run"))
    assert len([span for span in receiver.named("invoke_agent") if receiver.parent(span) == run]) == 2
    assert KEY.encode() not in receiver.raw()


def interrupted_at_the_model_call(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, key: str
) -> str:
    """`sexp run --otel p.sexp` sent SIGINT once the server has its model call; its stderr, the
    exit 130 and no traceback checked."""
    env = {"OPENAI_API_KEY": key, "SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    process = spawn_sexp("run", "--otel", "p.sexp", cwd=workspace, env=env, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: server.requests, 60, "the model call")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=scaled(60))
    finally:
        process.kill()
    assert process.returncode == 130 and "Traceback" not in err
    return err


def test_ctrl_c_sends_the_spans_of_the_interrupted_run(
    workspace: Path, project: Path, receiver: OtlpReceiver, server: LLMServer
) -> None:
    """Interrupted while a model call is in flight, `sexp run --otel` still sends what ran: the
    script's span, and the run's, with status ERROR (interrupted)."""
    # the first call's answer is long enough in coming to be interrupted (the server waits it
    # out); the replies project scripted would let the run end before the interrupt lands
    server.queue.clear()
    server.script(Scripted(delay=scaled(8)))
    interrupted_at_the_model_call(workspace, server, receiver, KEY)
    # the spans were written before the process ended; the receiver may read them a little later
    run = only(wait_for(lambda: receiver.named("sexp.run"), 10, "the interrupted run's span"))
    assert run.status_code == ERROR and run.attributes["error.type"] == "interrupted"
    script = wait_for(lambda: receiver.named("sexp.script"), 10, "the script's span")
    assert receiver.parent(only(script)) == run


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_endpoint_that_is_down_costs_a_warning_not_the_run(
    cli: Cli, project: Path, server: LLMServer
) -> None:
    env = {"OPENAI_API_KEY": KEY, "SEXP_API_BASE": server.base_url, "SEXP_MODEL": "openai/test-model"}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{unused_port()}"
    began = time.monotonic()
    status, out, err = cli("run", "--otel", "p.sexp", env=env)
    took = time.monotonic() - began
    assert status == 0 and '"ONE"' in out
    assert "warning: otel: spans were not exported to http://127.0.0.1:" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert took < scaled(20)  # the export timeout (3 s) once, not per span nor per retry


def test_a_batch_s_rows_are_under_one_batch_span(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    write(workspace / "p.sexp", "(task-content (echo :x x))\n")
    server.answer = lambda body: "<output>done</output>"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    rows = sexp_tasks.batch(
        "p.sexp",
        [{"x": str(i)} for i in range(4)],
        concurrency=2,
        model="openai/test-model",
        api_base=server.base_url,
    )
    assert [row["status"] for row in rows] == ["ok"] * 4
    batch = wait_for(lambda: receiver.named("sexp.batch"), 10, "the batch span")[0]
    assert batch.parent_id == "" and batch.attributes["sexp.rows"] == 4
    runs = receiver.named("sexp.run")
    assert len(runs) == 4 and all(receiver.parent(run) == batch for run in runs)
    assert {span.trace_id for span in receiver.received()} == {batch.trace_id}
    assert len(receiver.named("chat")) == 4


def without_opentelemetry(code: str, workspace: Path) -> subprocess.CompletedProcess[str]:
    """code run by a fresh Python in workspace (code itself makes opentelemetry unimportable)."""
    command, env = [sys.executable, "-c", code], sexp_env()
    return subprocess.run(command, cwd=workspace, capture_output=True, text=True, env=env, timeout=scaled(60))


def test_without_the_extra_otel_is_a_clear_error(workspace: Path) -> None:
    """The SDK made unimportable: `sexp eval --otel` names the extra to install; so does the API."""
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "from sexp_tasks.cli.main import main\n"
        "sys.exit(main(['eval', '--otel', '(+ 1 2)']))\n"
    )
    completed = without_opentelemetry(code, workspace)
    assert completed.returncode != 0, completed.stderr
    assert "pip install 'sexp-tasks[otel]'" in completed.stderr and "Traceback" not in completed.stderr
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "import sexp_tasks\n"
        "try:\n    sexp_tasks.Session(otel=True)\nexcept sexp_tasks.SexpError as err:\n    print(err)\n"
    )
    completed = without_opentelemetry(code, workspace)
    assert "pip install 'sexp-tasks[otel]'" in completed.stdout, completed.stderr


def test_off_by_default_opentelemetry_is_not_imported(workspace: Path, server: LLMServer) -> None:
    """A run that calls a model, with otel off: the SDK is never imported."""
    write(workspace / "tasks" / "echo.xml", TEMPLATE)
    code = (
        "import sys, sexp_tasks\n"
        f"s = sexp_tasks.Session(model='openai/test-model', api_base={server.base_url!r})\n"
        "assert s.eval('(task-content (echo :x \"a\"))') == 'ok'\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = sexp_env({"OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT)})
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(60),
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "[]\n"


def test_a_bad_otel_value_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="otel"):
        sexp_tasks.Session(otel="yes")  # type: ignore[arg-type]
