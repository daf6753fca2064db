"""Milliseconds per task call against a local OpenAI-compatible server: Handler.run vs litellm vs raw HTTP.

Two cases: a plain text task, and one with generation settings and a JSON Schema sent natively
(response_format), its answer parsed and validated. The bare calls send the same requests.

.venv/bin/python bench/task_call.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("OPENAI_API_KEY", "sk-canary-bench-not-a-key")

from llm_server import LLMServer  # noqa: E402

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, OutputSpec, TaskPrompt  # noqa: E402
from sexp_tasks.handler.llm import _litellm  # noqa: E402

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


def measure(server: LLMServer, config: HandlerConfig, prompt: TaskPrompt, answer: str, calls: int) -> None:
    """Time Handler.run, a bare litellm.completion sending the same request, and raw HTTP, call by
    call in turn; print the table and the median paired difference task − bare."""
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
    samples: dict[str, list[float]] = {"Handler.run": [], "litellm.completion": [], "raw HTTP (urllib)": []}
    paths = list(zip(samples, (handler_call, litellm_call, http_call), strict=True))
    for _ in range(calls):
        for name, call in paths:
            samples[name] += timed(call, 1)
    paired = [h - b for h, b in zip(samples["Handler.run"], samples["litellm.completion"], strict=True)]
    print(f"{'path':<20} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10}   ({calls} calls each)")
    for name, times in samples.items():
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(f"{name:<20} {statistics.median(times):>10.2f} {statistics.mean(times):>10.2f} {p90:>10.2f}")
    # Each round times the two calls back to back, so their difference cancels most of the noise.
    overhead = statistics.median(paired)
    verdict = "met" if overhead <= 1.0 else "missed"
    print(f"task call over bare litellm: {overhead:+.2f} ms (median of paired differences)")
    print(f"goal: at most +1 ms: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    calls = parser.parse_args().calls
    server = LLMServer().start()
    try:
        for label, config, prompt, answer in cases(server.base_url):
            print(f"== {label}")
            measure(server, config, prompt, answer, calls)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
