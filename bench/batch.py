"""1,000 batch rows, each one task call to a local server answering after 200 ms, per executor.

.venv/bin/python bench/batch.py [--rows 1000] [--concurrency 64] [--executors threads ray2 ray4]
.venv/bin/python bench/batch.py --quick          # 128 rows at 32 (a smoke run)
.venv/bin/python bench/batch.py --memory         # the driver's memory: 10,000 rows against 1,000
.venv/bin/python bench/batch.py --marginal       # also CPU per row between 1,000 and 4,000 rows
.venv/bin/python bench/batch.py --repeat 3       # every path 3 times, round by round: the medians

Side by side, each as a ratio to the ideal (delay × ceil(rows / concurrency)):
  threads       `sexp batch`'s driver (batching.driver.run_batch) on the threads executor
  ray2, ray4    the same on the Ray executor, on a local Ray of 2 and 4 CPUs (2 and 4 row workers),
                started before the clock starts, as a cluster would be; the batch's workers start
                (and import the package and litellm) inside the time
  bare (threads) litellm.completion for each row in `concurrency` threads (the issue's table's)
  bare (async)  litellm.acompletion for each row under an asyncio.Semaphore(concurrency)
  dspy          DSPy 3.x's dspy.Predict("question -> answer") under dspy.Parallel(num_threads=
                concurrency), its default engine, against a server answering in DSPy's format. DSPy
                is the bench's, not the package's: it lives in bench/.venv-dspy (gitignored), made
                on first use from bench/requirements-dspy.txt; when that fails the row says how
                to make it, and the others run. --quick and --no-dspy leave it out.
Each runs in a child process of its own, so that its peak memory (ru_maxrss) and CPU are its own.
CPU per call counts the driver process and every process under it (for Ray: its GCS, raylet and
workers, read from /proc every 100 ms, so a process's last 100 ms may be missed), from the clock's
start (what Ray's processes spent starting before it is not counted); the server, in a process of
its own (bench/pmap.py's), is not counted. --marginal adds what one more row costs (the CPU
between a batch of --rows and one of 4× as many): a batch's fixed cost (Ray's workers starting,
every process's first calls) left out. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]
from pmap import Loop, bare_path, start_server  # noqa: E402  (bench/ is on sys.path: a script)

EXECUTORS = ("threads", "ray2", "ray4")
LABELS = {"bare-threads": "bare (threads)", "bare": "bare (async)", "dspy": "dspy"}
DSPY_VENV = Path(__file__).resolve().parent / ".venv-dspy"
DSPY_REQUIREMENTS = Path(__file__).resolve().parent / "requirements-dspy.txt"
DSPY_ANSWER = "[[ ## answer ## ]]\nbench answer\n\n[[ ## completed ## ]]"  # its ChatAdapter's format
MESSAGES = [{"role": "system", "content": "bench"}, {"role": "user", "content": "Echo 1"}]
GOAL_RATIO = 1.25  # the best executor, against the ideal
GOAL_MEMORY = 1.5  # the driver's peak memory at 10x the rows
GOAL_RAY = 1.5  # a Ray row's CPU (all processes) against a thread's
PROGRAM = '(defatom echo (params x) (instructions "Echo {{x}}"))\n(task-content (echo x))\n'
CLOCK = os.sysconf("SC_CLK_TCK")


class TreeCPU:
    """CPU seconds this process's descendants spend from now on, sampled from /proc every 100 ms
    (the sampling's own CPU is left out). What they spent before (a local Ray's processes, started
    before the clock, as a cluster would be) is not counted."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self.own = 0.0
        self.sample()
        self.before, self.seen, self.own = self.seen, {}, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.1):
            self.sample()
        self.sample()

    def sample(self) -> None:
        began = time.thread_time()
        parents: dict[int, int] = {}
        times: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                fields = stat[stat.rindex(")") + 2 :].split()
                parents[int(entry)] = int(fields[1])
                times[int(entry)] = (int(fields[11]) + int(fields[12])) / CLOCK
        me = os.getpid()
        for pid, cpu in times.items():
            ancestor, hops = parents.get(pid), 0
            while ancestor is not None and ancestor > 1 and ancestor != me and hops < 32:
                ancestor, hops = parents.get(ancestor), hops + 1
            if ancestor == me and pid != me:
                self.seen[pid] = max(cpu, self.seen.get(pid, 0.0))
        self.own += time.thread_time() - began

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(cpu - self.before.get(pid, 0.0) for pid, cpu in self.seen.items())


def one(executor: str, rows: int, concurrency: int, base_url: str) -> dict[str, Any]:
    """Run one measurement in this (child) process; its figures."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["OPENAI_API_KEY"] = "sk-fake-bench"  # litellm wants a key; the local server ignores it
    work = Path(tempfile.mkdtemp(prefix="sexp-bench-batch-"))
    started_ray = 0.0
    if executor.startswith("ray"):
        from sexp_tasks.batching.ray_executor import start_local_ray

        began = time.perf_counter()
        start_local_ray(int(executor[3:]))
        started_ray = time.perf_counter() - began
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if executor in ("bare", "bare-threads", "dspy"):
        if executor == "bare":
            run = bare_path(Loop(), base_url, rows)
            run(min(concurrency, 8))  # warm-up: imports, the client, its connection pool
        else:
            counted = (bare_threads_path if executor == "bare-threads" else dspy_path)(base_url)
            counted(8, 8)  # warm-up, as above
        tree, began, cpu = TreeCPU(), time.perf_counter(), time.process_time()
        if executor == "bare":
            run(concurrency)
            ok = rows
        else:
            ok = counted(concurrency, rows)
    else:
        from sexp_tasks.batching.driver import BatchOptions, run_batch
        from sexp_tasks.config import Settings

        program = work / "echo.sexp"
        program.write_text(PROGRAM)
        settings = Settings(
            workspace=str(work), store=str(work / "runs.db"), model="openai/test-model", api_base=base_url
        )
        warm = work / "warm.jsonl"
        warm.write_text("".join(json.dumps({"x": i}) + "\n" for i in range(8)))
        run_batch(BatchOptions(program, warm, work / "warm.out.jsonl"), settings, io.StringIO())
        data = work / "rows.jsonl"
        data.write_text("".join(json.dumps({"x": i}) + "\n" for i in range(rows)))
        options = BatchOptions(
            program, data, work / "out.jsonl", concurrency, "ray" if executor.startswith("ray") else "threads"
        )
        tree, began, cpu = TreeCPU(), time.perf_counter(), time.process_time()
        run_batch(options, settings, io.StringIO())
    seconds = time.perf_counter() - began
    driver = time.process_time() - cpu - tree.own
    children = tree.stop()
    if executor.startswith(("threads", "ray")):  # the batch's rows whose call was answered: a
        # failed call (no key) gives an "ok" row here
        answers = [json.loads(line)["value"] for line in (work / "out.jsonl").read_text().splitlines()]
        ok = answers.count("bench answer")
    return {
        "seconds": seconds,
        "ok": ok,
        "driver_cpu": driver,
        "all_cpu": driver + children,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "rss_before_kb": rss_before,
        "ray_start": started_ray,
    }


def bare_threads_path(base_url: str) -> Any:
    """(threads, count) -> how many of count litellm.completion calls, `threads` at a time, answered."""
    from concurrent.futures import ThreadPoolExecutor

    from sexp_tasks.handler.llm import _litellm

    litellm = _litellm()

    def call(_: int) -> bool:
        answer = litellm.completion(
            model="openai/test-model", messages=MESSAGES, api_base=base_url, timeout=30.0
        )
        return bool(answer.choices[0].message.content)

    def run(threads: int, count: int) -> int:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return sum(pool.map(call, range(count)))

    return run


def dspy_path(base_url: str) -> Any:
    """(threads, count) -> how many of count dspy.Predict calls under dspy.Parallel answered."""
    import dspy  # bench/.venv-dspy's: this runs in that environment's Python

    dspy.configure(lm=dspy.LM("openai/test-model", api_base=base_url, api_key="sk-fake-bench", cache=False))
    predict = dspy.Predict("question -> answer")

    def run(threads: int, count: int) -> int:
        pairs = [(predict, {"question": f"Echo {i}"}) for i in range(count)]
        answers = dspy.Parallel(num_threads=threads, disable_progress_bar=True)(pairs)
        return sum(1 for answer in answers if answer is not None and getattr(answer, "answer", None))

    return run


def dspy_python() -> tuple[str | None, str]:
    """bench/.venv-dspy's Python, made now if it is not there yet; (None, why) when it cannot be."""
    python = DSPY_VENV / "bin" / "python"
    hint = f"python -m venv {DSPY_VENV} && {DSPY_VENV}/bin/pip install -r {DSPY_REQUIREMENTS}"
    if not python.exists():
        print(f"dspy: making {DSPY_VENV} (once)...", file=sys.stderr, flush=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(DSPY_VENV)], capture_output=True)
        if made.returncode == 0:
            pip = [str(DSPY_VENV / "bin" / "pip"), "install", "-q", "-r", str(DSPY_REQUIREMENTS)]
            made = subprocess.run(pip, capture_output=True)
        if made.returncode != 0:
            return None, f"DSPy could not be installed; install it with: {hint}"
    if subprocess.run([str(python), "-c", "import dspy"], capture_output=True).returncode != 0:
        return None, f"DSPy is not installed; install it with: {hint}"
    return str(python), ""


def measure(
    executor: str, rows: int, concurrency: int, base_url: str, python: str = sys.executable
) -> dict[str, Any]:
    """`one` in a fresh child process (of python: DSPy's runs in its own environment)."""
    command = [python, __file__, "--one", executor, "--rows", str(rows)]
    command += ["--concurrency", str(concurrency), "--base-url", base_url]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        sys.exit(f"{executor}: the measurement failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over runs (of one path)."""
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def speed(args: argparse.Namespace, base_url: str) -> None:
    ideal = args.delay * math.ceil(args.rows / args.concurrency)
    names = [*args.executors, "bare-threads", "bare"]
    python, missing = (None, "") if args.no_dspy else dspy_python()
    dspy_server, dspy_url = start_server(args.delay, DSPY_ANSWER) if python is not None else (None, "")
    runs: dict[str, list[dict[str, Any]]] = {}
    try:
        for _ in range(args.repeat):  # every path once per round: a busy spell hits them alike
            for name in names:
                runs.setdefault(name, []).append(measure(name, args.rows, args.concurrency, base_url))
            if python is not None:
                dspy = measure("dspy", args.rows, args.concurrency, dspy_url, python)
                runs.setdefault("dspy", []).append(dspy)
    finally:
        if dspy_server is not None:
            dspy_server.terminate()
    if python is not None:
        names.append("dspy")
    results = {name: median_of(runs[name]) for name in names}
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.rows} rows, one task call each, server delay {args.delay * 1000:.0f} ms, "
          f"concurrency {args.concurrency}; ideal {ideal:.2f} s; {os.cpu_count()} cores, load {load}"
          + (f"; the median of {args.repeat} rounds" if args.repeat > 1 else ""))
    print(f"{'path':<14} {'seconds':>8} {'×ideal':>7} {'ok':>6} {'driver CPU ms/call':>19} "
          f"{'all CPU ms/call':>16} {'driver peak MB':>15}")
    for name in names:
        result = results[name]
        label = LABELS.get(name, name)
        note = f"  (Ray started in {result['ray_start']:.1f} s before)" if result["ray_start"] else ""
        print(
            f"{label:<14} {result['seconds']:>8.2f} {result['seconds'] / ideal:>7.2f} {result['ok']:>6} "
            f"{result['driver_cpu'] / args.rows * 1000:>19.2f} {result['all_cpu'] / args.rows * 1000:>16.2f}"
            f" {result['maxrss_kb'] / 1024:>15.0f}{note}"
        )
    if missing:
        print(f"{'dspy':<14} {missing}")
    best = min(results[name]["seconds"] / ideal for name in args.executors)
    print(f"goal: the best executor ≤ {GOAL_RATIO}× ideal: {'met' if best <= GOAL_RATIO else 'MISSED'} "
          f"({best:.2f}×)")
    per_row = {name: results[name]["all_cpu"] / args.rows * 1000 for name in names}
    if "threads" in per_row and "dspy" in per_row:
        ratio = per_row["threads"] / per_row["dspy"]
        print(f"goal: threads' CPU per row ≤ DSPy's: {'met' if ratio <= 1 else 'MISSED'} ({ratio:.2f}×)")
        if args.repeat > 1:  # how steady that is: the ratio within each round
            rounds = [a["all_cpu"] / b["all_cpu"] for a, b in zip(runs["threads"], runs["dspy"], strict=True)]
            print("  threads / dspy in each round: " + ", ".join(f"{ratio:.2f}" for ratio in rounds))
    for name in (name for name in per_row if name.startswith("ray") and "threads" in per_row):
        ratio = per_row[name] / per_row["threads"]
        verdict = "met" if ratio <= GOAL_RAY else "MISSED"
        print(f"goal: {name}'s CPU per row ≤ {GOAL_RAY}× threads': {verdict} ({ratio:.2f}×)")
    if args.marginal:
        marginal(args, base_url, results)
    failed = [name for name in names if results[name]["ok"] != args.rows]
    if failed:  # goals are reported, not asserted; rows that fail make the figures meaningless
        sys.exit(f"rows failed on {', '.join(failed)}: the figures above do not measure a batch")


def marginal(args: argparse.Namespace, base_url: str, results: dict[str, dict[str, Any]]) -> None:
    """Each executor's CPU per row between --rows and 4× as many rows: what one more row costs,
    without the fixed cost of a batch (Ray's row workers starting and importing litellm in the
    time; the first calls' warm-ups in every process), which a longer batch spreads thinner."""
    more = args.rows * 4
    print(f"marginal CPU per row, all processes (between {args.rows} and {more} rows: start-up left out)")
    slopes: dict[str, float] = {}
    for name in args.executors:
        bigger = measure(name, more, args.concurrency, base_url)
        slopes[name] = (bigger["all_cpu"] - results[name]["all_cpu"]) / (more - args.rows) * 1000
        fixed = results[name]["all_cpu"] - slopes[name] * args.rows / 1000
        print(f"{name:<14} {slopes[name]:>6.2f} ms/row  (fixed: {fixed:.1f} s of CPU per batch)")
    if "threads" in slopes:
        for name in (name for name in slopes if name.startswith("ray")):
            ratio = slopes[name] / slopes["threads"]
            print(f"goal: {name}'s marginal CPU per row ≤ {GOAL_RAY}× threads': "
                  f"{'met' if ratio <= GOAL_RAY else 'MISSED'} ({ratio:.2f}×)")


def memory(args: argparse.Namespace, base_url: str) -> None:
    small = 200 if args.quick else 1000
    print(f"the driver's peak memory (ru_maxrss), {small} rows against {small * 10}, answered at once")
    for name in args.executors:
        low = measure(name, small, args.concurrency, base_url)
        high = measure(name, small * 10, args.concurrency, base_url)
        ratio = high["maxrss_kb"] / low["maxrss_kb"]
        print(
            f"{name:<8} {low['maxrss_kb'] / 1024:>7.0f} MB / {high['maxrss_kb'] / 1024:>7.0f} MB"
            f" = {ratio:.2f}"
            f"  ({high['seconds']:.1f} s for {small * 10} rows); goal ≤ {GOAL_MEMORY}: "
            f"{'met' if ratio <= GOAL_MEMORY else 'MISSED'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--executors", nargs="+", choices=EXECUTORS, default=list(EXECUTORS))
    parser.add_argument("--quick", action="store_true", help="128 rows at 32, threads and ray2: a smoke run")
    parser.add_argument("--memory", action="store_true", help="the driver's memory at 10x the rows")
    parser.add_argument("--no-dspy", action="store_true", help="leave DSPy's path out")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every path; the medians are shown")
    parser.add_argument(
        "--marginal", action="store_true", help="also the CPU per row between --rows and 4x as many rows"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.rows, args.concurrency, args.base_url)), flush=True)
        os._exit(0)  # litellm's aiohttp sessions complain when torn down at exit; nothing is left to save
    if args.quick:
        args.rows, args.concurrency = min(args.rows, 128), min(args.concurrency, 32)
        args.no_dspy = True  # CI's smoke run: DSPy is not installed there
        if args.executors == list(EXECUTORS):
            args.executors = ["threads", "ray2"]
    server, base_url = start_server(0.0 if args.memory else args.delay)
    try:
        (memory if args.memory else speed)(args, base_url)
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
