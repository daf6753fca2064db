"""The `script_user` setting (docs/security.md): sexp running as root runs each script as another
user, which cannot read sexp's environment or memory; without it, a script running as root can."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
from conftest import Cli

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or "nobody" not in {entry.pw_name for entry in pwd.getpwall()},
    reason="needs root and a user named nobody",
)
KEY = "sk-test-script-user-0123456789"
# The script's parent is its launcher, whose parent is sexp: try to read sexp's environment and
# open its memory (opening /proc/PID/mem is where the kernel checks the right to read it).
PROBE = (
    "P=$(cut -d' ' -f4 /proc/$PPID/stat); id -un;"
    " cat /proc/$P/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused;"
    " (exec 3</proc/$P/mem) 2>/dev/null && echo mem-opened || echo mem-refused"
)


def run_probe(cli: Cli, workspace: Path, *options: str) -> list[str]:
    (workspace / "probe.sh").write_text(PROBE + "\n")
    source = '(print (get-field (system:run_script (command "sh probe.sh")) "stdout"))'
    status, out, err = cli("eval", *options, source, env={"OPENAI_API_KEY": KEY})
    assert status == 0, err
    return out.split()[:-1]  # the nil print returns


def test_a_script_run_as_root_can_open_sexp_s_memory(cli: Cli, workspace: Path) -> None:
    assert run_probe(cli, workspace) == ["root", "environ-read", "mem-opened"]


def test_a_script_run_as_the_script_user_can_read_neither_environment_nor_memory(
    cli: Cli, workspace: Path
) -> None:
    workspace.chmod(0o755)  # the user reads probe.sh there
    for parent in workspace.parents:
        if parent.stat().st_mode & 0o005 != 0o005:
            parent.chmod(parent.stat().st_mode | 0o005)
    assert run_probe(cli, workspace, "--script-user", "nobody") == [
        "nobody",
        "environ-refused",
        "mem-refused",
    ]
    (workspace / "sexp.toml").write_text('script_user = "nobody"\n')
    assert run_probe(cli, workspace) == ["nobody", "environ-refused", "mem-refused"]


def test_an_unknown_script_user_is_a_usage_error(cli: Cli) -> None:
    status, _, err = cli("eval", "--script-user", "no-such-user-here", "1")
    assert status == 2 and "--script-user must be the name of a user of this machine" in err, err
