"""Typing mistakes `mypy --strict` must refuse (tests/test_typed_api.py names each line's error)."""

from __future__ import annotations

import sexp_tasks
from sexp_tasks import Session

session = Session(modle="mock/x")  # misspelt setting
result = session.call("summarise", text="x")
count: int = result.content  # content is a str
sexp_tasks.run("(+ 1 2)", max_turns="3")  # a setting of the wrong type
sexp_tasks.batch("p.sexp", [], modle="mock/x")  # misspelt setting
total: int = sexp_tasks.run("(+ 1 2)")  # a PythonValue, not an int
