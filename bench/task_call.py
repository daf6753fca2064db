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
    messages = [{"role": "user", "content": "Say something."}]
    config = HandlerConfig(model="openai/test-model", api_base=server.base_url, num_retries=0)
    litellm = _litellm()

    def handler_call() -> object:
        return Handler(config, HandlerServices()).run(
            TaskPrompt(template="bench", instructions="Say something.")
        )

    def litellm_call() -> object:
        return litellm.completion(model="openai/test-model", messages=messages, api_base=server.base_url)

    def http_call() -> object:
        body = json.dumps({"model": "test-model", "messages": messages}).encode()
        request = urllib.request.Request(
            server.base_url + "/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())

    rows = [
        ("Handler.run", timed(handler_call, calls)),
        ("litellm.completion", timed(litellm_call, calls)),
        ("raw HTTP (urllib)", timed(http_call, calls)),
    ]
    server.stop()
    print(f"{'path':<20} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10}   ({calls} calls each)")
    for name, samples in rows:
        p90 = sorted(samples)[int(0.9 * (len(samples) - 1))]
        print(
            f"{name:<20} {statistics.median(samples):>10.2f} {statistics.mean(samples):>10.2f} {p90:>10.2f}"
        )


if __name__ == "__main__":
    main()
