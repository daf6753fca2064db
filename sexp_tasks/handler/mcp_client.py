"""The one module that imports the `mcp` package (SPEC §11.4): MCP servers started on first use,
talked to from the synchronous Handler through an event loop in a thread of their own, and
stopped at the end of the run (or of the process).

A stdio server runs under process/launcher.py, as a script does: when this process dies (a kill
included), the launcher gets SIGTERM and ends the server's whole process tree, so no server
outlives its run. Failures come back as McpFailure with a message a person (or a model) can read;
nothing of the library's own errors escapes."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import IO, Any

from ..config.mcp_servers import McpServer
from ..process.child_processes import LAUNCHER
from .loop_thread import LoopThread

GRACE_SECONDS = 2.0  # the launcher's wait between SIGTERM and SIGKILL for a server's processes
START_SECONDS = 60.0  # the least a server's start (its first answer, to initialize) may take
STOP_SECONDS = 10.0  # the most stopping one server may take (the mcp client's own escalation included)


# The launcher's status lines go to fd 3, a copy of stderr (the launcher's command must keep fd 2:
# the launcher closes its status fd in the command's process).
_STATUS_ON_3 = (
    "import os, sys; os.dup2(2, 3); os.execv(sys.executable, [sys.executable, '-I', '-S', *sys.argv[1:]])"
)


class McpFailure(Exception):
    """A server that cannot start, answer or be reached, said in one line."""


@dataclass(frozen=True)
class McpToolInfo:
    """One tool a server offers: its name, description and JSON Schema of its arguments."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def as_record(self) -> dict[str, Any]:
        """The tool as JSON (journaled and in cassettes, so a replay needs no server)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> McpToolInfo:
        return cls(str(record["name"]), str(record.get("description") or ""), dict(record["input_schema"]))


@dataclass(frozen=True)
class McpAnswer:
    """A tool call's result: its content as text, and whether the tool said it failed."""

    text: str
    is_error: bool = False


class _Connection:
    """One running server: a task on the loop holds its transport and session open until stopped."""

    def __init__(self, server: McpServer, loop: LoopThread) -> None:
        import asyncio

        self.server = server
        self.loop = loop
        self.session: Any = None
        self.errlog: IO[bytes] | None = None
        self.stop_event = asyncio.Event()
        self.task: Any = None

    async def _serve(self, ready: Any) -> None:
        """Start the server, hand its session to ready, then hold it open until stop_event."""
        from mcp import ClientSession

        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                ready.set_result(session)
                await self.stop_event.wait()
        except BaseException as err:  # the library's errors stay here; ready says what went wrong
            if not ready.done():
                await _settled()  # what the server wrote on stderr as it ended says why
                ready.set_exception(McpFailure(self._why(err)))
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise

    def _transport(self) -> Any:
        server = self.server
        if server.url is not None:
            import httpx2  # noqa: F401  (the mcp package's own HTTP client)
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(headers=dict(server.headers), timeout=server.timeout)
            return streamable_http_client(server.url, http_client=client)
        from mcp import StdioServerParameters, stdio_client

        launcher = [
            sys.executable,
            "-I",
            "-S",
            "-c",
            _STATUS_ON_3,
            str(LAUNCHER),
            str(GRACE_SECONDS),
            "3",
            "-",
        ]
        argv = [*launcher, *server.command]
        self.errlog = tempfile.TemporaryFile()  # the server's stderr (and the launcher's status lines)
        environment = {**os.environ, **server.env}  # the launcher's -I ignores PYTHON* variables itself
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=environment, cwd=server.cwd)
        return stdio_client(params, errlog=self.errlog)  # type: ignore[arg-type]

    def _why(self, err: BaseException) -> str:
        """What went wrong starting or talking to the server, in one line."""
        said = self.stderr_tail()
        if said:
            return said
        while isinstance(err, BaseExceptionGroup) and err.exceptions:
            err = err.exceptions[0]
        said = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        return f"cannot reach {self.server.where}: {said}" if self.server.url is not None else said

    def stderr_tail(self) -> str:
        """The last line the server wrote on stderr (the launcher's `error ERRNO` said as words)."""
        if self.errlog is None:
            return ""
        try:
            self.errlog.seek(0)
            lines = self.errlog.read().decode("utf-8", "replace").splitlines()
        except (OSError, ValueError):
            return ""
        for line in lines:
            if line.startswith("error ") and line[6:].isdigit():
                return f"cannot start {self.server.command[0]!r}: {os.strerror(int(line[6:]))}"
        status = ("ready", "start ", "exit ", "signal ", "stray ", "clean")
        said = [line for line in lines if line.strip() and not line.startswith(status)]
        return said[-1].strip() if said else ""


class McpClients:
    """The run's MCP servers by name: each started when first asked, all stopped by close()."""

    def __init__(self, servers: dict[str, McpServer], start_seconds: float | None = None) -> None:
        self.servers = servers
        # a run waits at least START_SECONDS for a server (a first `npx` may download it); a
        # checker, that only lists tools, waits the server's own timeout
        self._start_seconds = start_seconds
        self._loop: LoopThread | None = None
        self._connections: dict[str, _Connection] = {}
        self._lock = threading.Lock()
        _OPEN.add(self)

    def _session(self, name: str) -> tuple[_Connection, Any]:
        """The server's connection and session, started now if not yet; McpFailure if it cannot."""
        server = self.servers[name]
        with self._lock:
            connection = self._connections.get(name)
            if connection is None or connection.task is None or connection.task.done():
                if server.command and shutil.which(server.command[0], path=_path(server)) is None:
                    raise McpFailure(f"cannot start {server.command[0]!r}: command not found")
                if self._loop is None:
                    self._loop = LoopThread()
                connection = self._connections[name] = self._start(server, self._loop)
        return connection, connection.session

    def _start(self, server: McpServer, loop: LoopThread) -> _Connection:
        import asyncio

        start_within = self._start_seconds or max(server.timeout, START_SECONDS)

        async def start() -> _Connection:
            connection = _Connection(server, loop)
            ready = asyncio.get_running_loop().create_future()
            connection.task = asyncio.ensure_future(connection._serve(ready))
            try:
                connection.session = await asyncio.wait_for(asyncio.shield(ready), start_within)
            except TimeoutError:  # said here: the loop thread's caller polls with TimeoutErrors of its own
                connection.stop_event.set()
                raise McpFailure(f"it did not start within {start_within:g} s") from None
            return connection

        return self._run(loop, start())

    @staticmethod
    def _run(loop: LoopThread, coroutine: Coroutine[Any, Any, Any]) -> Any:
        try:
            return loop.run(coroutine)
        except McpFailure:
            raise
        except Exception as err:  # nothing of the library escapes
            raise McpFailure(f"{type(err).__name__}: {err}") from None

    def list_tools(self, name: str) -> list[McpToolInfo]:
        """The tools server name offers; McpFailure when it cannot start or answer."""
        import asyncio

        connection, session = self._session(name)
        timeout = self.servers[name].timeout

        async def listing() -> list[McpToolInfo]:
            tools: list[McpToolInfo] = []
            cursor = None
            while True:
                params = None
                if cursor is not None:
                    from mcp.types import PaginatedRequestParams

                    params = PaginatedRequestParams(cursor=cursor)
                result = await asyncio.wait_for(session.list_tools(params=params), timeout)
                tools += [
                    McpToolInfo(t.name, t.description or "", dict(t.input_schema)) for t in result.tools
                ]
                cursor = result.next_cursor
                if not cursor:
                    return tools

        return self._call(connection, listing, "listing its tools")

    def call_tool(self, name: str, tool: str, arguments: dict[str, Any]) -> McpAnswer:
        """The answer of tool on server name; McpFailure when the server fails or is too slow."""
        import asyncio

        connection, session = self._session(name)
        timeout = self.servers[name].timeout

        async def calling() -> McpAnswer:
            result = await asyncio.wait_for(session.call_tool(tool, arguments), timeout)
            return McpAnswer(
                content_text(getattr(result, "content", [])), bool(getattr(result, "is_error", False))
            )

        return self._call(connection, calling, f"calling {tool}")

    def _call(self, connection: _Connection, make: Callable[[], Coroutine[Any, Any, Any]], doing: str) -> Any:
        """make()'s result on the loop; a timeout, a crash or a protocol error as McpFailure."""
        assert self._loop is not None
        timeout = connection.server.timeout

        async def timed() -> Any:
            try:
                return await make()
            except TimeoutError:  # said here: the loop thread's caller polls with TimeoutErrors of its own
                raise McpFailure(f"no answer within {timeout:g} s ({doing}; the server's timeout)") from None

        try:
            return self._loop.run(timed())
        except McpFailure:
            raise
        except Exception as err:  # the server crashed or broke the protocol: started afresh next time
            connection.loop.loop.call_soon_threadsafe(connection.stop_event.set)
            with self._lock:
                if self._connections.get(connection.server.name) is connection:
                    del self._connections[connection.server.name]
            tail = connection.stderr_tail()
            said = tail or f"{type(err).__name__}: {err}"
            raise McpFailure(f"the server failed while {doing}: {said}") from None

    def close(self) -> None:
        """Stop every server started (each within STOP_SECONDS), then the loop."""
        import asyncio

        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
            loop, self._loop = self._loop, None
        _OPEN.discard(self)
        if loop is None:
            return

        async def stop_all() -> None:
            for connection in connections:
                connection.stop_event.set()
            tasks = [c.task for c in connections if c.task is not None]
            if tasks:
                await asyncio.wait(tasks, timeout=STOP_SECONDS)

        try:
            loop.run(stop_all())
        finally:
            loop.loop.call_soon_threadsafe(loop.loop.stop)
            for connection in connections:
                if connection.errlog is not None:
                    connection.errlog.close()


def content_text(content: Any) -> str:
    """A tool result's content as the text the model reads: text parts as they are, others named."""
    parts: list[str] = []
    for block in content or ():
        kind = getattr(block, "type", "?")
        if kind == "text":
            parts.append(str(block.text))
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", ""))
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '?')}, {size} base64 characters not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '?')}]")
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            text = getattr(resource, "text", None)
            parts.append(str(text) if text is not None else f"[resource: {getattr(resource, 'uri', '?')}]")
        else:
            parts.append(f"[{kind} content]")
    return "\n".join(parts)


async def _settled() -> None:
    """A moment for a server's last words on stderr to reach the file (it may still be writing)."""
    import asyncio

    await asyncio.sleep(0.5)


def _path(server: McpServer) -> str | None:
    return server.env.get("PATH", os.environ.get("PATH"))


# Every McpClients not yet closed: closed at the process's exit, so a run that raised or was
# interrupted leaves no server behind (a killed process's servers are ended by their launchers).
_OPEN: set[McpClients] = set()


@atexit.register
def _close_all() -> None:
    for clients in list(_OPEN):
        try:
            clients.close()
        except Exception:  # the process is ending: the launchers end what is left
            pass
