"""Typical typed use of the Python API: `mypy --strict` must accept it (tests/test_typed_api.py)."""

from __future__ import annotations

from pathlib import Path

import sexp_tasks
from sexp_tasks import PythonValue, Session, Settings, TaskResult


def summarise(text: str) -> str:
    """A task's answer, typed: call gives a TaskResult, whose content is a str."""
    session = Session(model="mock/x", max_cost_usd=0.5, cache=True, templates=["tasks"])
    session.eval('(deftask summarise (text) "Summarise: {{text}}")')
    result = session.call("summarise", text=text)
    answer: str = result.content
    failed: bool = result.failed
    return answer if not failed else ""


def settings_passed_on() -> PythonValue:
    """Settings built as a dict, typed, then given to run."""
    chosen: Settings = {"model": "mock/x", "mock_responses": Path("replies.json"), "quiet": True}
    value = sexp_tasks.run("(+ 1 2)", **chosen)
    if isinstance(value, int):
        return value + 1
    return value


def values() -> list[PythonValue]:
    """eval's value is a PythonValue: narrowed before use."""
    session = Session()
    value = session.eval("(list 1 2 3)")
    task = session.call("summarise", text="x")
    assert isinstance(task, TaskResult)
    rows = sexp_tasks.batch("p.sexp", [{"x": 1}], concurrency=2, model="mock/x")
    return [value, task, sexp_tasks.run_file("p.sexp", {"x": 1}, replay="c.json"), len(rows)]
