"""The MCP servers sexp.toml declares, as one task system holds them: started when first asked
(handler/mcp_client.py, which alone imports mcp), stopped at the end of a run."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..handler.mcp_client import McpClients


class McpPool:
    """The declared servers' clients, made on first use, from any thread."""

    def __init__(self, servers: Mapping[str, Any]) -> None:
        self.servers = servers
        self._clients: McpClients | None = None
        self._lock = threading.Lock()

    def clients(self) -> McpClients:
        """The servers' clients, each server started when first asked."""
        with self._lock:
            if self._clients is None:
                from ..handler.mcp_client import McpClients  # lazy: only a run using a server imports mcp

                self._clients = McpClients(dict(self.servers))
            return self._clients

    def stop(self) -> None:
        """Stop the servers started (at the end of a run); the next use starts them again."""
        with self._lock:
            clients, self._clients = self._clients, None
        if clients is not None:
            clients.close()
