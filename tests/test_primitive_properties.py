"""Properties of every primitive on generated calls: whatever a program passes, in whatever number,
a primitive answers or raises a language error (SexpError), never a Python exception (which would
be an internal error: a bug of sexp's own)."""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.lang.calls import apply_procedure
from sexp_tasks.lang.primitives import CORE_PRIMITIVES
from sexp_tasks.memory.memory_primitives import MEMORY_PRIMITIVES
from sexp_tasks.runtime import Runtime
from sexp_tasks.syntax.nodes import Keyword, Symbol
from sexp_tasks.tasks.forms import TASK_PRIMITIVES

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every registry a Runtime installs: the core's, the task system's and the memory system's.
PRIMITIVES = {**CORE_PRIMITIVES, **TASK_PRIMITIVES, **MEMORY_PRIMITIVES}
NAMES = sorted(PRIMITIVES)
# Procedures to pass: primitives, a prelude procedure and a closure of the program's own.
PROCEDURES = ["list", "+", "inc", "pair", "not", "string-upcase", "length", "first"]


@pytest.fixture(scope="module")
def called(tmp_path_factory: pytest.TempPathFactory) -> tuple[Runtime, st.SearchStrategy[Any]]:
    """One runtime for every example (its workspace a directory of the module's own), and the
    strategy for argument values, procedures of that runtime among them."""
    workspace = tmp_path_factory.mktemp("primitive-properties")
    (workspace / "notes.txt").write_text("some text\n", encoding="utf-8")
    runtime = Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
    runtime.run_source("(define (pair a b) (list a b))", "<setup>")
    procedures = [runtime.run_source(name, "<setup>") for name in PROCEDURES]
    return runtime, values(st.sampled_from(procedures))


atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-50, max_value=50),
    st.integers(min_value=-(10**30), max_value=10**30).filter(lambda n: abs(n) > 10_000),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["", " ", "a,b", "{}", "{0} {}", "[1, 2]", '{"a": 1}', "notes.txt", "(.*)", "\\1", "."]),
    st.text("abc:-", min_size=1, max_size=6).map(Keyword),
    st.text("abc?-", min_size=1, max_size=6).map(Symbol),
)


def values(procedures: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.one_of(atoms, procedures),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text("abk", max_size=3), children, max_size=3),
        ),
        max_leaves=8,
    )


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(data=st.data())
def test_a_primitive_called_with_anything_raises_only_language_errors(
    called: tuple[Runtime, st.SearchStrategy[Any]], name: str, data: st.DataObject
) -> None:
    rt, arguments = called
    spec = PRIMITIVES[name]
    high = spec.max_args if spec.max_args is not None else spec.min_args + 3
    count = data.draw(st.integers(min_value=max(0, spec.min_args - 1), max_value=high + 1), label="count")
    args = data.draw(st.lists(arguments, min_size=count, max_size=count), label="args")
    try:
        apply_procedure(rt.globals.values[name], args, 0)
    except SexpError:
        pass


EDGES = [None, 0, -1, 1.5, "", "a", [], {}, Keyword("k")]


@pytest.mark.parametrize("name", NAMES)
def test_every_primitive_on_edge_values_raises_only_language_errors(
    called: tuple[Runtime, st.SearchStrategy[Any]], name: str
) -> None:
    """Every combination of a few edge values, for each argument count the signature allows (up to 3)."""
    rt, _ = called
    spec = PRIMITIVES[name]
    high = min(3, spec.max_args if spec.max_args is not None else 3)
    for count in range(spec.min_args, max(spec.min_args, high) + 1):
        for args in itertools.product(EDGES, repeat=count):
            try:
                apply_procedure(rt.globals.values[name], list(args), 0)
            except SexpError:
                pass
