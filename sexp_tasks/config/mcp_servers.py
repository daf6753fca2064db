"""sexp.toml's `[mcp.NAME]` tables: the MCP servers whose tools a template may offer (SPEC §11.4),
each checked here, once, into an McpServer (handler/mcp_client.py starts and talks to them)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..redact import mask_arguments, mask_url

DEFAULT_TIMEOUT = 30.0  # seconds one tool call (or the server's start) may take, unless `timeout` says
SERVER_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_KEYS = ("command", "url", "env", "cwd", "headers", "timeout")


@dataclass(frozen=True)
class McpServer:
    """One declared MCP server: a command started over stdio, or a streamable-HTTP url."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    # Out of the repr: a header or variable may hold a token, and a repr may reach a log.
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = DEFAULT_TIMEOUT

    @property
    def where(self) -> str:
        """How the server is reached, for messages: its command line or its url."""
        return mask_arguments(self.command) if self.command else mask_url(str(self.url))  # tokens hidden


def mcp_servers(value: Any, where: str) -> dict[str, McpServer]:
    """The `[mcp]` table as servers by name; a UsageError naming `[mcp.NAME] key` for what is wrong."""
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a table of servers ([mcp.NAME])")
    servers: dict[str, McpServer] = {}
    for name, table in value.items():
        if isinstance(table, McpServer):  # the API may give servers made already
            servers[name] = table
            continue
        label = f"{where.removesuffix(']')}.{name}]" if where.endswith("]") else f"{where}.{name}"
        if not SERVER_NAME.fullmatch(name):
            raise UsageError(f"{label}: a server's name is 1 to 64 letters, digits, '_' or '-'")
        servers[name] = _server(name, table, label)
    return servers


def _server(name: str, table: Any, label: str) -> McpServer:
    if not isinstance(table, dict):
        raise UsageError(f'{label} must be a table (command = [...] or url = "...")')
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UsageError(f"{label}: unknown key '{unknown[0]}'; known keys: {', '.join(_KEYS)}")
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        raise UsageError(
            f'{label} needs one of command = ["program", "arg", ...] (stdio) or url = "http://..."'
        )
    if command is not None and (
        not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command)
    ):
        raise UsageError(f'{label} command must be a non-empty list of strings, e.g. ["python", "server.py"]')
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise UsageError(f"{label} url must be an http:// or https:// URL (got {url!r})")
    timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise UsageError(f"{label} timeout must be a positive number of seconds (got {timeout!r})")
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise UsageError(f"{label} cwd must be a directory's path (a string)")
    if url is not None and ("env" in table or cwd is not None):
        raise UsageError(f"{label}: env and cwd are for a command's server, not a url's")
    if command is not None and "headers" in table:
        raise UsageError(f"{label}: headers are for a url's server, not a command's")
    return McpServer(
        name,
        tuple(command or ()),
        url,
        _strings(table.get("env", {}), f"{label} env"),
        cwd,
        _strings(table.get("headers", {}), f"{label} headers"),
        float(timeout),
    )


def _strings(value: Any, label: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f'{label} must be a table of strings ({{KEY = "value"}})')
    return dict(value)
