"""How a model request and its answer are shown (SPEC §10.3): `sexp tasks render` and `sexp trace
--full` print them in one way. They read the JSON record a request keeps
(model_request.ModelRequest.as_record: `model`, `messages`, `generation`, `response_format`,
`tools`), as the run store holds it.
"""

from __future__ import annotations

import json
from typing import Any

from .data_urls import describe_part


def format_request(request: dict[str, Any], skip: int = 0) -> list[str]:
    """The request as readable lines: the model and settings, then each message under its role
    (`[system]`, `[user]`, `[assistant]`, `[tool call_1]`); the first `skip` messages are left
    out (shown already, with an earlier turn) and counted instead."""
    tools = [_tool_name(tool) for tool in request.get("tools") or []]
    response_format = request.get("response_format")
    lines = [
        f"model: {request.get('model')}",
        f"generation: {format_settings(request.get('generation') or {})}",
        "response_format: " + ("(none)" if response_format is None else _compact(response_format)),
        "tools: " + (", ".join(tools) or "(none)"),
    ]
    messages = request.get("messages") or []
    if skip:
        lines.append(f"({skip} earlier message{'' if skip == 1 else 's'}, as above)")
    for message in messages[skip:]:
        lines += ["", *format_message(message if isinstance(message, dict) else {"content": message})]
    return lines


def format_settings(settings: dict[str, Any]) -> str:
    """`temperature=0.2, max_tokens=300`, or `(none)`."""
    return ", ".join(f"{key}={_compact(value)}" for key, value in settings.items()) or "(none)"


def format_message(message: dict[str, Any]) -> list[str]:
    """One message: its role in brackets, then its text and the tool calls it asks for."""
    role = str(message.get("role", "?"))
    if role == "tool":
        role = f"tool {message.get('tool_call_id', '')}".rstrip()
    lines = [f"[{role}]"]
    content = message.get("content")
    if isinstance(content, list):  # content parts: texts, then images and PDFs, their data elided
        for part in content:
            lines += describe_part(part).splitlines() or [""]
    elif content:
        lines += (content if isinstance(content, str) else _compact(content)).splitlines() or [""]
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        lines.append(f"-> {function.get('name', '?')}({function.get('arguments', '')})")
    return lines


def format_answer(answer: str | None, tool_calls: list[dict[str, Any]] | None = None) -> list[str]:
    """The raw answer text, then the tool calls it asked for; `(no answer)` when there is none."""
    lines = answer.splitlines() if answer else []
    for call in tool_calls or []:
        lines.append(f"-> {call.get('name', '?')}({call.get('arguments', '')})")
    return lines or ["(no answer)"]


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str((tool.get("function") or {}).get("name") or tool.get("name") or "?")
    return str(tool)


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
