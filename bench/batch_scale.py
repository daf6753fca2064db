"""A batch at dataset scale, through the `sexp` command as a user runs it (issue 23, point 5).

.venv/bin/python bench/batch_scale.py                      # 100,000 rows on threads, 10,000 on a local Ray
.venv/bin/python bench/batch_scale.py --threads-rows 2000 --ray-rows 0    # a smaller run
.venv/bin/python bench/batch_scale.py --quick              # 300 rows on threads (a smoke run)

Each row is one task call to a local server (bench/pmap.py's) that answers at once. For each
executor it reports:
  - the wall time and the rows per second;
  - the driver's resident memory (VmRSS of the `sexp batch` process, read from /proc every 0.2 s)
    when 10%, 50% and 100% of the rows are in OUT, and its peak: flat means the 100% figure is
    close to the 10% one;
  - `pragma integrity_check` on the store afterwards (must be `ok`);
  - stray files: anything in the batch's directory besides the program, its input, OUT, the
    store and its one lock file `runs.db.runlocks`, which is expected to stay (must be none: no
    -wal/-shm left behind, no temporary files), and a run's lock still held in that file (must
    be none);
  - how long `sexp trace BATCH_ID` and `sexp trace BATCH_ID --json` take, best of 3 (goal < 2 s).
Figures are reported, never asserted: the exit status is 1 only when the batch or a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]
from pmap import start_server  # noqa: E402  (bench/ is on sys.path: a script)

from sexp_tasks.runs import locks  # noqa: E402

SEXP = [sys.executable, "-m", "sexp_tasks"]
PROGRAM = '(defatom echo (params x) (instructions "Echo {{x}}"))\n(task-content (echo x))\n'
GOAL_TRACE_SECONDS = 2.0
# the store's one lock file stays (runs/locks.py): a run's lock is a byte of it, let go of at the end
KEPT = {"echo.sexp", "rows.jsonl", "out.jsonl", "runs.db", "runs.db.runlocks"}


def rss_kb(pid: int) -> int:
    """The process's resident memory in kB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def lines_in(path: Path) -> int:
    try:
        with path.open("rb") as file:
            return sum(1 for _ in file)
    except OSError:
        return 0


class Watch:
    """Samples the driver's memory and OUT's progress every 0.2 s until stopped."""

    def __init__(self, pid: int, out: Path, rows: int) -> None:
        self.pid, self.out, self.rows = pid, out, rows
        self.peak_kb = 0
        self.at: dict[int, int] = {}  # percent of rows in OUT -> memory then (kB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            memory = rss_kb(self.pid)
            self.peak_kb = max(self.peak_kb, memory)
            done = lines_in(self.out) * 100 // max(self.rows, 1)
            for percent in (10, 50):
                if done >= percent and percent not in self.at and memory:
                    self.at[percent] = memory
            if memory:
                self.at[100] = memory  # the last figure before the process ends

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_batch(executor: str, rows: int, concurrency: int, base_url: str) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"sexp-scale-{executor}-"))
    (work / "echo.sexp").write_text(PROGRAM)
    with (work / "rows.jsonl").open("w") as file:
        for i in range(rows):
            file.write(json.dumps({"x": i}) + "\n")
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-bench-scale", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [
        *SEXP,
        "batch",
        "echo.sexp",
        "--data",
        "rows.jsonl",
        "--out",
        "out.jsonl",
        "--store",
        "runs.db",
    ]
    command += [
        "--concurrency",
        str(concurrency),
        "--model",
        "openai/test-model",
        "--executor",
        executor,
        "-q",
    ]
    env["SEXP_API_BASE"] = base_url
    began = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watch = Watch(process.pid, work / "out.jsonl", rows)
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - began
    watch.stop()
    ok = sum(1 for line in (work / "out.jsonl").open() if json.loads(line)["status"] == "ok")
    db = sqlite3.connect(work / "runs.db")
    try:  # (a `with` block would leave the connection, and so the -wal and -shm files, open)
        integrity = db.execute("pragma integrity_check").fetchone()[0]
        found = db.execute("SELECT id FROM batches").fetchall()
    finally:
        db.close()
    batch_id = found[0][0] if found else None
    stray = sorted(p.name for p in work.iterdir() if p.name not in KEPT)
    if locks.any_held(work / "runs.db.runlocks"):
        stray.append("runs.db.runlocks (a run's lock still held)")
    trace = {
        flag: best_of(3, [*SEXP, "trace", batch_id or "-", *flag.split(), "--store", "runs.db"], work, env)
        for flag in ("", "--json")
    }
    return {
        "executor": executor,
        "rows": rows,
        "ok": ok,
        "exit": process.returncode,
        "seconds": seconds,
        "memory": watch.at,
        "peak_kb": watch.peak_kb,
        "integrity": integrity,
        "stray": stray,
        "trace": trace,
        "stderr": stderr[-2000:],
        "work": str(work),
    }


def best_of(times: int, command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """(the best wall time of `times` runs, the last exit status)."""
    best, status = float("inf"), 0
    for _ in range(times):
        began = time.perf_counter()
        status = subprocess.run(command, cwd=cwd, env=env, capture_output=True).returncode
        best = min(best, time.perf_counter() - began)
    return best, status


def report(result: dict[str, Any]) -> bool:
    """Print result's figures; whether every check held."""
    memory = result["memory"]
    mb = {percent: memory.get(percent, 0) / 1024 for percent in (10, 50, 100)}
    trace, traced_json = result["trace"][""], result["trace"]["--json"]
    checks = {
        "every row ok": result["ok"] == result["rows"] and result["exit"] == 0,
        "integrity ok": result["integrity"] == "ok",
        "no stray files": not result["stray"],
        "trace answers": trace[1] == 0 and traced_json[1] == 0,
    }
    print(
        f"{result['executor']}: {result['rows']} rows in {result['seconds']:.1f} s "
        f"({result['rows'] / result['seconds']:.0f} rows/s), {result['ok']} ok, exit {result['exit']}"
    )
    print(
        f"  driver memory: {mb[10]:.0f} MB at 10%, {mb[50]:.0f} MB at 50%, {mb[100]:.0f} MB at the end, "
        f"peak {result['peak_kb'] / 1024:.0f} MB (end / 10% = {mb[100] / max(mb[10], 1):.2f})"
    )
    print(f"  integrity_check: {result['integrity']}; stray files: {', '.join(result['stray']) or 'none'}")
    goal = "met" if max(trace[0], traced_json[0]) < GOAL_TRACE_SECONDS else "MISSED"
    print(
        f"  sexp trace BATCH_ID: {trace[0]:.2f} s, --json {traced_json[0]:.2f} s "
        f"(goal < {GOAL_TRACE_SECONDS:.0f} s: {goal})"
    )
    failed = [name for name, held in checks.items() if not held]
    if failed:
        print(f"  FAILED: {', '.join(failed)} (in {result['work']})\n{result['stderr']}")
    return not failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads-rows", type=int, default=100_000)
    parser.add_argument("--ray-rows", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="300 rows on threads only: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.threads_rows, args.ray_rows = 300, 0
    server, base_url = start_server(0.0)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores, load {load}; concurrency {args.concurrency}; the server answers at once")
    held = True
    try:
        for executor, rows in (("threads", args.threads_rows), ("ray", args.ray_rows)):
            if rows:
                held = report(run_batch(executor, rows, args.concurrency, base_url)) and held
    finally:
        server.terminate()
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main()
