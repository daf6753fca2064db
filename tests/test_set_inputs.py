"""`--set` and run_file's inputs never hide a built-in (SPEC §11.1: "`--set` follows the same rule"
as a batch's columns): the name is not bound, one warning says so, and everything else binds."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli

import sexp_tasks

PROGRAM = '(list (format "{} as {}" "report" "pdf") who)\n'


def test_a_set_value_named_as_a_built_in_is_not_bound_and_is_warned_about(workspace: Path, cli: Cli) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    status, out, err = cli("run", "p.sexp", "--set", "format=pdf", "--set-str", "who=ann")
    assert (status, out) == (0, '("report as pdf" "ann")\n')
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: --set 'format' is not bound (a built-in has that name)"]


def test_eval_follows_the_same_rule(cli: Cli) -> None:
    status, out, err = cli("eval", "(first (list 1 2))", "--set", "first=9")
    assert (status, out) == (0, "1\n")
    assert "warning: --set 'first' is not bound (a built-in has that name)" in err


def test_run_file_inputs_named_as_built_ins_are_not_bound(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "p.sexp").write_text(PROGRAM)
    session = sexp_tasks.Session()
    assert session.run_file(workspace / "p.sexp", {"format": "pdf", "who": "bo"}) == ["report as pdf", "bo"]
    assert "warning: input 'format' is not bound (a built-in has that name)" in capsys.readouterr().err


def test_a_session_may_give_again_a_name_it_defined_itself(workspace: Path) -> None:
    (workspace / "p.sexp").write_text("who\n")
    session = sexp_tasks.Session()
    session.define("who", "first")
    assert session.run_file(workspace / "p.sexp", {"who": "second"}) == "second"
