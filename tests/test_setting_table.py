"""The settings table (sexp_tasks/config/setting_table.py): every setting is declared once, and
every row is reachable from each of its doors (flag, environment variable, sexp.toml key, API
keyword), checked once, in load_settings, with each door's own wording for a bad value."""

from __future__ import annotations

import os
import pwd
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, write

import sexp_tasks
from sexp_tasks.api.embed import api_settings
from sexp_tasks.cli.main import build_parser
from sexp_tasks.cli.setting_options import SETTING_HELP, given_settings
from sexp_tasks.config import (
    API_SETTINGS,
    SETTING_ROWS,
    SETTINGS,
    SHOWN_SETTINGS,
    TOML_KEYS,
    Setting,
    Settings,
    load_settings,
    loading,
)

ME = pwd.getpwuid(os.getuid()).pw_name


def sample(row: Setting, workspace: Path) -> Any:
    """A value row's setting takes (its check passes), as a flag, sexp.toml and the API give it: a
    bool's is the one its flag sets, not its default (`--no-stream`: False)."""
    files = {
        "templates": ["."],
        "workspace": str(workspace),
        "script_user": ME,
        "mock_responses": str(write(workspace / "replies.json", '["hi"]')),
        "replay": str(write(workspace / "cassette.jsonl", "")),
        "record": str(workspace / "recorded.jsonl"),
        "generation": {"temperature": 0.5},
        "mcp": {"t": {"command": ["python", "server.py"], "timeout": 5}},
        "max_context_window_fraction": 0.5,
    }
    if row.name in files:
        return files[row.name]
    kind = row.types[0]
    return {bool: row.flag_value, int: 3, float: 2.5, str: f"{row.name}-value"}[kind]


def held(settings: Settings, row: Setting) -> Any:
    """The value settings hold for row: in its ranked field when a flag or the API gave it."""
    return getattr(settings, row.ranked or row.name)


def as_held(row: Setting, value: Any) -> Any:
    if row.name == "mcp":  # its tables are held as the servers they declare
        return row.convert(value, "mcp") if row.convert is not None else value
    return tuple(value) if isinstance(value, list) else value


def toml_text(name: str, value: Any) -> str:
    if isinstance(value, dict):
        return f"[{name}]\n" + "".join(f"{key} = {_toml_value(item)}\n" for key, item in value.items())
    shown = {True: "true", False: "false"}.get(value, value) if isinstance(value, bool) else value
    return f"{name} = {_toml_value(shown)}\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, str) and value not in ("true", "false"):
        return '"' + value.replace("\\", "\\\\") + '"'
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    if isinstance(value, dict):  # an inline table ([mcp]'s servers)
        return "{ " + ", ".join(f"{key} = {_toml_value(item)}" for key, item in value.items()) + " }"
    return str(value)


# The table itself ---------------------------------------------------------------------------


def test_each_row_is_a_settings_field_and_the_lists_derive_from_the_table() -> None:
    names = [f.name for f in fields(Settings)]
    assert [row.name for row in SETTINGS] == [name for name in names if name in SETTING_ROWS]
    assert all(row.ranked in names for row in SETTINGS if row.ranked)
    assert TOML_KEYS == tuple(row.name for row in SETTINGS if row.toml)
    assert API_SETTINGS == tuple(row.name for row in SETTINGS if row.api)
    assert SHOWN_SETTINGS == tuple(row.name for row in SETTINGS if row.shown)
    flags = [row.flag for row in SETTINGS if row.flag]
    assert len(set(flags)) == len(flags)
    assert SETTING_HELP == {row.dest: row.help for row in SETTINGS if row.flag and row.common}
    assert all(SETTING_HELP.values())


@pytest.mark.parametrize(
    "command", [["run", "p.sexp"], ["eval", "1"], ["batch", "p.sexp"], ["config"], ["repl"]]
)
def test_every_setting_flag_is_declared_for_each_command_that_takes_them(command: list[str]) -> None:
    parser = build_parser()
    parsed = parser.parse_args(command)
    for row in SETTINGS:
        if row.flag and row.common:
            assert hasattr(parsed, row.dest), (command, row.flag)


# Every row from each of its doors -----------------------------------------------------------

FLAGGED = [row for row in SETTINGS if row.flag]


@pytest.mark.parametrize("row", FLAGGED, ids=lambda row: row.name)
def test_every_flag_reaches_its_setting(row: Setting, workspace: Path) -> None:
    value = sample(row, workspace)
    argv = (
        [row.flag]
        if isinstance(value, bool)
        else [row.flag, str(value[0] if isinstance(value, list) else value)]
    )
    args = build_parser().parse_args(["run", "p.sexp", *argv])  # -q is run's own; the others the table's
    given = given_settings(args)
    assert list(given) == [row.name]
    settings = load_settings(workspace, given)
    assert held(settings, row) == as_held(row, value)
    assert settings.sources[row.ranked or row.name] == "flag"


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.env], ids=lambda row: row.name)
def test_every_environment_variable_reaches_its_setting(
    row: Setting, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = sample(row, workspace)
    text = os.pathsep.join(value) if isinstance(value, list) else str(value)
    assert row.env is not None
    monkeypatch.setenv(row.env, text)
    settings = load_settings(workspace, {})
    assert getattr(settings, row.name) == as_held(row, value)  # below a flag's: never ranked
    assert settings.sources[row.name] == "environment"


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.toml], ids=lambda row: row.name)
def test_every_sexp_toml_key_reaches_its_setting(row: Setting, workspace: Path) -> None:
    value = sample(row, workspace)
    write(workspace / "sexp.toml", toml_text(row.name, value))
    settings = load_settings(workspace, {})
    assert settings.warnings == ()
    assert getattr(settings, row.name) == as_held(row, value)
    assert settings.sources[row.name] == "sexp.toml"


@pytest.mark.parametrize("row", [row for row in SETTINGS if row.api], ids=lambda row: row.name)
def test_every_api_keyword_reaches_its_setting_as_its_flag_would(row: Setting, workspace: Path) -> None:
    value = sample(row, workspace)
    settings = api_settings({row.name: value})
    assert held(settings, row) == as_held(row, value)
    assert settings.sources[row.ranked or row.name] == "flag"


def test_a_misspelt_api_keyword_is_a_settings_error_naming_the_known_ones(workspace: Path) -> None:
    with pytest.raises(sexp_tasks.SexpError) as raised:
        sexp_tasks.Session(max_turn=3)
    assert raised.value.type == "CONFIGURATION_ERROR"
    assert (
        str(raised.value.message) == f"unknown setting 'max_turn'; known settings: {', '.join(API_SETTINGS)}"
    )
    assert "quiet" in API_SETTINGS and "mock_responses" in API_SETTINGS


# Checked once, each door in its own words ----------------------------------------------------


def test_a_wrong_type_is_refused_by_sexp_toml_a_flag_and_the_api(
    workspace: Path, sexp_in_process: Cli
) -> None:
    write(workspace / "sexp.toml", 'max_retries = "3"\n')
    status, _, err = sexp_in_process("config")
    assert (status, err) == (2, "error: sexp.toml: 'max_retries' has the wrong type (str)\n")
    (workspace / "sexp.toml").unlink()
    status, _, err = sexp_in_process("config", "--max-retries", "x")
    assert status == 2 and err.endswith("error: argument --max-retries: invalid int value: 'x'\n")
    with pytest.raises(sexp_tasks.SexpError, match=r"^'max_retries' has the wrong type \(str\)$"):
        sexp_tasks.Session(max_retries="3")
    with pytest.raises(sexp_tasks.SexpError, match=r"^'quiet' has the wrong type \(int\); True or False$"):
        sexp_tasks.Session(quiet=1)
    with pytest.raises(sexp_tasks.SexpError, match=r"^'record' has the wrong type \(int\)$"):
        sexp_tasks.Session(record=5)  # was a Python TypeError from deep inside


def test_an_out_of_range_value_is_named_as_each_door_names_it(
    workspace: Path, sexp_in_process: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "sexp.toml", "max_retries = -1\n")
    assert sexp_in_process("config")[2] == "error: sexp.toml: 'max_retries' must be 0 or more (got -1)\n"
    (workspace / "sexp.toml").unlink()
    assert (
        sexp_in_process("config", "--max-retries", "-1")[2]
        == "error: --max-retries must be 0 or more (got -1)\n"
    )
    with pytest.raises(sexp_tasks.SexpError, match=r"^max_retries must be 0 or more \(got -1\)$"):
        sexp_tasks.Session(max_retries=-1)
    monkeypatch.setenv("SEXP_MOCK_RESPONSES", "missing.json")
    expected = "error: SEXP_MOCK_RESPONSES must be a file of replies (got 'missing.json')\n"
    assert sexp_in_process("config")[2] == expected


def test_a_value_is_checked_once_whatever_its_door(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Any] = []
    row = SETTING_ROWS["max_turns"]

    def counting(value: Any) -> bool:
        checked.append(value)
        return True

    monkeypatch.setitem(loading.SETTING_ROWS, "max_turns", replace(row, check=(counting, "at least 1")))
    api_settings({"max_turns": 3})
    assert checked == [3]
    load_settings(workspace, {"max_turns": 4})
    write(workspace / "sexp.toml", "max_turns = 5\n")
    load_settings(workspace, {})
    assert checked == [3, 4, 5]
