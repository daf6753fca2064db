"""`sexp tools`: the tools every MCP server sexp.toml declares offers (SPEC §11.4), one per line,
as a template names them (`NAME/tool`) and with their descriptions. Each server is started, asked
and stopped; one that cannot start is an error line, and the others are still listed."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..diagnostics import error_line, escape_controls, report
from .command_line import EXIT_ERROR, EXIT_OK, Commands, command_settings, guarded
from .setting_options import given_settings


def register(commands: Commands) -> None:
    """Declare `sexp tools` among commands."""
    tools = commands.add_parser("tools", help="list the tools of the MCP servers sexp.toml declares")
    tools.set_defaults(run=list_tools)


def list_tools(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp tools`: `NAME/tool  description` for each tool of each server; exit 1 when one failed."""
    settings = command_settings(cwd, given_settings(args))
    if not settings.mcp:
        report("no MCP servers are declared: add one to sexp.toml as [mcp.NAME] (docs: MCP servers' tools)")
        return EXIT_OK

    def listing() -> int:
        from ..handler.mcp_client import McpClients, McpFailure  # lazy: the mcp package (cli/startup.py)

        clients = McpClients(dict(settings.mcp))
        status = EXIT_OK
        try:
            for name, server in settings.mcp.items():
                try:
                    tools = clients.list_tools(name)
                except McpFailure as err:
                    report(error_line(f"MCP server '{name}' ({server.where}) failed: {err}"))
                    status = EXIT_ERROR
                    continue
                for tool in tools:
                    summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
                    print(escape_controls(f"{name}/{tool.name}  {summary}".rstrip()))  # a server's text
        finally:
            clients.close()
        return status

    return guarded(args, listing)
