"""A run's MCP tools (SPEC §11.4): the servers sexp.toml declares, asked through the run's record.

A server's listing of tools is a journaled step of the run (its schemas are part of every model
turn's request, so a resumed run must offer the same tools without starting the server), and with
a cassette both listings and answers are recorded, and replayed with no server at all. The calls
themselves are journaled as every tool call is (TaskSystem.record_tool)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..config.mcp_servers import McpServer
from ..errors import ServiceError
from ..handler.mcp_tools import McpToolError
from ..handler.replay import Cassette
from ..results import FAILED, TaskError, TaskResult
from ..run_context import run_context, within
from ..runs.journal import Journal, fingerprint

if TYPE_CHECKING:
    from ..handler.mcp_client import McpClients


class RunMcpSource:
    """The McpSource of one run: listings cached for the run, journaled and kept in its cassette."""

    def __init__(
        self,
        declared: dict[str, McpServer],
        clients: Callable[[], McpClients],
        journal: Callable[[], Journal | None],
        cassette: Callable[[], Cassette | None],
    ) -> None:
        self.declared = declared
        self._clients = clients  # the servers, started when first asked (never on a full replay)
        self._journal = journal
        self._cassette = cassette
        self._listings: dict[str, list[dict[str, Any]]] = {}
        self._listing_lock = threading.Lock()

    def servers(self) -> tuple[str, ...]:
        """The names of the servers sexp.toml declares."""
        return tuple(self.declared)

    def list_tools(self, server: str) -> list[dict[str, Any]]:
        """The server's tools, from this run's listing, its journal, its cassette or the server."""
        with self._listing_lock:  # pmap's first calls list once: one step, whichever comes first
            listing = self._listings.get(server)
            if listing is None:
                # out of any pmap element: the step's key must not depend on which element listed
                with within(replace(run_context(), element=None)):
                    listing = self._listings[server] = self._journaled_listing(server)
        return listing

    def _journaled_listing(self, server: str) -> list[dict[str, Any]]:
        journal = self._journal()
        if journal is None:
            return self._listing(server)

        def perform() -> TaskResult:
            try:
                return TaskResult(json.dumps(self._listing(server)))
            except McpToolError as err:
                return TaskResult("", status=FAILED, error=TaskError("TASK_FAILURE", str(err)))

        spec = self.declared[server]
        request = fingerprint("mcp-tools", server, spec.command, spec.url)
        result = journal.record("tool", f"{server}/*", f"mcp:{server}/tools", request, perform)
        if result.error is not None:
            raise McpToolError(result.error.message)
        listing: list[dict[str, Any]] = json.loads(result.content)
        return listing

    def _listing(self, server: str) -> list[dict[str, Any]]:
        """The server's tools from the cassette being replayed, else asked of it (and kept)."""
        from ..handler.mcp_client import McpFailure  # lazy: the mcp package (cli/startup.py)

        cassette, key = self._cassette(), f"mcp-tools:{server}"
        if cassette is not None and cassette.replaying:
            try:
                listing: list[dict[str, Any]] = cassette.kept(key)
            except ServiceError as err:
                raise McpToolError(err.message) from None
            return listing
        try:
            listing = [tool.as_record() for tool in self._clients().list_tools(server)]
        except McpFailure as err:
            where = self.declared[server].where
            raise McpToolError(f"MCP server '{server}' ({where}) failed: {err}") from None
        if cassette is not None:
            cassette.keep(key, listing)
        return listing

    def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> str:
        """The text the model reads: the tool's content, `error: ...` when the tool or server failed."""
        from ..handler.mcp_client import McpFailure  # lazy: the mcp package (cli/startup.py)

        cassette = self._cassette()
        key = f"mcp-call:{server}/{tool} {fingerprint(arguments)}"
        if cassette is not None and cassette.replaying:
            try:
                answer: str = cassette.kept(key)
            except ServiceError as err:
                return f"error: {server}/{tool}: {err.message}"
            return answer
        try:
            result = self._clients().call_tool(server, tool, arguments)
            answer = f"error: {server}/{tool}: {result.text}" if result.is_error else result.text
        except McpFailure as err:
            answer = f"error: {server}/{tool}: {err}"
        if cassette is not None:
            cassette.keep(key, answer)
        return answer


def checked_tool_names(
    declared: Mapping[str, McpServer], warn: Callable[[str], None]
) -> Callable[[str], list[str] | None]:
    """For `sexp check`: the names of a declared server's tools, the server started, asked and
    stopped as `sexp tools` does (each server once); None, and a warning, when it cannot be asked
    (a checker reports what it can tell, and a server down now may be up for the run)."""
    names: dict[str, list[str] | None] = {}

    def tool_names(server: str) -> list[str] | None:
        if server not in names:
            from ..handler.mcp_client import McpClients, McpFailure  # lazy: only a NAME/tool starts it

            clients = McpClients({server: declared[server]}, start_seconds=declared[server].timeout)
            try:
                names[server] = [tool.name for tool in clients.list_tools(server)]
            except McpFailure as err:
                where = declared[server].where
                warn(f"MCP server '{server}' ({where}) failed: {err}; the names of its tools are not checked")
                names[server] = None
            finally:
                clients.close()
        return names[server]

    return tool_names
