"""100 task calls under pmap against a local server answering after 200 ms, against the ideal.

.venv/bin/python bench/pmap.py [--calls 100] [--delay 0.2] [--rounds 3] [--concurrency 10 32]

Side by side, each as a ratio to the ideal (delay × ceil(calls / c)):
  pmap          a real `(pmap echo xs :concurrency c)` program through Runtime, Handler and llm.complete,
                once per transport (SEXP_LLM_TRANSPORT): `sync` and `async`
  bare litellm  litellm.acompletion under an asyncio.Semaphore on one event loop
  raw aiohttp   one aiohttp session under an asyncio.Semaphore
The server runs in its own process so that its work does not compete with the client's for the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
GOALS = {10: 1.10, 32: 1.25}
PATHS = {  # --paths names -> the labels printed
    "sync": "pmap (sync)",
    "async": "pmap (async)",
    "bare": "bare litellm",
    "raw": "raw aiohttp",
}
ANSWER = "<output>bench answer</output><notes><data_usage>none</data_usage></notes>"


def serve(delay: float, answer: str = ANSWER) -> None:
    """An OpenAI-compatible chat server on 127.0.0.1 answering `answer` after `delay`; prints its port."""
    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay)
        message = {"role": "assistant", "content": answer}
        return web.json_response(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "test-model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        print(site._server.sockets[0].getsockname()[1], flush=True)  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


def start_server(delay: float, answer: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """The server process and its base URL; answer: what it answers (default: a sexp answer)."""
    env = {k: v for k, v in os.environ.items() if "KEY" not in k and "TOKEN" not in k}
    given = ["--answer", answer] if answer is not None else []
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--delay", str(delay), *given],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    port = process.stdout.readline().strip()
    if not port:
        sys.exit("the bench server did not start")
    return process, f"http://127.0.0.1:{port}/v1"


class Loop:
    """An event loop in a thread, for the bare litellm and raw aiohttp paths."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


def pmap_path(base_url: str, calls: int, transport: str) -> Callable[[int], None]:
    """Runs `(pmap echo xs :concurrency c)` in one Runtime over transport (`sync` or `async`),
    checking every result completed."""
    from sexp_tasks.config import Settings
    from sexp_tasks.runtime import Runtime

    workspace = tempfile.mkdtemp(prefix="sexp-bench-")
    settings = Settings(workspace=workspace, model="openai/test-model", api_base=base_url)
    runtime = Runtime(settings, out=io.StringIO(), err=io.StringIO())
    runtime.run_source('(defatom echo (params x) (instructions "Echo {{x}}"))')

    def run(concurrency: int) -> None:
        os.environ["SEXP_LLM_TRANSPORT"] = transport
        results = runtime.run_source(f"(pmap echo (range {calls}) :concurrency {concurrency})")
        failed = [r for r in results if getattr(r, "status", None) != "COMPLETE"]  # type: ignore[union-attr]
        if failed:
            sys.exit(f"pmap: {len(failed)} of {calls} task calls did not complete: {failed[0]}")

    return run


def bare_path(loop: Loop, base_url: str, calls: int) -> Callable[[int], None]:
    """litellm.acompletion for each element, at most c at a time, the Handler's messages."""
    from sexp_tasks.handler.llm import _litellm

    litellm = _litellm()
    messages = [{"role": "system", "content": "bench"}, {"role": "user", "content": "Echo 1"}]

    def run(concurrency: int) -> None:
        async def go() -> None:
            gate = asyncio.Semaphore(concurrency)

            async def one() -> Any:
                async with gate:
                    return await litellm.acompletion(
                        model="openai/test-model", messages=messages, api_base=base_url, timeout=600.0
                    )

            await asyncio.gather(*(one() for _ in range(calls)))

        loop.run(go())

    return run


def raw_path(loop: Loop, base_url: str, calls: int) -> Callable[[int], None]:
    """One aiohttp session posting the same request, at most c at a time."""
    import aiohttp

    async def make() -> aiohttp.ClientSession:
        return aiohttp.ClientSession()

    session = loop.run(make())
    body = {"model": "test-model", "messages": [{"role": "user", "content": "Echo 1"}]}

    def run(concurrency: int) -> None:
        async def go() -> None:
            gate = asyncio.Semaphore(concurrency)

            async def one() -> Any:
                async with gate, session.post(base_url + "/chat/completions", json=body) as response:
                    return await response.json()

            await asyncio.gather(*(one() for _ in range(calls)))

        loop.run(go())

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 32])
    parser.add_argument(
        "--paths", nargs="+", choices=PATHS, default=list(PATHS), help="which to run (default: all)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--answer", default=ANSWER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.delay, args.answer)
        return
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["OPENAI_API_KEY"] = "sk-fake-bench"  # litellm wants a key; the local server ignores it
    server, base_url = start_server(args.delay)
    try:
        loop = Loop()
        makers = {
            "sync": lambda: pmap_path(base_url, args.calls, "sync"),
            "async": lambda: pmap_path(base_url, args.calls, "async"),
            "bare": lambda: bare_path(loop, base_url, args.calls),
            "raw": lambda: raw_path(loop, base_url, args.calls),
        }
        paths = {PATHS[key]: makers[key]() for key in PATHS if key in args.paths}
        for run in paths.values():  # warm-up: imports, clients, connection pools
            run(min(args.concurrency))
        ratios: dict[tuple[str, int], list[float]] = {}
        cpu: dict[tuple[str, int], list[float]] = {}
        for _ in range(args.rounds):  # interleaved, so that the machine's noise falls on all alike
            for c in args.concurrency:
                ideal = args.delay * math.ceil(args.calls / c)
                for name, run in paths.items():
                    started, cpu_started = time.perf_counter(), time.process_time()
                    run(c)
                    ratios.setdefault((name, c), []).append((time.perf_counter() - started) / ideal)
                    used = time.process_time() - cpu_started
                    cpu.setdefault((name, c), []).append(used / args.calls)
    finally:
        os.environ.pop("SEXP_LLM_TRANSPORT", None)
        server.terminate()

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.calls} calls, server delay {args.delay * 1000:.0f} ms, {args.rounds} rounds; load {load}")
    print(f"{os.cpu_count()} cores")
    print(f"{'path':<16} {'c':>3} {'median ×ideal':>14} {'range':>12} {'CPU ms/call':>12}")
    for c in args.concurrency:
        for name in paths:
            values = ratios[(name, c)]
            cpu_ms = statistics.median(cpu[(name, c)]) * 1000
            spread = f"{min(values):.2f}–{max(values):.2f}"
            print(f"{name:<16} {c:>3} {statistics.median(values):>14.2f} {spread:>12} {cpu_ms:>12.2f}")
    pmaps = [name for name in paths if name.startswith("pmap")]
    for c in args.concurrency:
        goal = GOALS.get(c)
        if goal is not None and pmaps:
            best = min(statistics.median(ratios[(name, c)]) for name in pmaps)
            print(
                f"goal at {c}: pmap ≤ {goal:.2f}× ideal: {'met' if best <= goal else 'MISSED'} ({best:.2f}×)"
            )
    sys.stdout.flush()
    os._exit(0)  # litellm's aiohttp sessions complain when torn down at exit; nothing is left to save


if __name__ == "__main__":
    main()
