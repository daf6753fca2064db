"""The layers: the language core runs programs with the task system and everything above it absent."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sexp_tasks.lang.check import Checker
from sexp_tasks.lang.compiler import Compiler
from sexp_tasks.lang.environment import Scope
from sexp_tasks.lang.forms import SPECIAL_FORMS, special_form
from sexp_tasks.lang.forms.binding import store
from sexp_tasks.lang.values import Code
from sexp_tasks.runtime import Runtime
from sexp_tasks.syntax.nodes import FunctionCallNode, Symbol
from sexp_tasks.syntax.reader import read

ROOT = Path(__file__).resolve().parent.parent

# Everything above the language core: none of it may be imported to run a program of the core.
ABOVE_THE_CORE = (
    "sexp_tasks.tasks",
    "sexp_tasks.handler",
    "sexp_tasks.runs",
    "sexp_tasks.memory",
    "sexp_tasks.process",
    "sexp_tasks.repl",
    "sexp_tasks.cli",
    "sexp_tasks.runtime",
)
# The task system's values: the core knows them only as ExtensionValues (lang/values.py).
TASK_RESULTS = ("sexp_tasks.results",)

PROGRAMS = {
    "(define (f x) (* x 2)) (map f (list 1 2 3))": "(2 4 6)",
    # lambda, let, if, try, and an error the program raises and catches
    '(let ((g (lambda (n) (if (> n 2) (error "too big") n))))'
    ' (try (list (g 1) (g 5)) (catch e (list "caught" (get e "message")))))': '("caught" "too big")',
    # calls that could be pair syntax, higher-order primitives given primitives, the prelude
    "(define (len xs) (if (null? xs) 0 (+ 1 (len (cdr xs)))))"
    " (list (len (list 1 2 3)) (reduce + 0 (list 1 2 3)) (map inc (list 1 2))"
    " (filter odd? (range 5)) (sum (list 4 5)))": "(3 6 (2 3) (1 3) 9)",
    '(let* ((a 1) (b (+ a 1))) (cond ((> a b) "no") (else `(,a ,@(list b 3)))))': "(1 2 3)",
}

SCRIPT = """
import json, sys
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.printer import to_repr

core = Interpreter()
shown = [to_repr(core.run_source(text)) for text in json.loads(sys.argv[1])]
loaded = sorted(name for name in sys.modules if name.startswith(tuple(json.loads(sys.argv[2]))))
print(json.dumps({"shown": shown, "loaded": loaded}))
"""


def test_the_language_core_runs_programs_without_the_task_system() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(list(PROGRAMS)), json.dumps(ABOVE_THE_CORE + TASK_RESULTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["shown"] == list(PROGRAMS.values())
    assert report["loaded"] == []


@pytest.fixture
def defvar() -> Iterator[None]:
    """A form added for the test with one registration: `(defvar name expr (see names...)...)`
    binds name to expr's value in the enclosing frame; only expr is code (the rest are notes)."""

    def check_defvar(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
        checker.walk(form.args[1:2], local)

    def compile_defvar(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
        name = form.args[0]
        assert isinstance(name, Symbol)
        return store(name.name, c.compile(form.args[1], scope), scope, c, result=None)

    special_form("defvar", check=check_defvar, defines=True)(compile_defvar)
    try:
        yield
    finally:
        del SPECIAL_FORMS["defvar"]


def test_one_registration_teaches_the_compiler_the_checker_and_scope_analysis(
    runtime: Runtime, defvar: None
) -> None:
    # scope analysis: x is f's own from the start, so g, defined before it, reads f's x
    source = "(define (f) (define (g) (+ x 1)) (defvar x 41) (g)) (f)"
    assert runtime.run_source(source) == 42
    assert "x" not in runtime.globals.values
    # the checker: only the expression is code, and y is a name the program defines
    problems = runtime.check(read("(defvar y (no-such-procedure 1) (see map)) (y 1) (z 1)"))
    messages = [p.message for p in problems]
    assert len(messages) == 2, messages
    assert messages[0].startswith("unknown procedure 'no-such-procedure'")
    assert messages[1].startswith("unknown procedure 'z'")


# The only imports the language core makes inside functions: libraries whose import is measured to
# cost start-up time that most programs need not pay (each says so where it is imported).
CORE_LAZY_IMPORTS = {
    ("syntax/tables.py", "lark"),
    ("syntax/tables.py", "lark.parsers.lalr_analysis"),
    ("lang/primitives/text.py", "regex"),
    ("lang/suggest.py", "difflib"),
    ("lang/deepstack.py", "ctypes"),
}


def test_the_language_core_imports_at_module_level_but_for_measured_start_up_savings() -> None:
    package = ROOT / "sexp_tasks"
    found = set()
    for path in [*package.glob("syntax/**/*.py"), *package.glob("lang/**/*.py")]:
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found |= {(path.relative_to(package).as_posix(), alias.name) for alias in node.names}
                elif isinstance(node, ast.ImportFrom):
                    module = "." * node.level + (node.module or "")
                    found.add((path.relative_to(package).as_posix(), module))
    assert found == CORE_LAZY_IMPORTS


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's [tool.importlinter] contracts: the stages' layers, a core that knows no
    task, each library imported by one module (ARCHITECTURE.md)."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    if not lint_imports.exists():
        pytest.skip("import-linter is not installed in this environment (it is in requirements-test.lock)")
    completed = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout
