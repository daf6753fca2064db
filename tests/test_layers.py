"""The layers: the language core runs programs with the task system and everything above it absent."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scaled

from sexp_tasks.cli.startup import LAZY_IMPORTS
from sexp_tasks.errors import FormError, NameError_, SexpError
from sexp_tasks.lang.check import Checker, check_forms
from sexp_tasks.lang.compiler import Compiler
from sexp_tasks.lang.environment import Scope
from sexp_tasks.lang.forms import CORE_FORMS, FormRegistry
from sexp_tasks.lang.forms.binding import store
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.primitives import PrimitiveRegistry
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
from sexp_tasks.lang.primitives import PrimitiveRegistry
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
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["shown"] == list(PROGRAMS.values())
    assert report["loaded"] == []


# Names only the task system (and the memory system) gives the language, as calls and as values.
TASK_CALLS = ['(match-tasks "x")', "(pmap inc (list 1 2))", "(task? 1)", '(get-context "q")']


def test_an_interpreter_built_after_a_runtime_knows_no_task(runtime: Runtime) -> None:
    """The registries are per interpreter: a Runtime built first in the same process does not give a
    plain Interpreter its task forms and primitives."""
    core = Interpreter()
    for text in [*TASK_CALLS, "defatom", "pmap"]:
        with pytest.raises(NameError_, match="unbound symbol"):
            core.run_source(text)
    with pytest.raises(SexpError):  # not a special form here: a call of names nothing binds
        core.run_source('(defatom greet (instructions "hi"))')
    problems = check_forms(read("(defatom greet) (sequential 1)"), core.compiler, core.prelude)
    assert [p.message.split(";")[0] for p in problems] == [
        "unknown procedure 'defatom'",
        "unknown procedure 'sequential'",
    ]
    # ... and the runtime does
    assert runtime.run_source("(task? 1)") is False
    for name in ("defatom", "sequential", "director-evaluator-loop"):
        with pytest.raises(FormError, match="is a special form"):
            runtime.run_source(name)


@pytest.fixture
def defvar(runtime: Runtime) -> Runtime:
    """A runtime given a form with one registration, in a registry of the test's own, installed as
    the task system installs its forms: `(defvar name expr (see names...)...)` binds name to expr's
    value in the enclosing frame; only expr is code (the rest are notes)."""
    forms = FormRegistry()

    def check_defvar(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
        checker.walk(form.args[1:2], local)

    @forms.special_form("defvar", check=check_defvar, defines=True)
    def compile_defvar(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
        name = form.args[0]
        assert isinstance(name, Symbol)
        return store(name.name, c.compile(form.args[1], scope), scope, c, result=None)

    runtime.compiler.add_forms(forms)
    return runtime


def test_one_registration_teaches_the_compiler_the_checker_and_scope_analysis(defvar: Runtime) -> None:
    runtime = defvar
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
    # only that runtime: another interpreter's compiler knows nothing of it
    with pytest.raises(NameError_, match="unbound symbol 'defvar'"):
        Interpreter().run_source("(defvar v 1)")


def _compile_nothing(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    return lambda env: None


def test_a_name_is_registered_once() -> None:
    forms, primitives = FormRegistry(), PrimitiveRegistry()
    forms.special_form("twice")(_compile_nothing)
    with pytest.raises(ValueError, match="'twice' is registered twice"):
        forms.special_form("other", "twice")(_compile_nothing)
    primitives.primitive("twice", signature="(twice x)")(lambda x: x)
    with pytest.raises(ValueError, match="'twice' is registered twice"):
        primitives.primitive("twice", signature="(twice y)")(lambda y: y)
    assert forms["twice"].compile is _compile_nothing and primitives["twice"].signatures == ("(twice x)",)


def test_a_registry_cannot_take_a_name_an_interpreter_has() -> None:
    core = Interpreter()
    forms, primitives = FormRegistry(), PrimitiveRegistry()
    forms.special_form("if")(_compile_nothing)
    primitives.primitive("car", signature="(car x)")(lambda x: x)
    with pytest.raises(ValueError, match="installed twice: if"):
        core.compiler.add_forms(forms)
    with pytest.raises(ValueError, match="installed twice: car"):
        primitives.install(core.globals, None)
    assert core.compiler.forms["if"] is CORE_FORMS["if"]
    assert core.run_source("(if (car (list 1)) 2 3)") == 2


# The only imports the language core makes inside functions: those cli/startup.py lists for it,
# libraries whose import is measured to cost start-up time that most programs need not pay.
CORE = ("sexp_tasks.syntax", "sexp_tasks.lang")
CORE_LAZY_IMPORTS = {
    (importer, name)
    for name, lazy in LAZY_IMPORTS.items()
    for importer in lazy.importers
    if importer.startswith(CORE)
}


def test_the_language_core_imports_at_module_level_but_for_measured_start_up_savings() -> None:
    assert CORE_LAZY_IMPORTS  # the list names the core's (lark, regex ...)
    found = set()
    for path in [*(ROOT / "sexp_tasks").glob("syntax/**/*.py"), *(ROOT / "sexp_tasks").glob("lang/**/*.py")]:
        parts = path.relative_to(ROOT).with_suffix("").parts
        importer = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = ".".join(parts[:-1])
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):  # a library, by its top-level name as listed
                    found |= {(importer, alias.name.split(".")[0]) for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level:  # the package's own, in full
                    base = package.rsplit(".", node.level - 1)[0]
                    found.add((importer, ".".join(filter(None, [base, node.module or ""]))))
                elif isinstance(node, ast.ImportFrom):
                    found.add((importer, (node.module or "").split(".")[0]))
    assert found == CORE_LAZY_IMPORTS


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's [tool.importlinter] contracts: the stages' layers, a core that knows no
    task, each library imported by one module (ARCHITECTURE.md)."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    if not lint_imports.exists():
        pytest.skip("import-linter is not installed in this environment (it is in requirements-test.lock)")
    completed = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(300)
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout


LONG_PRODUCT = """
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.primitives import PrimitiveRegistry
from sexp_tasks.lang.printer import to_repr

print(to_repr(Interpreter().run_source("(* {n} {n})")))
"""


def test_a_bare_interpreter_prints_the_long_integers_it_computes() -> None:
    """Integers have any size in the language, in the core on its own too (not only where the CLI
    or the Runtime lifted Python's limit on int digits)."""
    n = "9" * 2500
    done = subprocess.run(
        [sys.executable, "-c", LONG_PRODUCT.replace("{n}", n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stderr
    # (10**2500 - 1)**2 = 10**5000 - 2 * 10**2500 + 1, written out without converting it here
    assert done.stdout.strip() == "9" * 2499 + "8" + "0" * 2499 + "1"
