"""The API's keyword settings as types (SPEC §11.3): `Settings`, a TypedDict of every keyword
`Session`, `run`, `run_file` and `batch` take, so that mypy refuses a misspelt one
(`Session(modle=...)`) or a value of the wrong type; and `PythonValue`, what a program's value
becomes in Python. Written by hand from the settings table (config/setting_table.py, its
API_SETTINGS); tests/test_typed_api.py checks that the two list the same keywords. At run time
nothing changes: the keywords are checked by the table as before (an unknown one is a
SettingsError), so a program with no type checker behaves as it always did."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypedDict

from ..config.setting_table import API_SETTINGS, SETTING_ROWS
from .convert import TaskResult

__all__ = ["BatchSettings", "PythonValue", "Settings", "settings_doc"]

# A file a setting names: a path as a string, or a path object (pathlib.Path).
_File: TypeAlias = str | os.PathLike[str]


class BatchSettings(TypedDict, total=False):
    """The settings `batch` takes as keywords: every setting but `concurrency`, which is batch's
    own keyword (how many rows run at once). None for any of them means not given."""

    model: str | list[str] | tuple[str, ...] | None  # several: a fallback chain (SPEC §11.4)
    api_base: str | None
    templates: _File | list[_File] | tuple[_File, ...] | None
    max_turns: int | None
    max_tool_calls_per_turn: int | None
    max_context_window_fraction: float | None
    recursion_limit: int | None
    script_timeout: float | None
    script_output_limit: int | None
    script_user: str | None
    store: str | None
    workspace: str | None
    max_cost_usd: float | None
    max_depth: int | None
    max_retries: int | None
    request_timeout: float | None
    cache: bool | None
    stream: bool | None
    otel: bool | None
    otel_content: bool | None
    generation: Mapping[str, Any] | None
    mcp: Mapping[str, Mapping[str, Any]] | None  # MCP servers by name, as sexp.toml's [mcp.NAME]
    mock_responses: _File | None
    record: _File | None
    replay: _File | None
    quiet: bool | None


class Settings(BatchSettings, total=False):
    """Every setting `Session(...)`, `run`, `run_file` and `batch` take as a keyword: the
    sexp.toml keys and `mock_responses`, `record`, `replay`, `quiet` (SPEC §10.4). A key left out,
    or None, is not given (sexp.toml's value, the environment's or the default applies)."""

    concurrency: int | None


# A program's value as Python sees it (api/convert.py's to_python): nil is None, a list a list, a
# dict a dict with string keys, a task's result a TaskResult, a procedure a callable; symbols and
# keywords become their names (str).
PythonValue: TypeAlias = (
    "None | bool | int | float | str | list[PythonValue] | dict[str, PythonValue] | TaskResult"
    " | Callable[..., Any]"
)


def settings_doc(indent: str = "    ") -> str:
    """The keyword settings as a docstring section, one line each, from the settings table (so
    that `help(sexp_tasks.run)` lists them and never drifts from what is taken); indent is the
    docstring's own, so that its lines stay aligned."""
    lines = [f"\n\n{indent}Settings (keywords; sexp_tasks.Settings types them):"]
    for name in API_SETTINGS:
        row = SETTING_ROWS[name]
        kinds = " or ".join("path" if kind is os.PathLike else kind.__name__ for kind in row.types)
        kinds = "a directory, or a list of them" if list in row.types else kinds
        about = row.about or row.help
        lines.append(f"{indent}    {name} ({kinds}){': ' + about if about else ''}")
    return "\n".join(lines)
