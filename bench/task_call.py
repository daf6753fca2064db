"""Milliseconds per task call against a local OpenAI-compatible server: Handler.run vs litellm vs raw HTTP.

Two cases: a plain text task, and one with generation settings and a JSON Schema sent natively
(response_format), its answer parsed and validated. The bare calls send the same requests.

With the otel extra installed, Handler.run is also timed with OpenTelemetry on (SPEC §11.4): a task
span and a chat span per call, exported by the batch span processor over OTLP/HTTP to a receiver
on 127.0.0.1 (tests/otlp_receiver.py); and `sexp eval '(+ 1 2)'`'s start-up is timed with the
extra installed and with it made unimportable, side by side.

.venv/bin/python bench/task_call.py [--calls N] [--starts N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("OPENAI_API_KEY", "sk-canary-bench-not-a-key")

from llm_server import LLMServer  # noqa: E402

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, OutputSpec, TaskPrompt  # noqa: E402
from sexp_tasks.handler.llm import _litellm  # noqa: E402
from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest  # noqa: E402
from sexp_tasks.handler.tracing import NO_TRACER, Tracer  # noqa: E402
from sexp_tasks.results import TaskResult  # noqa: E402

ANSWER = "<output>bench answer</output><notes><data_usage>none</data_usage></notes>"


def timed(call: Callable[[], object], calls: int) -> list[float]:
    """Milliseconds of each of `calls` calls, after one warm-up call."""
    call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["answer"],
}
JSON_ANSWER = '{"answer": "bench answer", "confidence": 0.9}'
GENERATION = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 300, "seed": 7, "stop": ["END"]}


def cases(base_url: str) -> list[tuple[str, HandlerConfig, TaskPrompt, str]]:
    """(label, config, prompt, server answer): a plain text task, and one with generation settings
    and a JSON Schema sent natively (response_format), whose answer is parsed and validated."""
    plain = HandlerConfig(api_base=base_url, num_retries=0)
    tuned = HandlerConfig(api_base=base_url, num_retries=0, generation=GENERATION)
    spec = OutputSpec(type="json", json_schema=SCHEMA, native="always")
    ask = TaskPrompt(template="bench", instructions="Say something.", models=("openai/test-model",))
    return [
        ("plain", plain, ask, ANSWER),
        ("generation + schema", tuned, replace(ask, output=spec), JSON_ANSWER),
    ]


def measure(
    server: LLMServer, config: HandlerConfig, prompt: TaskPrompt, answer: str, calls: int, tracer: Tracer
) -> None:
    """Time Handler.run, a bare litellm.completion sending the same request, and raw HTTP, call by
    call in turn (and Handler.run with tracer's spans, unless it is NO_TRACER); print the table and
    the median paired difference task − bare."""
    server.script(answer)
    check = Handler(config, HandlerServices()).run(prompt)
    if check.status != "COMPLETE" or "bench answer" not in check.content:
        sys.exit(f"the task call did not complete, nothing timed: {check.error and check.error.summary()}")
    sent = server.requests[-1].body
    missing = [key for key in (*config.generation, "response_format") if key not in sent]
    if prompt.output.json_schema is not None and missing:
        sys.exit(f"the task call did not send {', '.join(missing)}, nothing timed")
    # The bare call sends exactly the request the Handler sends (messages, generation settings,
    # response_format), so the difference is our code.
    request = Handler(config, HandlerServices()).request(prompt)
    extra = dict(request.generation)
    if request.response_format is not None:
        extra["response_format"] = dict(request.response_format)
    messages = list(request.messages)
    litellm = _litellm()

    def handler_call() -> object:
        return Handler(config, HandlerServices()).run(prompt)

    def handler_litellm_call() -> object:  # the same task call with the direct path off
        os.environ["SEXP_LLM_DIRECT"] = "0"
        try:
            return Handler(config, HandlerServices()).run(prompt)
        finally:
            del os.environ["SEXP_LLM_DIRECT"]

    def traced_call() -> object:  # as TaskSystem.run opens it: the task's span, the turn's inside
        with tracer.task(prompt.template, prompt.models[0], None) as traced:
            result = Handler(config, HandlerServices(tracer=tracer)).run(prompt)
            traced.finished(result)
        return result

    def litellm_call() -> object:
        return litellm.completion(
            model="openai/test-model",
            messages=messages,
            api_base=server.base_url,
            timeout=config.timeout,
            **extra,
        )

    def http_call() -> object:
        body = json.dumps({"model": "test-model", "messages": messages, **extra}).encode()
        http_request = urllib.request.Request(
            server.base_url + "/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(http_request) as response:
            return json.loads(response.read())

    # Interleaved, call by call, so that the machine's noise falls on all three alike.
    # Handler.run takes the direct path (handler/direct_call.py); SEXP_LLM_DIRECT=0 sends the same
    # task call through litellm.completion.
    samples: dict[str, list[float]] = {
        "Handler.run": [],
        "Handler.run, litellm": [],
        "litellm.completion": [],
        "raw HTTP (urllib)": [],
    }
    paths = list(zip(samples, (handler_call, handler_litellm_call, litellm_call, http_call), strict=True))
    if tracer is not NO_TRACER:
        samples["Handler.run, otel on"] = []
        paths.append(("Handler.run, otel on", traced_call))
    cpu: dict[str, list[float]] = {name: [] for name in samples}
    for _ in range(calls):
        for name, call in paths:
            before = time.thread_time()
            samples[name] += timed(call, 1)
            cpu[name].append((time.thread_time() - before) * 1000 / 2)  # timed makes a warm-up call too
    paired = [h - b for h, b in zip(samples["Handler.run"], samples["litellm.completion"], strict=True)]
    header = f"{'path':<22} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10} {'CPU ms':>8}"
    print(f"{header}   ({calls} calls each; CPU: the calling thread's, median)")
    for name, times in samples.items():
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(
            f"{name:<22} {statistics.median(times):>10.2f} {statistics.mean(times):>10.2f} {p90:>10.2f}"
            f" {statistics.median(cpu[name]):>8.2f}"
        )
    # Each round times the two calls back to back, so their difference cancels most of the noise.
    overhead = statistics.median(paired)
    verdict = "met" if overhead <= 1.0 else "missed"
    print(f"task call over bare litellm: {overhead:+.2f} ms (median of paired differences)")
    print(f"goal: at most +1 ms: {verdict}")
    if tracer is not NO_TRACER:
        on = [
            t - b for t, b in zip(samples["Handler.run, otel on"], samples["litellm.completion"], strict=True)
        ]
        traced = statistics.median(on)
        print(f"task call over bare litellm, otel on: {traced:+.2f} ms (off: {overhead:+.2f} ms)")
        print(f"goal with otel on: at most +1.5 ms: {'met' if traced <= 1.5 else 'missed'}")


def span_cost(tracer: Tracer, rounds: int = 2000) -> None:
    """Milliseconds the spans of one task call cost, with no model call around them: a task span
    and a chat span opened, given the answer and the result, and ended (the batch span processor
    exporting in its thread meanwhile, as it does in a run)."""
    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": "Say something."}])
    answer = ModelAnswer("bench answer", prompt_tokens=10, completion_tokens=5, model="test-model")
    result = TaskResult("bench answer")
    started, cpu = time.perf_counter(), time.thread_time()
    for _ in range(rounds):
        with tracer.task("bench", "openai/test-model", None) as task:
            with tracer.chat(request, 1) as chat:
                chat.answered(answer)
            task.finished(result)
    each = (time.perf_counter() - started) * 1000 / rounds
    cpu_each = (time.thread_time() - cpu) * 1000 / rounds  # less shaken by a busy machine than wall time
    print(f"== the spans of one task call (task + chat), no model call, {rounds} rounds:")
    print(f"{each:.3f} ms each ({cpu_each:.3f} ms of the calling thread's CPU; export has its own thread)")


STARTS = {
    "otel extra installed": "",
    "otel extra unimportable": "sys.modules['opentelemetry'] = None; ",
}


def startup(starts: int) -> None:
    """Milliseconds `sexp eval '(+ 1 2)'` takes to run in a new process, with the otel extra
    installed and with it made unimportable, in turn; and that neither imported opentelemetry."""
    samples: dict[str, list[float]] = {name: [] for name in STARTS}
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    for _ in range(starts + 1):  # the first round warms the caches (the grammar's, the OS's)
        for name, prelude in STARTS.items():
            code = (
                f"import sys; {prelude}from sexp_tasks.cli.main import main\n"
                "status = main(['eval', '(+ 1 2)'])\n"
                "assert not [m for m in sys.modules if m.startswith('opentelemetry') and sys.modules[m]]\n"
                "sys.exit(status)"
            )
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            samples[name].append((time.perf_counter() - started) * 1000)
            if done.returncode != 0 or done.stdout != "3\n":
                sys.exit(f"sexp eval failed ({name}): {done.stderr}")
    print(f"== sexp eval '(+ 1 2)' start-up, {starts} starts each (opentelemetry imported by neither)")
    for name, times in samples.items():
        print(f"{name:<26} median {statistics.median(times[1:]):>7.1f} ms   min {min(times[1:]):>7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--starts", type=int, default=20, help="start-ups of sexp eval timed (0: none)")
    options = parser.parse_args()
    server = LLMServer().start()
    receiver, telemetry = otel_on()
    tracer = telemetry.tracer if telemetry is not None else NO_TRACER
    try:
        for label, config, prompt, answer in cases(server.base_url):
            print(f"== {label}")
            measure(server, config, prompt, answer, options.calls, tracer)
        if telemetry is not None:
            span_cost(tracer)
    finally:
        server.stop()
        if telemetry is not None and receiver is not None:
            telemetry.close()
            print(f"(the receiver got {len(receiver.received())} spans)")
            receiver.__exit__(None, None, None)
    if options.starts:
        startup(options.starts)


def otel_on() -> tuple[Any, Any]:
    """An OTLP receiver on 127.0.0.1 and the exporter sending to it, when the otel extra (and
    opentelemetry-proto, for the receiver) are installed; else (None, None)."""
    try:
        from otlp_receiver import OtlpReceiver

        from sexp_tasks.runs.otel_export import OtlpTelemetry
    except ImportError:
        print("(the otel extra is not installed: Handler.run is timed without OpenTelemetry only)")
        return None, None
    receiver = OtlpReceiver().__enter__()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    return receiver, OtlpTelemetry(False, lambda message: print(f"warning: {message}"))


if __name__ == "__main__":
    main()
