"""A streamed answer through `sexp run` and Session.acall under concurrency, each beside bare litellm.

.venv/bin/python bench/stream.py [--rounds 15] [--acall-rounds 7] [--delay 0.05]
.venv/bin/python bench/stream.py --quick        # 3 rounds of each, 40 acalls: a smoke run
.venv/bin/python bench/stream.py --only async --acall-rounds 11 --delay 0.2

1. Time to first token. The local server (tests/llm_server.py, in this process) answers a streamed
   request with its first chunk (the role) after 100 ms, then 50 pieces of text 10 ms apart.
   Timed in turn, round after round:
     sexp run      a program file run as `sexp run FILE` runs it (cli/program_commands.py `_run`):
                   a Runtime for the file, then `run_recorded` (a recorded run: the run store, the
                   journal) on a deep stack, streaming on: each piece of text goes to the call's
                   text receiver (handler/contract.py TEXT_RECEIVER), the hook where a display
                   takes the text (model_call's `_stream_opener`: the receiver, else services.open_stream)
     bare litellm  litellm.completion(stream=True) with the messages and stream_options the sexp
                   run sent, its chunks read in a loop
   The origin is the moment the request reached the server (the server stamps each request it
   reads: Recorded.arrived). first token: until the first non-empty piece of text reaches the
   receiver (sexp) or comes out of litellm's iterator (bare); total: until the whole answer is in
   (sexp: run_recorded has returned, the answer built from the chunks, checked and journaled, the
   run ended; bare: the iterator has ended).
   Why from the request's arrival, and in this process: a `sexp run` process spends about a second
   importing litellm and loading the language before it sends anything; that is start-up, not the
   streaming path, and a pty's timestamps would mostly time it and the terminal. In one process
   the server's stamp and the receiver's are read from one clock, and the two sides differ only
   by the path measured. What comes before the request (the run store, rendering, litellm's request
   building) is printed beside as `send` (from the call's start to the arrival) and is not part of
   the goals: bench/task_call.py measures a call's overhead before the answer.
   Goals: first token over bare ≤ +5 ms (the median of the rounds' differences sexp − bare, each
   round timing both back to back) and total ≤ +5% (the ratio of the medians).

2. Async calls. 100 `Session.acall`s under an asyncio.Semaphore(32) on one event loop, against 100
   bare `litellm.acompletion`s the same way, real HTTP to bench/pmap.py's aiohttp server (in a child
   process, so its work does not take this process's GIL) answering after 50 ms (--delay). Both on
   the same loop (a thread's, created once), in turn, round after round, after a warm-up of each.
   Printed: the median wall time, its range, the CPU per call, and the median of the rounds'
   ratios acall / bare (each round times both back to back). Goal: acall ≤ 1.15× bare.

Medians and ranges, never means: the machines are shared, and a burst of load falls on one round.
Goals are printed as `met` or `MISSED`, not asserted; the exit status is 1 only when a call did not
complete or the streamed text is not the server's (then the figures measure nothing), which is what
CI's smoke run (`--quick`, in .ci/run) checks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["OPENAI_API_KEY"] = "sk-fake-bench"  # litellm wants a key; the local servers ignore it

from llm_server import LLMServer, Scripted  # noqa: E402  (tests/ and bench/ are on sys.path)
from pmap import Loop, start_server  # noqa: E402

from sexp_tasks.config import Settings  # noqa: E402
from sexp_tasks.handler.contract import TEXT_RECEIVER, TextPieces  # noqa: E402
from sexp_tasks.handler.llm import _litellm  # noqa: E402
from sexp_tasks.lang.deepstack import run_with_deep_stack  # noqa: E402
from sexp_tasks.runtime import Runtime  # noqa: E402

MODEL = "openai/test-model"
PIECES = [f"word{i} " for i in range(50)]
ANSWER = "".join(PIECES)
FIRST_DELAY, CHUNK_DELAY = 0.1, 0.01
PROGRAM = '(defatom echo (params x) (instructions "Echo {{x}}"))\n(task-content (echo "stream"))\n'
GOAL_FIRST_MS, GOAL_TOTAL, GOAL_ACALL = 5.0, 1.05, 1.15


class Timing:
    """One streamed call's times, in seconds: its start, the first piece of text, its end."""

    def __init__(self) -> None:
        self.start = self.first = self.end = 0.0
        self.text: list[str] = []

    def piece(self, text: str) -> None:
        if not self.first:
            self.first = time.perf_counter()
        self.text.append(text)


def sexp_run(server: LLMServer, workspace: Path, program: Path) -> tuple[Timing, str]:
    """The program file run as `sexp run FILE` runs it, its text received as it streams; its timing
    and its value."""
    settings = Settings(workspace=str(workspace), model=MODEL, api_base=server.base_url, quiet=True)
    runtime = Runtime(settings, out=io.StringIO(), err=io.StringIO(), program=program)
    timing = Timing()
    text = program.read_text(encoding="utf-8")

    def run() -> Any:
        token = TEXT_RECEIVER.set(lambda _label: TextPieces(timing.piece))
        try:
            return runtime.run_recorded(program, text, {})
        finally:
            TEXT_RECEIVER.reset(token)

    context = contextvars.copy_context()
    timing.start = time.perf_counter()
    value = run_with_deep_stack(lambda: context.run(run))
    timing.end = time.perf_counter()
    return timing, str(value)


def bare_stream(server: LLMServer, sent: dict[str, Any]) -> tuple[Timing, str]:
    """litellm.completion(stream=True) sending what the sexp run sent, read chunk by chunk."""
    litellm = _litellm()
    timing = Timing()
    timing.start = time.perf_counter()
    chunks = litellm.completion(
        model=MODEL,
        messages=sent["messages"],
        api_base=server.base_url,
        stream=True,
        stream_options=sent.get("stream_options"),
        timeout=600.0,
    )
    for chunk in chunks:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is not None and delta.content:
            timing.piece(delta.content)
    timing.end = time.perf_counter()
    return timing, "".join(timing.text)


def spread(values: list[float], scale: float = 1000.0) -> str:
    return f"{min(values) * scale:.1f}–{max(values) * scale:.1f}"


def first_token(rounds: int, work: Path) -> bool:
    """Part 1: print the streamed call's figures, sexp run beside bare litellm; whether all held."""
    server = LLMServer().start()
    server.script(Scripted(content=ANSWER, pieces=PIECES, delay=FIRST_DELAY, chunk_delay=CHUNK_DELAY))
    workspace = work / "stream"
    workspace.mkdir()
    program = workspace / "stream.sexp"
    program.write_text(PROGRAM, encoding="utf-8")
    try:
        timing, value = sexp_run(server, workspace, program)  # warm-up: imports, litellm's client
        sent = server.requests[-1].body
        if not sent.get("stream") or "".join(timing.text) != ANSWER or ANSWER.strip() not in value:
            print(f"the sexp run did not stream the server's answer: {value!r}")
            return False
        bare_stream(server, sent)
        figures: dict[str, dict[str, list[float]]] = {
            name: {"send": [], "first": [], "total": []} for name in ("sexp run", "bare litellm")
        }
        for number in range(rounds):  # in turn, each side first every other round
            sides: list[tuple[str, Callable[[], tuple[Timing, str]]]] = [
                ("sexp run", lambda: sexp_run(server, workspace, program)),
                ("bare litellm", lambda: bare_stream(server, sent)),
            ]
            for name, side in sides if number % 2 == 0 else reversed(sides):
                timing, _ = side()
                if "".join(timing.text) != ANSWER:
                    print(f"{name}: the streamed text is not the server's answer")
                    return False
                arrived = server.requests[-1].arrived
                figures[name]["send"].append(arrived - timing.start)
                figures[name]["first"].append(timing.first - arrived)
                figures[name]["total"].append(timing.end - arrived)
    finally:
        server.stop()
    sexp, bare = figures["sexp run"], figures["bare litellm"]
    print(
        f"== first token: streamed answer, first chunk after {FIRST_DELAY * 1000:.0f} ms, then "
        f"{len(PIECES)} pieces {CHUNK_DELAY * 1000:.0f} ms apart; {rounds} rounds; from the request's "
        "arrival at the server"
    )
    print(f"{'path':<14} {'first token ms':>15} {'range':>14} {'total ms':>10} {'range':>14} {'send ms':>9}")
    for name, times in figures.items():
        print(
            f"{name:<14} {statistics.median(times['first']) * 1000:>15.1f} {spread(times['first']):>14} "
            f"{statistics.median(times['total']) * 1000:>10.1f} {spread(times['total']):>14} "
            f"{statistics.median(times['send']) * 1000:>9.1f}"
        )
    # Each round times both sides back to back: their difference cancels most of the noise.
    late = statistics.median(s - b for s, b in zip(sexp["first"], bare["first"], strict=True)) * 1000
    ratio = statistics.median(sexp["total"]) / statistics.median(bare["total"])
    print(
        f"goal: first token over bare ≤ +{GOAL_FIRST_MS:.0f} ms: "
        f"{'met' if late <= GOAL_FIRST_MS else 'MISSED'} ({late:+.1f} ms, median of paired differences)"
    )
    print(
        f"goal: total ≤ +{(GOAL_TOTAL - 1) * 100:.0f}% of bare: "
        f"{'met' if ratio <= GOAL_TOTAL else 'MISSED'} ({(ratio - 1) * 100:+.1f}%)"
    )
    return True


def acalls(rounds: int, calls: int, concurrency: int, delay: float, work: Path) -> bool:
    """Part 2: print `calls` Session.acalls at `concurrency` beside bare litellm.acompletion; whether
    every call completed."""
    import sexp_tasks

    server, base_url = start_server(delay)
    loop = Loop()
    try:
        workspace = work / "acall"
        workspace.mkdir()
        session = sexp_tasks.Session(workspace=str(workspace), model=MODEL, api_base=base_url, quiet=True)
        session.eval('(defatom echo (params x) (instructions "Echo {{x}}"))')
        litellm = _litellm()
        messages = [{"role": "system", "content": "bench"}, {"role": "user", "content": "Echo 1"}]

        async def gated(each: Callable[[int], Any]) -> list[Any]:
            gate = asyncio.Semaphore(concurrency)

            async def one(index: int) -> Any:
                async with gate:
                    return await each(index)

            return await asyncio.gather(*(one(index) for index in range(calls)))

        def sexp_side() -> bool:
            results = loop.run(gated(lambda index: session.acall("echo", x=index)))
            return all(getattr(result, "status", None) == "COMPLETE" for result in results)

        def bare_side() -> bool:
            loop.run(
                gated(
                    lambda _: litellm.acompletion(
                        model=MODEL, messages=messages, api_base=base_url, timeout=600.0
                    )
                )
            )
            return True

        sides = [("Session.acall", sexp_side), ("bare litellm", bare_side)]
        for name, side in sides:  # warm-up: imports, clients, connection pools
            if not side():
                print(f"{name}: a call did not complete")
                return False
        wall: dict[str, list[float]] = {name: [] for name, _ in sides}
        cpu: dict[str, list[float]] = {name: [] for name, _ in sides}
        for number in range(rounds):
            for name, side in sides if number % 2 == 0 else reversed(sides):
                started, cpu_started = time.perf_counter(), time.process_time()
                if not side():
                    print(f"{name}: a call did not complete")
                    return False
                wall[name].append(time.perf_counter() - started)
                cpu[name].append((time.process_time() - cpu_started) / calls)
    finally:
        server.terminate()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"== async: {calls} calls at concurrency {concurrency} on one event loop, server delay "
        f"{delay * 1000:.0f} ms, {rounds} rounds; {os.cpu_count()} cores, load {load}"
    )
    print(f"{'path':<14} {'wall ms':>9} {'range':>16} {'CPU ms/call':>12}")
    for name in wall:
        print(
            f"{name:<14} {statistics.median(wall[name]) * 1000:>9.0f} {spread(wall[name], 1000):>16} "
            f"{statistics.median(cpu[name]) * 1000:>12.2f}"
        )
    # Each round times both sides back to back: their ratio cancels most of the load's drift.
    paired = [a / b for a, b in zip(wall["Session.acall"], wall["bare litellm"], strict=True)]
    ratio = statistics.median(paired)
    cpu_ratio = statistics.median(cpu["Session.acall"]) / statistics.median(cpu["bare litellm"])
    print(
        f"goal: acall ≤ {GOAL_ACALL}× bare: {'met' if ratio <= GOAL_ACALL else 'MISSED'} ({ratio:.2f}×,"
        f" median of the rounds' ratios, range {min(paired):.2f}–{max(paired):.2f}; CPU {cpu_ratio:.2f}×)"
    )
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="streamed calls of each side")
    parser.add_argument("--acall-rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05, help="the async part's server delay")
    parser.add_argument("--quick", action="store_true", help="3 rounds of each, 40 acalls: a smoke run")
    parser.add_argument("--only", choices=("first-token", "async"), help="run only that part")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.acall_rounds, args.calls = 3, 3, 40
    work = Path(tempfile.mkdtemp(prefix="sexp-bench-stream-"))
    os.chdir(work)  # no sexp.toml or tasks/ of the caller's
    try:
        ok = (args.only == "async" or first_token(args.rounds, work)) and (
            args.only == "first-token"
            or acalls(args.acall_rounds, args.calls, args.concurrency, args.delay, work)
        )
    finally:
        os.chdir(ROOT)
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.flush()
    os._exit(0 if ok else 1)  # litellm's aiohttp sessions complain when torn down at exit


if __name__ == "__main__":
    main()
