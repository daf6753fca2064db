"""Milliseconds per task call against a local OpenAI-compatible server: Handler.run vs litellm vs raw HTTP.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("OPENAI_API_KEY", "sk-canary-bench-not-a-key")

from llm_server import LLMServer  # noqa: E402

from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    calls = parser.parse_args().calls
    server = LLMServer().start()
    server.script(ANSWER)
    # litellm refuses to send a request without a key; the local server ignores it.
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    config = HandlerConfig(model="openai/test-model", api_base=server.base_url, num_retries=0)
    prompt = TaskPrompt(template="bench", instructions="Say something.")
    check = Handler(config, HandlerServices()).run(prompt)
    if check.status != "COMPLETE" or check.content != "bench answer":
        sys.exit(f"the task call did not complete, nothing timed: {check.error and check.error.summary()}")
    # The bare call sends exactly the messages the Handler sends, so the difference is our code.
    messages = Handler(config, HandlerServices()).messages(prompt)
    litellm = _litellm()

    def handler_call() -> object:
        return Handler(config, HandlerServices()).run(prompt)

    def litellm_call() -> object:
        return litellm.completion(
            model="openai/test-model", messages=messages, api_base=server.base_url, timeout=config.timeout
        )

    def http_call() -> object:
        body = json.dumps({"model": "test-model", "messages": messages}).encode()
        request = urllib.request.Request(
            server.base_url + "/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())

    # Interleaved, call by call, so that the machine's noise falls on all three alike.
    samples: dict[str, list[float]] = {"Handler.run": [], "litellm.completion": [], "raw HTTP (urllib)": []}
    paths = list(zip(samples, (handler_call, litellm_call, http_call), strict=True))
    for _ in range(calls):
        for name, call in paths:
            samples[name] += timed(call, 1)
    rows = list(samples.items())
    server.stop()
    paired = [h - b for h, b in zip(samples["Handler.run"], samples["litellm.completion"], strict=True)]
    print(f"{'path':<20} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10}   ({calls} calls each)")
    for name, times in rows:
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(f"{name:<20} {statistics.median(times):>10.2f} {statistics.mean(times):>10.2f} {p90:>10.2f}")
    # Each round times the two calls back to back, so their difference cancels most of the noise.
    overhead = statistics.median(paired)
    verdict = "met" if overhead <= 1.0 else "missed"
    print(f"task call over bare litellm: {overhead:+.2f} ms (median of paired differences)")
    print(f"goal: at most +1 ms: {verdict}")


if __name__ == "__main__":
    main()
