"""An MCP server for the tests (SPEC §11.4), written with the `mcp` package and run over stdio:
`python tests/mcp_server.py` (or `... http PORT` for streamable HTTP). Its tools: add, echo,
slow(seconds), fail (an isError result) and crash (the process exits mid-call). With
MCP_SERVER_LOG set, each call appends its name and arguments to that file, so a test can tell
whether the server was asked at all; with MCP_SERVER_PIDFILE, it writes its pid there."""

from __future__ import annotations

import json
import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-tools")


def _log(name: str, arguments: dict[str, object]) -> None:
    path = os.environ.get("MCP_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    _log("add", {"a": a, "b": b})
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    _log("echo", {"text": text})
    return f"echo: {text}"


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for the given seconds, then answer."""
    _log("slow", {"seconds": seconds})
    time.sleep(seconds)
    return "done"


@server.tool()
def fail(reason: str) -> str:
    """Always fail with the reason."""
    _log("fail", {"reason": reason})
    raise ValueError(f"failed on purpose: {reason}")


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    _log("crash", {})
    os._exit(3)


if __name__ == "__main__":
    pidfile = os.environ.get("MCP_SERVER_PIDFILE")
    if pidfile:
        with open(pidfile, "w", encoding="utf-8") as out:
            out.write(str(os.getpid()))
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
