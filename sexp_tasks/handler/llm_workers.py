"""Model calls spread over worker processes, so that litellm's CPU per call is not held by one GIL.

The parent keeps a small pool of workers (SEXP_LLM_WORKERS=N; unset or 0: none), started
only once real calls overlap, so a single call never waits for one (importing litellm takes seconds).
Until a worker is ready, calls run in the calling process as before. Each worker runs
litellm.acompletion (over aiohttp) on its own event loop, for any number of calls at once, and gets
them over a pipe as length-prefixed JSON frames:

    parent → worker   {"id": n, "options": {litellm kwargs}, "env": {...} only when it changed}
                      {"cancel": n}
    worker → parent   {"ready": pid}, then {"id": n, "reply": {ModelReply fields}}
                      or {"id": n, "error": [kind, message]}

A worker has the parent's environment (litellm reads provider keys there; they never travel in argv
or in any log) and is kept in step with it; it dies with the parent (the kernel's parent-death signal
and the end of its input pipe) and, if it dies first, every call it held fails with a ProviderError.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

HEADER = struct.Struct(">I")
ROOT = str(Path(__file__).resolve().parent.parent.parent)  # where the worker finds this package
MAX_CRASHES = 3  # workers that die this often in one process leave its calls in-process
GRACE_SECONDS = 30.0  # beyond the call's own timeouts, before a silent worker is given up on


def workers_wanted() -> int:
    """SEXP_LLM_WORKERS; unset, 0 or anything but a whole number means no workers.

    Opt-in: each worker spends seconds of CPU importing litellm, which pays off only for many short
    overlapping calls (bench/pmap.py at 32: 1.23x the ideal with 4 workers against 1.71x in-process;
    with a real provider's seconds-long answers the in-process transports are enough)."""
    text = os.environ.get("SEXP_LLM_WORKERS", "").strip()
    return int(text) if text.isdigit() else 0


class _Pending:
    """One call a worker holds: the frame that answers it, once it comes."""

    __slots__ = ("done", "frame")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.frame: dict[str, Any] = {}


class _Worker:
    """One worker process, started by its own reader thread, which then reads its replies."""

    def __init__(self, pool: Pool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.lock = threading.Lock()  # one writer at a time on the pipe, and the pending table
        self.pending: dict[int, _Pending] = {}
        self.ready = False
        self.dead = False
        self.env: dict[str, str] = {}
        self.process: subprocess.Popen[bytes] | None = None
        threading.Thread(target=self._run, name=f"sexp-llm-worker-{index}", daemon=True).start()

    def _run(self) -> None:
        """Start the process (from this thread, which lives as long as it: see _die_with) and read it."""
        how = "could not be started"
        try:
            self.env = dict(os.environ)
            code = f"import sys; sys.path.insert(0, {ROOT!r}); from {__name__} import serve; "
            code += f"serve({os.getpid()})"
            self.process = subprocess.Popen(
                [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env
            )
            assert self.process.stdout is not None
            while (frame := read_frame(self.process.stdout)) is not None:
                self._receive(frame)
            self.process.wait()
            how = _ending(self.process.returncode)
        except Exception as exc:  # the worker's problem, not the caller's: its calls fail, below
            how = f"failed ({type(exc).__name__})"
        finally:
            self._die(how)

    def _receive(self, frame: dict[str, Any]) -> None:
        if "ready" in frame:
            self.ready = True
            return
        with self.lock:
            waiter = self.pending.pop(frame.get("id", -1), None)
        if waiter is not None:
            waiter.frame = frame
            waiter.done.set()

    def _die(self, how: str) -> None:
        """Fail every call this worker held, and leave the pool to start another when needed."""
        pid = self.process.pid if self.process is not None else "?"
        message = f"the worker process for model calls (pid {pid}) {how} while this call was in flight"
        with self.lock:
            self.dead, self.ready = True, False
            held, self.pending = self.pending, {}
        for waiter in held.values():
            waiter.frame = {"error": ["provider_error", message]}
            waiter.done.set()
        self.pool.lost(self)
        if self.process is not None and self.process.poll() is None:
            self.process.kill()

    def send(self, call_id: int, options: dict[str, Any]) -> _Pending | None:
        """Hand the call to the worker; None when it cannot take it (dead, or options not JSON)."""
        env = dict(os.environ)
        waiter = _Pending()
        with self.lock:
            if self.dead or self.process is None or self.process.stdin is None:
                return None
            frame: dict[str, Any] = {"id": call_id, "options": options}
            if env != self.env:
                frame["env"] = env
            try:
                data = json.dumps(frame).encode()
            except (TypeError, ValueError):
                return None
            self.pending[call_id] = waiter
            try:
                write_frame(self.process.stdin, data)
            except OSError:
                del self.pending[call_id]
                return None
            self.env = env
        return waiter

    def cancel(self, call_id: int) -> None:
        """Forget the call and ask the worker to stop it (an interrupted or given-up caller)."""
        with self.lock:
            self.pending.pop(call_id, None)
            if not self.dead and self.process is not None and self.process.stdin is not None:
                with contextlib.suppress(OSError):
                    write_frame(self.process.stdin, json.dumps({"cancel": call_id}).encode())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()


class Pool:
    """This process's workers: started when calls first overlap, used once one of them is ready."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        self.overlap = 0  # calls running in this process while no worker is ready
        self.next_id = 0
        self.crashes = 0

    def enabled(self) -> bool:
        return self.crashes < MAX_CRASHES and workers_wanted() > 0

    def ready(self) -> bool:
        return any(w.ready for w in self.workers)

    @contextlib.contextmanager
    def in_process(self) -> Iterator[None]:
        """Around a call made in this process: the first time two overlap, the workers start."""
        with self.lock:
            self.overlap += 1
            if self.overlap > 1:
                self._start()
        try:
            yield
        finally:
            with self.lock:
                self.overlap -= 1

    def start(self) -> None:
        """Start the missing workers now (they become ready seconds later)."""
        with self.lock:
            self._start()

    def _start(self) -> None:
        wanted = workers_wanted()
        self.workers = [w for w in self.workers if not w.dead]
        while len(self.workers) < wanted and self.crashes < MAX_CRASHES:
            self.workers.append(_Worker(self, len(self.workers)))

    def wait_ready(self, timeout: float) -> bool:
        """Whether every worker is ready within timeout seconds (for tests and benchmarks)."""
        self.start()
        return _wait(lambda: bool(self.workers) and all(w.ready for w in self.workers), timeout)

    def lost(self, worker: _Worker) -> None:
        """A worker died on its own (not stopped): counted, so that workers that cannot run stop."""
        with self.lock:
            if worker in self.workers:
                self.workers.remove(worker)
                self.crashes += 1

    def call(self, options: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """The worker's answer frame for one call, or None when no worker took it."""
        with self.lock:
            ready = [w for w in self.workers if w.ready]
            if not ready:
                return None
            worker = min(ready, key=lambda w: len(w.pending))
            self.next_id += 1
            call_id = self.next_id
        waiter = worker.send(call_id, options)
        if waiter is None:
            return None
        try:
            answered = waiter.done.wait(deadline)
        except BaseException:
            worker.cancel(call_id)  # an interrupted caller leaves no request running behind it
            raise
        if not answered:
            worker.cancel(call_id)
            return {"error": ["timeout", f"the worker process gave no answer in {deadline:.0f} s"]}
        return waiter.frame

    def pids(self) -> list[int]:
        return [w.process.pid for w in self.workers if w.process is not None and not w.dead]

    def stop(self) -> None:
        """Kill the workers (their calls fail); the next overlap starts new ones."""
        with self.lock:
            workers, self.workers = self.workers, []
        for worker in workers:
            worker.stop()


_pools: list[Pool] = []
_pools_guard = threading.Lock()


def pool() -> Pool:
    """This process's pool (a forked child makes its own)."""
    with _pools_guard:
        if not _pools or _pools[0].pid != os.getpid():
            _pools[:] = [Pool()]
        return _pools[0]


def _wait(condition: Any, timeout: float) -> bool:
    event = threading.Event()
    for _ in range(int(timeout * 20)):
        if condition():
            return True
        event.wait(0.05)
    return bool(condition())


def _ending(code: int | None) -> str:
    if code is not None and code < 0:
        return f"was killed (signal {-code})"
    return f"exited (status {code})"


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next frame on a pipe, None at its end."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    frame: dict[str, Any] = json.loads(body)
    return frame


def write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


# The worker's side -----------------------------------------------------------------------------


def serve(parent: int) -> None:
    """A worker's main: answer the parent's calls on one event loop until its pipe closes."""
    _die_with(parent)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the replies
    import asyncio

    from . import llm

    llm._litellm()
    asyncio.run(_serve(replies, llm))


def _die_with(parent: int) -> None:
    """Ask the kernel to kill this process when the parent's thread that started it ends (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(0)


async def _serve(replies: IO[bytes], llm: Any) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    await _warm_up(llm)
    write_frame(replies, json.dumps({"ready": os.getpid()}).encode())
    calls: dict[int, asyncio.Task[None]] = {}

    async def answer(call_id: int, options: dict[str, Any]) -> None:
        try:
            frame = {"id": call_id, **await llm.complete_in_worker(options)}
        finally:
            calls.pop(call_id, None)
        write_frame(replies, json.dumps(frame).encode())

    while True:
        try:
            (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
            frame = json.loads(await reader.readexactly(size))
        except asyncio.IncompleteReadError:
            os._exit(0)  # the parent is gone: nobody is left to answer
        if "cancel" in frame:
            task = calls.pop(frame["cancel"], None)
            if task is not None:
                task.cancel()
            continue
        if "env" in frame:
            _adopt(frame["env"])
        calls[frame["id"]] = loop.create_task(answer(frame["id"], frame["options"]))


async def _warm_up(llm: Any) -> None:
    """One call to a closed local port, so that the first real call does not pay for litellm's lazy
    imports and set-up (seconds here)."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: the connection is refused at once
        base = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        messages = [{"role": "user", "content": "warm-up"}]
        options = {"model": "openai/warm-up", "messages": messages, "api_base": base, "timeout": 10.0}
        await llm.complete_in_worker({**options, "api_key": "sk-warm-up", "max_retries": 0})


def _adopt(env: dict[str, str]) -> None:
    """Make this process's environment the parent's."""
    for name in [name for name in os.environ if name not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
