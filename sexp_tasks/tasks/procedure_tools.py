"""Procedures of the program as model tools, and the names a task's `<tools>` may list.

A template (or defatom's `(tools ...)`, or a call's `tools`) names each tool it offers: a built-in
tool, a Python function given to Session.tool, or a procedure the program defines. A procedure's
tool schema comes from its lambda list (required parameters are required properties, `&optional`
and `&key` parameters optional ones; `&rest` takes nothing from the model) and its documentation:
its docstring, else the `;;` lines right after its `(define (name ...)` line, read as a Python
docstring is (a first paragraph describing the tool, an `Args:` section each parameter). Any other
name is an error before any request is sent, and `sexp check` reports it too (tasks/forms/checks.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ..errors import NameError_, Span
from ..handler.docstrings import read_docstring
from ..handler.python_tools import PythonTool, SchemaArguments
from ..handler.tool_schema import TOOL_NAME
from ..handler.tools import TOOL_SCHEMAS
from ..lang.calls import Closure, apply_procedure
from ..lang.printer import to_json_value
from ..lang.suggest import did_you_mean
from ..lang.values import Value
from ..syntax.nodes import Keyword

_COMMENT = re.compile(r"^\s*;+ ?")


def unknown_tool(task: str, name: str, candidates: Iterable[str], span: Span | None) -> NameError_:
    """The error for a tool name that names no tool, with the close names that do."""
    hint = did_you_mean(name, candidates)
    return NameError_(
        f"task '{task}': no tool named '{name}' (a built-in tool, a Session.tool function or a"
        f" procedure of the program){hint}",
        span,
    )


def unknown_server(task: str, server: str, candidates: Collection[str], span: Span | None) -> NameError_:
    """The error for `NAME/...` in a task's tools when sexp.toml declares no server NAME."""
    hint = did_you_mean(server, candidates)
    declare = f"declare it in sexp.toml as [mcp.{server}]"
    return NameError_(f"task '{task}': no MCP server named '{server}' ({declare}){hint}", span)


def unknown_server_tool(
    task: str, server: str, tool: str, offers: Collection[str], span: Span | None
) -> NameError_:
    """The error for `NAME/tool` in a task's tools when server NAME offers no such tool."""
    hint = did_you_mean(tool, offers)
    listed = ", ".join(offers) or "no tools"
    return NameError_(
        f"task '{task}': MCP server '{server}' has no tool '{tool}' (it offers {listed}){hint}", span
    )


def resolve_tools(
    task: str,
    names: tuple[str, ...],
    python_tools: Mapping[str, PythonTool],
    globals_: Mapping[str, Value],
    span: Span | None,
    mcp_servers: Collection[str] = (),
) -> dict[str, PythonTool]:
    """The procedures of the program among names, as tools; a NameError for a name that is no
    built-in tool, Python tool, procedure or `NAME/...` of a server mcp_servers names (nothing
    has been sent yet; whether the server has the tool is known once it is asked, by the Handler)."""
    found: dict[str, PythonTool] = {}
    for name in names:
        if name in TOOL_SCHEMAS or name in python_tools:
            continue
        if "/" in name:
            server = name.partition("/")[0]
            if server not in mcp_servers:
                raise unknown_server(task, server, mcp_servers, span)
            continue
        value = globals_.get(name)
        if not isinstance(value, Closure) or not TOOL_NAME.fullmatch(name):
            procedures = (known for known, v in globals_.items() if isinstance(v, Closure))
            raise unknown_tool(task, name, [*TOOL_SCHEMAS, *python_tools, *procedures], span)
        found[name] = procedure_tool(name, value)
    return found


def procedure_tool(name: str, procedure: Closure) -> PythonTool:
    """procedure as the tool name: its schema from its lambda list and documentation; a call
    applies it to the model's arguments and gives its value (a string as it is, else JSON)."""
    params = procedure.lambda_list.params
    summary, described = read_docstring(procedure_doc(procedure))
    properties: dict[str, Any] = {}
    for param in [*params.required, *(n for n, _ in params.optional), *(n for n, _ in params.keys)]:
        properties[param] = {"description": described[param]} if param in described else {}
    function: dict[str, Any] = {"name": name}
    if summary:
        function["description"] = summary
    function["parameters"] = {"type": "object", "properties": properties, "required": list(params.required)}
    return PythonTool(name, _caller(procedure), SchemaArguments({"type": "function", "function": function}))


def _caller(procedure: Closure) -> Callable[..., Any]:
    """A function of keyword arguments that applies procedure: its positional parameters in
    order (nil for an optional one left out before one given), its keys as `:key value` pairs."""
    params = procedure.lambda_list.params
    positional = [*params.required, *(n for n, _ in params.optional)]
    keys = [n for n, _ in params.keys]

    def call(**arguments: Any) -> Any:
        given = [i for i, param in enumerate(positional) if param in arguments]
        args: list[Value] = [arguments.get(param) for param in positional[: given[-1] + 1 if given else 0]]
        for key in keys:
            if key in arguments:
                args += [Keyword(key), arguments[key]]
        return to_json_value(apply_procedure(procedure, args, 0))

    return call


def procedure_doc(procedure: Closure) -> str:
    """procedure's docstring, else the `;;` lines right after the line its definition starts on
    (when the definition goes on past that line)."""
    if procedure.lambda_list.doc is not None:
        return procedure.lambda_list.doc
    span = procedure.span
    if span is None:
        return ""
    lines: list[str] = []
    number = span.line + 1
    while _COMMENT.match(line := span.source.line(number)):
        lines.append(_COMMENT.sub("", line, count=1))
        number += 1
    return "\n".join(lines)
