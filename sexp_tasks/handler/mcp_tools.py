"""MCP servers' tools as the tools a Handler offers (SPEC §11.4): `NAME/*` and `NAME/tool` in a
template's `<tools>` become tools named `NAME__tool` for the model (providers take letters,
digits, `_` and `-` only), each with the server's input schema; a call's arguments are checked
against it before the server is asked, and every failure is an answer the model reads.

Where the tools' listings and the calls' answers come from (the server, the run's journal, a
cassette) is McpSource's business (tasks/mcp_services.py); this module imports no `mcp`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..results import TaskError
from .json_schema import violations
from .python_tools import capped

SEPARATOR = "__"  # between a server's name and its tool's, in the name the model sees
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class McpToolError(Exception):
    """A `NAME/...` tool name the run cannot offer (no such server or tool, a server that fails)."""


class McpSource(Protocol):
    """Where a run's MCP tools come from: the server, or the run's record of it."""

    def servers(self) -> tuple[str, ...]:
        """The names of the servers sexp.toml declares."""
        ...

    def list_tools(self, server: str) -> list[dict[str, Any]]:
        """The server's tools as records (name, description, input_schema); McpToolError if it fails."""
        ...

    def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> str:
        """The answer the model reads (`error: ...` for a failure)."""
        ...


def wire_name(server: str, tool: str) -> str:
    """The name the model calls server's tool by: `server__tool`, other characters made `_`,
    at most 64 characters."""
    return _NOT_IN_NAME.sub("_", f"{server}{SEPARATOR}{tool}")[:64]


@dataclass(frozen=True)
class McpTool:
    """One server's tool offered to the model, as a PythonTool is (name, schema, run)."""

    name: str  # the wire name
    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    call: Callable[[str, str, dict[str, Any]], str]

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema sent in the request's `tools`."""
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        parameters = dict(self.input_schema) or {"type": "object", "properties": {}}
        function["parameters"] = parameters
        return {"type": "function", "function": function}

    def run(self, arguments: dict[str, Any]) -> str:
        """The server's answer, or `error: ...` naming the arguments' violations (not sent then)."""
        problems = violations(arguments, self.input_schema) if self.input_schema else []
        if problems:
            return f"error: {self.server}/{self.tool}: invalid arguments: " + "; ".join(problems)
        return capped(self.call(self.server, self.tool, arguments))


def offered(names: tuple[str, ...], source: McpSource) -> tuple[tuple[str, ...], dict[str, McpTool]]:
    """names with each `NAME/*` and `NAME/tool` replaced by the wire names of the tools it means,
    and those tools by wire name; McpToolError for a server or tool that is not there."""
    if not any("/" in name for name in names):
        return names, {}
    servers = source.servers()
    expanded: list[str] = []
    tools: dict[str, McpTool] = {}
    for name in names:
        server, slash, wanted = name.partition("/")
        if not slash:
            expanded.append(name)
            continue
        if server not in servers:
            known = ", ".join(servers) or "none is declared"
            raise McpToolError(f"no MCP server named '{server}' (sexp.toml [mcp.{server}]; known: {known})")
        listing = source.list_tools(server)
        chosen = listing if wanted == "*" else [t for t in listing if t["name"] == wanted]
        if not chosen:
            offers = ", ".join(str(t["name"]) for t in listing) or "no tools"
            raise McpToolError(f"MCP server '{server}' has no tool '{wanted}' (it offers {offers})")
        for record in chosen:
            tool = McpTool(
                wire_name(server, record["name"]),
                server,
                record["name"],
                str(record.get("description") or ""),
                dict(record.get("input_schema") or {}),
                source.call_tool,
            )
            if tool.name not in tools:
                expanded.append(tool.name)
                tools[tool.name] = tool
    return tuple(expanded), tools


def offered_tools(
    names: tuple[str, ...], source: McpSource | None
) -> tuple[tuple[str, ...], dict[str, Any], TaskError | None]:
    """A Handler's tool names with the servers' tools in place, those tools, and the error that
    fails the task before any request when a server or tool is not there (no source: names as
    they are)."""
    if source is None or not any("/" in name for name in names):
        return names, {}, None
    try:
        expanded, tools = offered(names, source)
    except McpToolError as err:
        return names, {}, TaskError("TASK_FAILURE", str(err), reason="tool_unavailable")
    return expanded, tools, None
