"""Defects found in review of the live display: a Session drawing answers over its program's own
output, and a line of wide characters erased by its characters rather than its columns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_stream_display import Clock, Terminal

import sexp_tasks
from sexp_tasks.config import Settings
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.live_region import LiveRegion


def test_a_runtime_draws_answers_only_when_its_front_door_asks(workspace: Path) -> None:
    settings = Settings(workspace=str(workspace))
    assert Runtime(settings, err=Terminal(), show_answers=True).tasks.open_stream is not None
    assert Runtime(settings, err=Terminal()).tasks.open_stream is None  # the Python API's


def test_a_session_on_a_terminal_draws_nothing_over_its_program_s_output(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    session = sexp_tasks.Session(model="mock/x", workspace=str(workspace))
    session.eval('(defatom greet (params (name string)) (instructions "Greet {{name}}"))')
    assert session.call("greet", name="Ada").status == "COMPLETE"
    assert terminal.getvalue() == ""  # no answer drawn, no cursor movement


def test_a_wide_line_is_erased_by_the_columns_it_takes() -> None:
    terminal = Terminal()
    live = LiveRegion(terminal, 0.0, Clock(), size=lambda: (40, 10))
    answer = live.open("t")
    answer.write("日本語")  # "t: 日本語": 3 characters of one column and 3 of two
    answer.close()
    erase = terminal.getvalue().rsplit("\r", 2)[-2]  # the last drawing: "\r" + spaces + "\r"
    assert erase == " " * 9
