"""The primitive registry: each primitive's declared signature, the arity derived from it, and how
a primitive's failures reach the user (a mistake of the program, or a bug of sexp's own)."""

from __future__ import annotations

import inspect
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled

from sexp_tasks.config import Settings
from sexp_tasks.errors import ArityError, SexpError, TypeError_
from sexp_tasks.lang.calls import apply_procedure
from sexp_tasks.lang.primitives import CORE_PRIMITIVES, signature_arity
from sexp_tasks.lang.values import Primitive
from sexp_tasks.memory.memory_primitives import MEMORY_PRIMITIVES
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.forms import TASK_PRIMITIVES

ROOT = Path(__file__).resolve().parent.parent
# Every registry a Runtime installs: the core's, the task system's and the memory system's.
PRIMITIVES = {**CORE_PRIMITIVES, **TASK_PRIMITIVES, **MEMORY_PRIMITIVES}


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """A runtime as a program meets it at start-up."""
    workspace = tmp_path_factory.mktemp("primitives")
    return Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())


def bound_primitives(rt: Runtime) -> dict[str, Primitive]:
    return {name: v for name, v in rt.globals.values.items() if isinstance(v, Primitive)}


def test_every_primitive_bound_at_start_up_declares_its_signature(started: Runtime) -> None:
    primitives = bound_primitives(started)
    assert len(primitives) > 80
    for name, value in primitives.items():
        assert value.signatures, name
        for signature in value.signatures:
            assert signature.startswith(f"({name}") and signature.endswith(")"), signature
        arities = [signature_arity(s) for s in value.signatures]
        assert value.min_args == min(low for low, _ in arities), name
        highs = [high for _, high in arities]
        assert value.max_args == (None if None in highs else max(h for h in highs if h is not None)), name


def test_the_declared_arity_is_accepted_by_the_python_function() -> None:
    for name, spec in PRIMITIVES.items():
        python = inspect.signature(spec.fn)
        leading = [object()] * spec.leading
        high = spec.max_args if spec.max_args is not None else spec.min_args + 4
        for n in range(spec.min_args, high + 1):
            python.bind(*leading, *[None] * n)  # raises TypeError if the code cannot take n arguments
        assert name in spec.signatures[0]


@pytest.mark.parametrize(
    "name, signatures",
    [
        ("reduce", ("(reduce f init xs)", "(reduce f xs)")),
        ("string-join", ("(string-join xs [sep])",)),
        ("string-split", ("(string-split s [sep])",)),
        ("range", ("(range n)", "(range a b [step])")),
        ("sort", ("(sort xs [key-fn])",)),
        ("get", ("(get d k [default])",)),
        ("assoc", ("(assoc d k v)",)),
        ("nth", ("(nth xs i)",)),
        ("rest", ("(rest xs)",)),
        ("first", ("(first xs)",)),
        ("equal?", ("(equal? a b)",)),
        ("eq?", ("(eq? a b)",)),
        ("get_context", ("(get_context query [:limit n])",)),
    ],
)
def test_signatures_are_the_documented_ones(started: Runtime, name: str, signatures: tuple[str, ...]) -> None:
    assert bound_primitives(started)[name].signatures == signatures


@pytest.mark.parametrize(
    "signature, arity",
    [
        ("(f)", (0, 0)),
        ("(f x)", (1, 1)),
        ("(f x [y])", (1, 2)),
        ("(f x [:key n])", (1, 3)),
        ("(f x...)", (0, None)),
        ("(f x y...)", (1, None)),
        ("(f [k v]...)", (0, None)),
        ("(f g [arg... xs])", (1, None)),
    ],
)
def test_signature_arity(signature: str, arity: tuple[int, int | None]) -> None:
    assert signature_arity(signature) == arity


@pytest.mark.parametrize("signature", ["f x", "(f", "(f [x)", "(f x] y)", "()"])
def test_a_malformed_signature_is_refused(signature: str) -> None:
    with pytest.raises(ValueError, match="signature"):
        signature_arity(signature)


def test_a_call_outside_the_declared_arity_is_an_arity_error(started: Runtime) -> None:
    for name, value in bound_primitives(started).items():
        counts = [n for n in (value.min_args - 1, (value.max_args or -2) + 1) if n >= 0]
        for n in counts:
            with pytest.raises(ArityError) as info:
                apply_procedure(value, [None] * n, 0)
            assert info.value.message.startswith(f"{name}: expected "), info.value.message
            assert info.value.message.endswith(f", got {n}")


@pytest.mark.parametrize(
    "text, message",
    [
        ("(rest (list 1 2 3) 99)", "rest: expected 1 argument, got 2"),
        ('(first 5 "boom")', "first: expected 1 argument, got 2"),
        ("(cdr (list 1) 2)", "cdr: expected 1 argument, got 2"),
        ("(reduce + 0 (list 1) 4)", "reduce: expected 2 to 3 arguments, got 4"),
        ("(pmap list (list 1) :concurrency 2 :concurrency 3)", "pmap: expected 2 to 4 arguments, got 6"),
        ('(get-context "q" :limit 2 :limit 3)', "get-context: expected 1 to 3 arguments, got 5"),
    ],
)
def test_an_extra_argument_is_an_arity_error_at_its_call(started: Runtime, text: str, message: str) -> None:
    with pytest.raises(ArityError) as info:
        started.run_source(text, "<test>")
    assert info.value.message == message
    assert info.value.span is not None and (info.value.span.line, info.value.span.column) == (1, 1)


def test_a_wrong_type_is_the_users_type_error(started: Runtime) -> None:
    with pytest.raises(TypeError_, match=r"round: cannot be applied to \(float, float\)"):
        started.run_source("(round 1.5 2.5)", "<test>")


def _buggy(x: Any) -> Any:
    return {}[x]  # a bug: KeyError, not a language error


def test_a_python_exception_from_a_primitives_own_bug_is_not_dressed_as_the_users_error(
    started: Runtime,
) -> None:
    started.define("buggy", Primitive("buggy", _buggy, 1, 1, "", ("(buggy x)",)))
    with pytest.raises(KeyError):
        started.run_source("(buggy 1)", "<test>")
    with pytest.raises(KeyError):  # try catches the program's errors, not sexp's bugs
        started.run_source('(try (buggy 1) (catch e "caught"))', "<test>")
    with pytest.raises(KeyError):
        started.run_source("(map buggy (list 1))", "<test>")
    with pytest.raises(ArityError):  # a wrong count is still the user's mistake
        started.run_source("(buggy 1 2)", "<test>")


BUGGY_CLI = """
import sys
from sexp_tasks.lang.primitives import CORE_PRIMITIVES

@CORE_PRIMITIVES.primitive("buggy", signature="(buggy x)")
def buggy(x):
    return {}[x]

from sexp_tasks.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_is_shown_as_one(workspace: Path, debug: bool) -> None:
    args = ["eval", "(buggy 1)", *(["--debug"] if debug else [])]
    done = subprocess.run(
        [sys.executable, "-c", BUGGY_CLI, *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert "internal error: KeyError: 1" in done.stderr
    assert "TYPE_ERROR" not in done.stderr and "cannot be applied" not in done.stderr
    assert ("Traceback (most recent call last)" in done.stderr) == debug
    if debug:
        assert "in buggy" in done.stderr


def test_user_errors_raised_by_primitives_are_sexp_errors(started: Runtime) -> None:
    for text in ['(+ 1 "a")', "(keys 1)", "(nth (list 1) 5)", "(/ 1 0)", "(string-join (list 1) 2)"]:
        with pytest.raises(SexpError):
            started.run_source(text, "<test>")
