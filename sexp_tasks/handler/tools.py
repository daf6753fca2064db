"""The tools a Handler may offer the model (OpenAI function schemas) and what running one does."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SexpError
from ..lang.values import parse_json_text
from ..process.child_processes import OUTPUT_LIMIT, run_command
from ..process.workspace import Workspace
from ..results import TaskError

if TYPE_CHECKING:
    from .python_tools import PythonTool


def _schema(name: str, description: str, **properties: str) -> dict[str, Any]:
    required = [key for key in properties if not key.endswith("_")]
    props = {key.rstrip("_"): {"type": "string", "description": text} for key, text in properties.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": _schema(
        "read_file", "Read a UTF-8 text file in the workspace.", path="Path relative to the workspace."
    ),
    "list_files": _schema(
        "list_files",
        "List the entries of a directory in the workspace.",
        path_="Directory relative to the workspace (default: the workspace).",
    ),
    "write_file": _schema(
        "write_file",
        "Write a UTF-8 text file in the workspace (replacing it).",
        path="Path relative to the workspace.",
        content="The whole new text.",
    ),
    "run_command": _schema(
        "run_command",
        "Run a command (no shell) in the workspace; returns its output.",
        command="The command line, e.g. `pytest -q tests/test_x.py`.",
    ),
    "ask_user": _schema(
        "ask_user", "Ask the user a question and get their answer.", question="The question to ask."
    ),
    # Run by the Handler itself (it hands the request to the Task System), not by the ToolBox.
    "spawn_subtask": {
        "type": "function",
        "function": {
            "name": "spawn_subtask",
            "description": "Hand a self-contained piece of the work to a subtask; its result is the answer.",
            "parameters": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "What the subtask must do."},
                    "template_hints": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Names of task templates that could do it, best first.",
                    },
                    "subtype": {"type": "string", "description": "standard, subtask, director or evaluator."},
                    "inputs": {"type": "object", "description": "Inputs for the chosen template."},
                    "file_paths": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Workspace files the subtask needs.",
                    },
                },
                "required": ["description"],
            },
        },
    },
}
LIST_LIMIT = 1000


def tool_arguments(call: Mapping[str, Any]) -> dict[str, Any] | TaskError:
    """A model's tool call's arguments (a JSON object), or the INVALID_OUTPUT error they are."""
    try:
        arguments = parse_json_text(call["arguments"] or "{}")
    except (json.JSONDecodeError, RecursionError) as err:
        why = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
        message = f"the arguments of tool call {call['name']!r} are not JSON: {why}"
        return TaskError("INVALID_OUTPUT", message, details={"arguments": call["arguments"][:500]})
    if not isinstance(arguments, dict):
        message = f"the arguments of tool call {call['name']!r} are not a JSON object"
        return TaskError("INVALID_OUTPUT", message)
    return arguments


class ToolBox:
    """Runs the tools named in the config, built-in or Python functions (python_tools, by name);
    every failure is an answer to the model, not a crash."""

    def __init__(
        self,
        names: tuple[str, ...],
        workspace: Path,
        script_timeout: float,
        ask_user: Callable[[str], str] | None,
        python_tools: Mapping[str, PythonTool] | None = None,
    ) -> None:
        self.names = names
        self.python = {name: python_tools[name] for name in names if python_tools and name in python_tools}
        self._root = workspace
        self.script_timeout = script_timeout
        self.script_user: str | None = None  # the user run_command runs as (the script_user setting)
        self.ask_user = ask_user

    @cached_property
    def workspace(self) -> Workspace:
        """The workspace, resolved when a tool first needs it (most Handlers run no tool)."""
        return Workspace(self._root)

    def schemas(self) -> list[dict[str, Any]]:
        """The schemas of the offered tools, in the order the config lists them."""
        if not self.names:
            return []
        return [
            TOOL_SCHEMAS[name] if name in TOOL_SCHEMAS else self.python[name].schema
            for name in self.names
            if name in TOOL_SCHEMAS or name in self.python
        ]

    def unknown(self) -> list[str]:
        """Names in the config this Handler has no tool for."""
        return [name for name in self.names if name not in TOOL_SCHEMAS and name not in self.python]

    def run(self, name: str, arguments: dict[str, Any]) -> str:
        """The tool's answer as text; errors come back as `error: ...`."""
        if name in self.python:
            return self.python[name].run(arguments)
        if name not in self.names or name not in TOOL_SCHEMAS:
            return f"error: no tool named {name!r} is available"
        try:
            return getattr(self, f"_{name}")(**arguments)
        except TypeError as err:
            return f"error: {name}: bad arguments ({err})"
        except SexpError as err:
            return f"error: {err.message}"
        except (OSError, ValueError) as err:
            return f"error: {name}: {err}"

    def _read_file(self, path: str) -> str:
        text, unread = self.workspace.read_prefix(str(path), OUTPUT_LIMIT)
        if unread:
            text += f"\n[... {unread} more bytes not read: read_file reads at most {OUTPUT_LIMIT} bytes]"
        return text

    def _list_files(self, path: str = ".") -> str:
        directory = self.workspace.resolve(str(path), "list_files")
        if not directory.is_dir():
            return f"error: list_files: '{path}' is not a directory"
        entries = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in directory.iterdir())
        more = f"\n[... {len(entries) - LIST_LIMIT} more]" if len(entries) > LIST_LIMIT else ""
        return "\n".join(entries[:LIST_LIMIT]) + more

    def _write_file(self, path: str, content: str) -> str:
        self.workspace.write_text(str(path), str(content))
        return f"wrote {len(str(content))} characters to {path}"

    def _run_command(self, command: str) -> str:
        try:
            root, timeout = self.workspace.root, self.script_timeout
            outcome = run_command(str(command), root, timeout, user=self.script_user)
        except FileNotFoundError:
            return f"error: run_command: cannot start {command!r}: command not found"
        except PermissionError as err:  # the script_user cannot be switched to
            return f"error: run_command: cannot start {command!r}: {err.strerror}"
        status = "timed out" if outcome.timed_out else f"exit code {outcome.exit_code}"
        return json.dumps({"status": status, "stdout": outcome.stdout, "stderr": outcome.stderr})

    def _ask_user(self, question: str) -> str:
        if self.ask_user is None:
            return "error: ask_user: no user is available to answer in this run"
        return self.ask_user(str(question))
