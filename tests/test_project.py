"""`sexp config` (the settings in force and where each came from) and `sexp init` (a starter
project that runs offline at once), SPEC §10.3."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli, scaled

ROOT = Path(__file__).resolve().parent.parent
Cli = Callable[..., tuple[int, str, str]]  # the `cli` fixture of conftest.py
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
# The sexp.toml keys SPEC §9 and §10.1 name: the unknown-key warning lists every one.
SPEC_KEYS = (
    "model api_base templates concurrency max_turns max_context_window_fraction recursion_limit"
    " script_timeout script_output_limit store workspace max_cost_usd max_tool_calls_per_turn"
).split()
FAKE_KEY = "sk-test-0123456789abcdefghij"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_lines(out: str) -> dict[str, str]:
    """`key = value  (source)` lines by key."""
    lines: dict[str, str] = {}
    for line in out.splitlines():
        key = line.split(" = ", 1)[0]
        assert key not in lines, f"{key} shown twice"
        lines[key] = line
    return lines


# sexp config ---------------------------------------------------------------------------------


def test_config_shows_every_setting_with_its_default(cli: Cli) -> None:
    code, out, err = cli("config")
    assert (code, err) == (EXIT_OK, "")
    lines = config_lines(out)
    for key in SPEC_KEYS:
        assert key in lines, key
    assert lines["concurrency"] == "concurrency = 8  (default)"
    assert lines["model"] == "model = unset  (default)"
    assert lines["store"] == 'store = ".sexp/store.db"  (default)'
    assert lines["max_context_window_fraction"] == "max_context_window_fraction = 0.8  (default)"
    assert lines["templates"] == "templates = []  (default)"
    for line in lines.values():
        assert re.fullmatch(r"[A-Za-z_]+ = .+  \([a-z.]+(, [a-z.]+)*\)", line), line


def test_config_names_sexp_toml_environment_dotenv_and_flag(cli: Cli, workspace: Path) -> None:
    write(workspace / "sexp.toml", 'model = "openai/gpt-4o-mini"\nconcurrency = 3\nstore = "s.db"\n')
    write(workspace / ".env", "SEXP_API_BASE=http://localhost:9/v1\n")
    code, out, err = cli("config", "--store", "flag.db", env={"SEXP_MODEL": "anthropic/claude"})
    assert (code, err) == (EXIT_OK, "")
    lines = config_lines(out)
    assert lines["concurrency"] == "concurrency = 3  (sexp.toml)"
    assert lines["model"] == 'model = "anthropic/claude"  (environment)'
    assert lines["api_base"] == 'api_base = "http://localhost:9/v1"  (.env)'
    assert lines["store"] == 'store = "flag.db"  (flag)'
    code, out, _ = cli("config", "--model", "mock/x")
    assert config_lines(out)["model"] == 'model = "mock/x"  (flag)'
    code, out, _ = cli("config")
    assert config_lines(out)["model"] == 'model = "openai/gpt-4o-mini"  (sexp.toml)'


def test_config_takes_the_flags_of_run_that_set_settings(cli: Cli, workspace: Path) -> None:
    for name in ("more", "flagged"):
        (workspace / name).mkdir()
    write(workspace / "replies.json", '["hi"]')
    write(workspace / "sexp.toml", 'templates = ["more"]\n')
    flags = ["--templates", "flagged", "--mock-responses", "replies.json", "--workspace", "."]
    code, out, err = cli("config", *flags, "--max-cost", "2")
    assert (code, err) == (EXIT_OK, "")
    lines = config_lines(out)
    assert lines["templates"] == 'templates = ["more", "flagged"]  (sexp.toml, flag)'
    assert lines["mock_responses"] == 'mock_responses = "replies.json"  (flag)'
    assert lines["workspace"] == 'workspace = "."  (flag)'
    assert lines["max_cost_usd"] == "max_cost_usd = 2.0  (flag)"
    code, out, _ = cli("config", "--templates", "flagged", env={"SEXP_TEMPLATES": "more"})
    every = 'templates = ["more", "more", "flagged"]  (sexp.toml, environment, flag)'
    assert config_lines(out)["templates"] == every


def test_config_json_gives_each_value_and_source(cli: Cli, workspace: Path) -> None:
    write(workspace / "sexp.toml", "max_turns = 4\n")
    code, out, err = cli("config", "--json", "--model", "mock/m")
    assert (code, err) == (EXIT_OK, "")
    shown = json.loads(out)
    assert shown["max_turns"] == {"value": 4, "source": "sexp.toml"}
    assert shown["model"] == {"value": "mock/m", "source": "flag"}
    assert shown["max_cost_usd"] == {"value": None, "source": "default"}
    assert shown["templates"] == {"value": [], "source": "default"}
    assert set(SPEC_KEYS) <= set(shown)


def test_config_shows_that_a_key_is_set_and_where_never_its_value(cli: Cli, workspace: Path) -> None:
    write(workspace / ".env", f"ANTHROPIC_API_KEY={FAKE_KEY}x\n")
    code, out, err = cli("config", env={"OPENAI_API_KEY": FAKE_KEY})
    assert (code, err) == (EXIT_OK, "")
    lines = config_lines(out)
    assert lines["OPENAI_API_KEY"] == 'OPENAI_API_KEY = "********"  (environment)'
    assert lines["ANTHROPIC_API_KEY"] == 'ANTHROPIC_API_KEY = "********"  (.env)'
    assert FAKE_KEY not in out
    code, out, _ = cli("config", "--json", env={"OPENAI_API_KEY": FAKE_KEY})
    assert json.loads(out)["OPENAI_API_KEY"] == {"value": "********", "source": "environment"}
    assert FAKE_KEY[3:] not in out


def test_config_refuses_a_setting_out_of_range_as_run_does(cli: Cli, workspace: Path) -> None:
    code, out, err = cli("config", "--max-cost", "-1")
    assert (code, out) == (EXIT_USAGE, "")
    assert err == "error: --max-cost must be a positive number of dollars (got -1.0)\n"
    write(workspace / "sexp.toml", "max_turns = 0\n")
    code, out, err = cli("config")
    assert (code, out) == (EXIT_USAGE, "")
    assert err.startswith("error: sexp.toml: 'max_turns' must be at least 1")


def test_config_help_documents_the_format(cli: Cli) -> None:
    code, out, _ = cli("config", "--help")
    assert code == EXIT_OK
    for words in ("KEY = VALUE  (SOURCE)", "flag", "environment", ".env", "sexp.toml", "default", "--json"):
        assert words in out, words
    code, out, _ = cli("--help")
    assert "config" in out and "init" in out


UNKNOWN_WARNING = re.compile(r"warning: sexp\.toml: unknown setting 'colour' ignored; known settings: (.*)\n")


@pytest.mark.parametrize(
    "command",
    [
        ["config"],
        ["eval", "1"],
        ["run", "p.sexp"],
        ["check", "p.sexp"],
        ["tasks", "list"],
        ["runs"],
        ["trace", "nope"],
        ["index"],
        [],  # the REPL, piped
    ],
)
def test_every_command_warns_of_an_unknown_sexp_toml_key_with_the_known_ones(
    cli: Cli, workspace: Path, command: list[str]
) -> None:
    write(workspace / "sexp.toml", 'colour = "blue"\n')
    write(workspace / "p.sexp", "1\n")
    _, _, err = cli(*command, stdin="")
    warnings = UNKNOWN_WARNING.findall(err)
    assert len(warnings) == 1, err
    assert set(SPEC_KEYS) <= set(warnings[0].split(", ")), warnings[0]
    assert "warning: sexp.toml" not in UNKNOWN_WARNING.sub("", err)


# sexp init -----------------------------------------------------------------------------------

OFFLINE = "sexp run main.sexp --model mock/starter --mock-responses mock_responses.json"
STARTER = ["sexp.toml", "tasks/summarize.xml", "main.sexp", "mock_responses.json", "test_main.py"]
SUMMARY = "March support: 18% more tickets\n"


def run_printed_command(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command line sexp printed, in a shell where `sexp` is this checkout's."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    shell = f'sexp() {{ {shlex.quote(sys.executable)} -m sexp_tasks "$@"; }}\n{line}\n'
    return subprocess.run(
        ["bash", "-c", shell], cwd=cwd, capture_output=True, text=True, env=environment, timeout=scaled(120)
    )


def test_init_writes_a_project_that_runs_offline_at_once(cli: Cli, workspace: Path) -> None:
    code, out, err = cli("init", "demo")
    assert (code, err) == (EXIT_OK, "")
    for name in STARTER:
        assert (workspace / "demo" / name).is_file(), name
        assert f"wrote demo/{name}\n" in out
    (command,) = [line.strip() for line in out.splitlines() if "sexp run" in line]
    assert command == f"cd demo && {OFFLINE}"
    ran = run_printed_command(command, workspace)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(SUMMARY) and "- One more person on the April rota\n" in ran.stdout
    assert "warning" not in ran.stderr
    code, out, _ = run_cli("check", "main.sexp", cwd=workspace / "demo")
    assert (code, out) == (EXIT_OK, "main.sexp: ok\n")


def test_the_generated_test_passes(cli: Cli, workspace: Path) -> None:
    assert cli("init", "demo")[0] == EXIT_OK
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_main.py"],
        cwd=workspace / "demo",
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=scaled(300),
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout


def test_init_refuses_to_overwrite_and_writes_nothing(cli: Cli, workspace: Path) -> None:
    assert cli("init", "demo")[0] == EXIT_OK
    write(workspace / "demo" / "main.sexp", "(print 'mine)\n")
    code, out, err = cli("init", "demo")
    assert (code, out) == (EXIT_ERROR, "")
    names = ", ".join(f"demo/{name}" for name in STARTER)
    assert err == f"error: init: these files exist already: {names}; nothing was written\n"
    assert (workspace / "demo" / "main.sexp").read_text() == "(print 'mine)\n"
    # One file in the way is enough: the others are not written either.
    write(workspace / "other" / "main.sexp", "1\n")
    code, out, err = cli("init", "other")
    assert (code, out) == (EXIT_ERROR, "")
    assert err == "error: init: these files exist already: other/main.sexp; nothing was written\n"
    assert sorted(p.name for p in (workspace / "other").iterdir()) == ["main.sexp"]


def test_init_without_a_directory_writes_here(cli: Cli, workspace: Path) -> None:
    write(workspace / "notes.txt", "keep\n")
    code, out, err = cli("init")
    assert (code, err) == (EXIT_OK, "")
    assert "wrote sexp.toml\n" in out and "wrote tasks/summarize.xml\n" in out
    (command,) = [line.strip() for line in out.splitlines() if "sexp run" in line]
    assert command == OFFLINE
    ran = run_printed_command(command, workspace)
    assert (ran.returncode, ran.stdout[: len(SUMMARY)]) == (0, SUMMARY), ran.stderr


def test_init_quotes_a_directory_for_the_shell(cli: Cli, workspace: Path) -> None:
    code, out, _ = cli("init", "my demo")
    assert code == EXIT_OK
    (command,) = [line.strip() for line in out.splitlines() if "sexp run" in line]
    assert command.startswith("cd 'my demo' && sexp run main.sexp")
    assert run_printed_command(command, workspace).returncode == 0


@pytest.mark.parametrize("target", ["afile", "afile/demo"])
def test_init_into_a_file_is_an_error(cli: Cli, workspace: Path, target: str) -> None:
    write(workspace / "afile", "x\n")
    code, out, err = cli("init", target)
    assert (code, out) == (EXIT_ERROR, "")
    assert err.startswith(f"error: init: cannot write a project in '{target}': ")
    assert (workspace / "afile").read_text() == "x\n"
