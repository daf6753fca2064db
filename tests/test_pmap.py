"""pmap (SPEC §3.6) and the progress reporter (§7, §9): order, the concurrency bound, failed
elements in place, tasks on mock and real HTTP models, the run's cost budget, Ctrl-C, and the
bar drawn on a terminal but never into a pipe."""

from __future__ import annotations

import contextvars
import io
import json
import os
import random
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pexpect
import pytest
from conftest import scaled, spawn_sexp_pty, wait_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_server import LLMServer, Scripted

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.lang.deepstack import run_with_deep_stack
from sexp_tasks.lang.values import Primitive
from sexp_tasks.results import COMPLETE, FAILED, TaskResult
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.progress import Progress, progress

ROOT = Path(__file__).resolve().parent.parent
ECHO = '(defatom echo (params x) (instructions "Echo {{x}}"))'


def make_runtime(workspace: Path, **options: Any) -> Runtime:
    return Runtime(Settings(workspace=str(workspace), **options), out=io.StringIO(), err=io.StringIO())


def evaluate(rt: Runtime, text: str) -> Any:
    return run_with_deep_stack(lambda: rt.run_source(text, "<test>"))


class InFlight:
    """A Python procedure that sleeps a little and counts how many of its calls overlap."""

    def __init__(self, delay: Callable[[], float]) -> None:
        self.delay = delay
        self.now = 0
        self.most = 0
        self.started: list[Any] = []
        self.lock = threading.Lock()

    def __call__(self, x: Any) -> Any:
        with self.lock:
            self.started.append(x)
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.delay())
        with self.lock:
            self.now -= 1
        return x

    def install(self, rt: Runtime, name: str = "slow") -> None:
        rt.define(name, Primitive(name, self, 1, 1, "sleeps, then returns its argument"))


# Order, the bound, failures ------------------------------------------------------------------


def test_order_is_kept_under_random_delays_and_the_bound_holds(workspace: Path) -> None:
    rt = make_runtime(workspace)
    slow = InFlight(lambda: random.uniform(0.02, 0.05))
    slow.install(rt)
    assert evaluate(rt, "(pmap slow (range 40) :concurrency 4)") == list(range(40))
    assert slow.most == 4
    assert sorted(slow.started) == list(range(40))  # each element called once


def test_default_concurrency_comes_from_settings(workspace: Path) -> None:
    rt = make_runtime(workspace, concurrency=3)
    slow = InFlight(lambda: 0.02)
    slow.install(rt)
    assert evaluate(rt, "(pmap slow (range 12))") == list(range(12))
    assert slow.most == 3


def test_the_default_is_eight(workspace: Path) -> None:
    rt = make_runtime(workspace)
    slow = InFlight(lambda: 0.1)
    slow.install(rt)
    evaluate(rt, "(pmap slow (range 20))")
    assert slow.most == 8


def test_concurrency_one_runs_one_at_a_time(workspace: Path) -> None:
    rt = make_runtime(workspace)
    slow = InFlight(lambda: 0.002)
    slow.install(rt)
    assert evaluate(rt, "(pmap slow (range 10) :concurrency 1)") == list(range(10))
    assert slow.most == 1


def test_a_raising_element_is_a_failed_result_in_its_place(runtime: Runtime) -> None:
    values = evaluate(runtime, '(pmap (lambda (x) (if (= x 2) (error "boom") (* x 10))) (range 5))')
    assert values[:2] == [0, 10] and values[3:] == [30, 40]
    failed = values[2]
    assert isinstance(failed, TaskResult) and failed.status == FAILED and failed.error is not None
    assert failed.error.type == "TASK_FAILURE" and failed.error.reason == "element_failure"
    assert "element 2" in failed.error.message and "boom" in failed.error.message
    assert failed.error.details == {
        "index": 2,
        "error": {"type": "USER_ERROR", "message": "boom", "line": 1, "column": 31},
    }


def test_a_failed_task_result_returned_by_f_stays_as_it_is(runtime: Runtime) -> None:
    program = '(progn (defatom typed (params (n int)) (instructions "n={{n}}")) (pmap typed (list "x" "y")))'
    values = evaluate(runtime, program)
    assert [v.error.reason for v in values] == ["input_validation_failure"] * 2


def test_errors_about_the_run_stop_pmap_instead_of_failing_elements(runtime: Runtime) -> None:
    with pytest.raises(SexpError, match="has no model"):
        evaluate(runtime, f"(progn {ECHO} (pmap echo (list 1 2 3)))")


def test_deep_recursion_runs_in_workers(runtime: Runtime) -> None:
    program = "(define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1))))) (pmap deep (list 9000 20 9500))"
    assert evaluate(runtime, program) == [9000, 20, 9500]


def test_nested_pmap_and_primitives(runtime: Runtime) -> None:
    assert evaluate(runtime, "(pmap (lambda (x) (pmap (lambda (y) (* x y)) (range 3))) (range 3))") == [
        [0, 0, 0],
        [0, 1, 2],
        [0, 2, 4],
    ]
    assert evaluate(runtime, "(pmap abs (list -1 2 -3))") == [1, 2, 3]


def test_elements_see_the_callers_context_variables(runtime: Runtime) -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    runtime.define("marker", Primitive("marker", lambda _: marker.get(), 1, 1, ""))
    token = marker.set("caller")
    try:
        assert runtime.run_source("(pmap marker (range 3))") == ["caller"] * 3
    finally:
        marker.reset(token)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("(pmap 5 (list 1))", "pmap: expected a procedure or task, got 5"),
        ("(pmap abs 5)", "pmap: expected a list as second argument, got 5"),
        ("(pmap abs (list 1) :concurrency 0)", "pmap: :concurrency must be a positive integer, got 0"),
        ("(pmap abs (list 1) :concurrency 1.5)", "must be a positive integer, got 1.5"),
        ('(pmap abs (list 1) :concurrency "2")', 'must be a positive integer, got "2"'),
        ("(pmap abs (list 1) :concurrency true)", "must be a positive integer, got true"),
        ("(pmap abs (list 1) :concurrency)", ":concurrency needs a value"),
        ("(pmap abs (list 1) :speed 2)", "unexpected argument :speed"),
        ("(pmap abs)", "pmap: expected 2 to 4 arguments, got 1"),
    ],
)
def test_bad_arguments_are_positioned_errors(runtime: Runtime, program: str, message: str) -> None:
    with pytest.raises(SexpError, match=re.escape(message)) as caught:
        evaluate(runtime, "\n  " + program)
    assert caught.value.span is not None and (caught.value.span.line, caught.value.span.column) == (2, 3)


def test_a_bad_concurrency_setting_is_named(workspace: Path) -> None:
    rt = make_runtime(workspace, concurrency=0)
    with pytest.raises(SexpError, match="the `concurrency` setting must be a positive integer"):
        evaluate(rt, "(pmap abs (list 1 2))")


def test_the_library_resolves_safely_from_several_threads(workspace: Path) -> None:
    """Prelude definitions are compiled on first use; workers may all use one first at once."""
    rt = make_runtime(workspace)
    compile_ = rt.compiler.compile

    def slow_compile(*args: Any) -> Any:  # widen the window the race needs
        time.sleep(0.05)
        return compile_(*args)

    rt.compiler.compile = slow_compile  # type: ignore[method-assign,assignment]
    values = evaluate(rt, "(pmap (lambda (x) (task-ok? x)) (range 4))")
    assert values == [False] * 4


@given(
    xs=st.lists(st.integers(-1000, 1000), max_size=12),
    body=st.sampled_from(["(* x x)", "(- x)", "(if (> x 0) (list x) x)", '(str x "!")', "(+ x 1.5)"]),
    n=st.integers(1, 5),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_pmap_equals_map_for_pure_functions(runtime: Runtime, xs: list[int], body: str, n: int) -> None:
    items = "(list " + " ".join(map(str, xs)) + ")"
    parallel = evaluate(runtime, f"(pmap (lambda (x) {body}) {items} :concurrency {n})")
    assert parallel == evaluate(runtime, f"(map (lambda (x) {body}) {items})")


# Tasks ----------------------------------------------------------------------------------------


def test_task_elements_on_a_mock_model(workspace: Path) -> None:
    replies = [f"<output>reply {i}</output>" for i in range(6)]
    (workspace / "replies.json").write_text(json.dumps(replies + ["<output>reply 6</output>"]))
    rt = make_runtime(workspace, model="mock/x", mock_responses=str(workspace / "replies.json"))
    values = evaluate(rt, f"(progn {ECHO} (pmap echo (range 6) :concurrency 3))")
    assert all(v.status == COMPLETE for v in values)
    assert sorted(v.content for v in values) == [f"reply {i}" for i in range(6)]  # each reply used once


def test_a_task_with_no_inputs_is_called_with_none(workspace: Path) -> None:
    rt = make_runtime(workspace, model="mock/x")
    values = evaluate(rt, '(progn (defatom hello (instructions "Say hi")) (pmap hello (list 1 2)))')
    assert [v.status for v in values] == [COMPLETE, COMPLETE]


def nap_then(rt: Runtime) -> None:
    """Bind `(nap x n)`: sleep longer for earlier elements (so later ones call first), then give x."""
    rt.define("nap", Primitive("nap", lambda x, n: time.sleep(0.03 * (n - x)) or x, 2, 2, "test double"))


def scripted(workspace: Path, replies: Any, **options: Any) -> Runtime:
    (workspace / "replies.json").write_text(json.dumps(replies))
    rt = make_runtime(workspace, model="mock/x", mock_responses=str(workspace / "replies.json"), **options)
    nap_then(rt)
    return rt


@pytest.mark.parametrize("form", ["object", "list"])
def test_mock_replies_go_to_pmap_elements_by_index_whatever_the_timing(workspace: Path, form: str) -> None:
    """SPEC §10.1: a template's replies go to its calls in program order, inside pmap by element
    index, so the same element gets the same reply every run although later elements ask first."""
    replies = [f"<output>reply {i}</output>" for i in range(6)]
    rt = scripted(workspace, {"echo": replies} if form == "object" else replies)
    program = f"(progn {ECHO} (pmap (lambda (x) (echo (nap x 6))) (range 6) :concurrency 6))"
    values = evaluate(rt, program)
    assert [v.content for v in values] == [f"reply {i}" for i in range(6)]
    assert rt.err.getvalue() == ""


def test_each_template_takes_its_own_replies_in_program_order(workspace: Path) -> None:
    rt = scripted(
        workspace,
        {
            "echo": ["<output>e0</output>", "<output>e1</output>", "<output>e2</output>"],
            "shout": ["<output>S</output>"],
        },
    )
    program = f"""(progn {ECHO} (defatom shout (params x) (instructions "Shout {{{{x}}}}"))
      (list (echo 1)
            (pmap (lambda (x) (list (shout (nap x 2)) (echo x))) (list 0 1))
            (echo 2)))"""
    first, pair, last = evaluate(rt, program)
    # before the pmap: e0; inside it, element 0 then element 1 (by index, not by arrival): e1, e2
    assert [first.content, [[r.content for r in p] for p in pair], last.content] == [
        "e0",
        [["S", "e1"], ["S", "e2"]],
        "e2",  # ran out: the last reply again
    ]
    warned = rt.err.getvalue().splitlines()
    assert warned == [
        "warning: mock responses for shout ran out; repeating the last",
        "warning: mock responses for echo ran out; repeating the last",
    ]


def test_program_order_numbers_by_element_index_then_goes_on_past_the_batch() -> None:
    from sexp_tasks.run_context import Batch, ProgramOrder, RunContext, within

    order = ProgramOrder()

    def take_in(element: Any, key: str = "k") -> int:
        with within(RunContext(element=element)):
            return order.take(key)

    assert [order.take("k"), order.take("k"), order.take("other")] == [0, 1, 0]
    batch = Batch(3, None)
    e0, e1, e2 = (batch.element(i) for i in range(3))
    # element 2 asks first; each element's first occurrence, by index, then each one's second
    assert [take_in(e2), take_in(e0), take_in(e0), take_in(e1)] == [4, 2, 5, 3]
    inner = Batch(2, e1)  # a pmap inside element 1: its numbers are element 1's, spread likewise
    assert [take_in(inner.element(1)), take_in(inner.element(0))] == [3 + 3 * 2, 3 + 3 * 1]
    assert [e0.path, inner.element(1).path] == ["[0]", "[1][1]"]
    assert order.take("k") == 10  # after the batch, past the highest number it took


def test_a_short_list_warns_once_when_it_runs_out(workspace: Path) -> None:
    rt = scripted(workspace, ["<output>a</output>", "<output>b</output>"])
    values = evaluate(rt, f"(progn {ECHO} (list (echo 1) (echo 2) (echo 3) (echo 4)))")
    assert [v.content for v in values] == ["a", "b", "b", "b"]
    assert rt.err.getvalue() == "warning: mock responses for echo ran out; repeating the last\n"


def test_a_template_without_replies_in_the_object_is_named(workspace: Path) -> None:
    rt = scripted(workspace, {"ecko": ["<output>a</output>"]})
    with pytest.raises(SexpError, match="no replies for task 'echo'.*did you mean 'ecko'"):
        evaluate(rt, f"(progn {ECHO} (echo 1))")


@pytest.mark.parametrize("empty", ["[]", "{}", '{"echo": []}'])
def test_empty_mock_responses_are_a_usage_error(cli: Any, workspace: Path, empty: str) -> None:
    (workspace / "replies.json").write_text(empty)
    code, out, err = cli("eval", "(+ 1 2)", "--model", "mock/x", "--mock-responses", "replies.json")
    assert (code, out) == (2, "")
    assert err.startswith("error: --mock-responses: ") and "replies.json" in err and "no replies" in err


class EchoServer:
    """An OpenAI-compatible server answering `Echo X` with `echo X` after a delay; counts overlap."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        text = user if isinstance(user, str) else json.dumps(user)
        found = re.search(r"Echo (\S+)", text)
        word = found.group(1) if found else "?"
        content = f"<output>echo {word}</output><notes><data_usage>-</data_usage></notes>"
        return {
            "id": "chatcmpl-echo",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "gpt-4o-mini"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with server.lock:
                    server.requests += 1
                    server.now += 1
                    server.most = max(server.most, server.now)
                try:
                    time.sleep(server.delay)
                    data = json.dumps(server.answer(body)).encode()
                finally:
                    with server.lock:
                        server.now -= 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@pytest.fixture
def echo_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EchoServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-pmap-test")
    server = EchoServer(delay=0.2)
    server.thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()
    server.thread.join(timeout=5)


def test_tasks_over_real_http_keep_order_and_the_bound(echo_server: EchoServer, workspace: Path) -> None:
    rt = make_runtime(workspace, model="openai/gpt-4o-mini", api_base=echo_server.base_url)
    words = [f"w{i}" for i in range(9)]
    program = f"(progn {ECHO} (pmap echo (list {' '.join(map(json.dumps, words))}) :concurrency 3))"
    values = evaluate(rt, program)
    assert [v.status for v in values] == [COMPLETE] * 9, [v.error for v in values]
    assert [v.content for v in values] == [f"echo {w}" for w in words]
    assert echo_server.requests == 9 and echo_server.most == 3
    assert all(v.notes["cost_usd"] > 0 for v in values)  # litellm priced the usage the server reported


@pytest.fixture
def priced(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> Iterator[Priced]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-pmap-test")
    server = LLMServer().start()
    yield Priced(server, workspace)
    server.stop()


class Priced:
    """The local server answering echo calls as a priced model would, with usage that matches the
    prompt (as a provider counts it) and OUTPUT tokens of answer: each call's real cost is known."""

    MODEL = "openai/gpt-4o-mini"
    OUTPUT = 10

    def __init__(self, server: LLMServer, workspace: Path) -> None:
        import litellm

        from sexp_tasks.handler import tokens

        self.server = server
        self.workspace = workspace
        server.script("<output>calibrated</output>")
        evaluate(self.runtime(), f"(progn {ECHO} (echo 10))")
        prompt = tokens.count_messages(server.requests.pop().body["messages"])
        server.script(
            Scripted(
                "<output>echo</output>",
                usage={"prompt_tokens": prompt, "completion_tokens": self.OUTPUT},
                delay=0.3,
            )
        )
        self.prompt_cost, self.output_cost = litellm.cost_per_token(
            model=self.MODEL, prompt_tokens=prompt, completion_tokens=self.OUTPUT
        )

    def runtime(self, **options: Any) -> Runtime:
        return make_runtime(self.workspace, model=self.MODEL, api_base=self.server.base_url, **options)

    def run(self, budget: float, program: str) -> tuple[list[TaskResult], list[TaskResult], float]:
        """The paid and the refused results of program under the budget, and what was spent."""
        values = evaluate(self.runtime(max_cost_usd=budget), f"(progn {ECHO} {program})")
        paid = [v for v in values if v.status == COMPLETE]
        refused = [v for v in values if v.status == FAILED]
        assert len(paid) + len(refused) == len(values) and len(paid) == len(self.server.requests)
        assert {(v.error.type, v.error.resource) for v in refused} == {("RESOURCE_EXHAUSTION", "cost")}
        return paid, refused, sum(v.notes["cost_usd"] for v in paid)


def test_the_cost_budget_holds_across_concurrent_calls(priced: Priced) -> None:
    # Each call reserves its estimated cost before it is sent: 32 calls in flight at once pass the
    # budget only by what their outputs cost beyond the estimates (the first ones see no output
    # yet), where every call used to pass before any cost was counted (27 times the budget).
    budget = 0.00005
    paid, refused, spent = priced.run(budget, "(pmap echo (range 64) :concurrency 32)")
    assert len(paid) >= 2 and len(refused) >= 32
    assert spent <= budget + len(paid) * priced.output_cost + 1e-12
    assert "of its $0.00005 budget" in refused[-1].error.message  # type: ignore[union-attr]


def test_a_call_reserves_the_largest_output_seen_so_far(priced: Priced) -> None:
    # Room for two calls and the prompt of a third: the third reserves the output the others
    # gave as well, so it is refused instead of passing the budget.
    cost = priced.prompt_cost + priced.output_cost
    budget = 2 * cost + (priced.prompt_cost + cost) / 2
    paid, refused, spent = priced.run(budget, "(map echo (range 4))")
    assert (len(paid), len(refused)) == (2, 2) and spent <= budget


# Ctrl-C -----------------------------------------------------------------------------------------


def test_ctrl_c_cancels_pending_elements_and_propagates_at_once(runtime: Runtime) -> None:
    slow = InFlight(lambda: 0.6)
    slow.install(runtime)
    sent: list[float] = []

    def interrupt() -> None:
        try:
            wait_for(lambda: slow.now == 2, 30, "the first two calls never started")
        finally:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    interrupter = threading.Thread(target=interrupt, daemon=True)
    interrupter.start()
    with pytest.raises(KeyboardInterrupt):
        runtime.run_source("(pmap slow (range 40) :concurrency 2)")  # on the main thread, which gets SIGINT
    # without waiting for the calls in flight
    assert time.monotonic() - sent[0] < scaled(0.3) and slow.now == 2
    deadline = time.monotonic() + scaled(5)
    while [
        t for t in threading.enumerate() if t.name.startswith("sexp-pmap")
    ] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name.startswith("sexp-pmap")]  # the workers ended
    assert slow.started == [0, 1]  # and started nothing after the interrupt


# Progress ---------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_draws_in_place_at_most_every_interval_and_erases_itself() -> None:
    stream, clock = Terminal(), Clock()
    with Progress("work", 4, stream, enabled=True, clock=clock) as bar:
        bar.advance()  # too soon after the first drawing: not drawn
        clock.now = 0.2
        bar.advance()
    text = stream.getvalue()
    frames = text.split("\r")[1:]
    assert frames[0].startswith("work [") and frames[0].endswith("] 0/4")
    assert frames[1].endswith("] 2/4") and "1/4" not in text
    assert frames[-2].strip() == "" and frames[-1] == ""  # erased with spaces, cursor back at the start
    assert "#" * 15 in frames[1]  # half the bar filled


def test_progress_is_silent_unless_a_terminal_and_not_quiet(workspace: Path) -> None:
    for stream, quiet in [(io.StringIO(), False), (Terminal(), True)]:
        with progress(stream, quiet, "pmap", 3) as bar:
            bar.advance(3)
        assert stream.getvalue() == ""
    terminal = Terminal()
    with progress(terminal, False, "pmap", 3) as bar:
        bar.advance(3)
    assert "pmap [" in terminal.getvalue()


def test_the_bar_fits_a_narrow_terminal() -> None:
    bar = Progress("a-long-label", 1000, io.StringIO(), enabled=False)
    assert len(bar.line()) < 80


def test_pmap_draws_no_bar_into_captured_streams(runtime: Runtime) -> None:
    evaluate(runtime, "(pmap (lambda (x) x) (range 50))")
    assert isinstance(runtime.err, io.StringIO) and runtime.err.getvalue() == ""


def test_only_the_outermost_pmap_draws(workspace: Path) -> None:
    terminal = Terminal()
    rt = Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=terminal)
    assert evaluate(rt, "(pmap (lambda (x) (pmap abs (list x x))) (range 3))") == [[0, 0], [1, 1], [2, 2]]
    text = terminal.getvalue()
    assert "pmap [" in text and "/3" in text and "/2" not in text
    assert text.endswith("\r")  # erased at the end


SLOW_PROGRAM = "(print (length (pmap (lambda (x) (loop 300000 x) x) (range 6) :concurrency 2)))\n"


def spawn(args: list[str], cwd: Path) -> pexpect.spawn:
    return spawn_sexp_pty(*args, cwd=cwd)


def test_sexp_run_shows_the_bar_on_a_terminal(workspace: Path) -> None:
    (workspace / "prog.sexp").write_text(SLOW_PROGRAM)
    child = spawn(["run", "prog.sexp"], workspace)
    child.expect(r"pmap \[[#-]+\] \d/6", timeout=scaled(30))
    child.expect(pexpect.EOF, timeout=scaled(60))
    child.close()
    assert child.exitstatus == 0
    assert re.search(r"\r +\r6\r\n$", child.before), repr(child.before)  # erased, then the program's output


def test_quiet_or_piped_shows_no_bar(workspace: Path, cli: Any) -> None:
    (workspace / "prog.sexp").write_text(SLOW_PROGRAM)
    child = spawn(["run", "-q", "prog.sexp"], workspace)
    child.expect(pexpect.EOF, timeout=scaled(60))
    child.close()
    assert child.exitstatus == 0 and child.before == "6\r\n"
    code, out, err = cli("run", "prog.sexp")
    assert (code, out) == (0, "6\n")
    assert "pmap" not in err and "\r" not in err


def test_ctrl_c_in_sexp_run_exits_130_promptly(workspace: Path) -> None:
    (workspace / "prog.sexp").write_text("(pmap (lambda (x) (loop 3000000 x)) (range 40) :concurrency 2)\n")
    child = spawn(["run", "prog.sexp"], workspace)
    child.expect(r"pmap \[", timeout=scaled(30))
    child.sendintr()
    start = time.monotonic()
    child.expect(pexpect.EOF, timeout=scaled(10))
    child.close()
    assert time.monotonic() - start < scaled(5)
    assert child.exitstatus == 130 and "interrupted" in child.before
