"""The import contracts see everything: every module in a layer, the language core knowing nothing
of the package root but errors (and spans) and package files, and what the task system adds to the
core (reduce's context defaults, `*loop-config*`) given per interpreter, never per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_python, scaled

import sexp_tasks.tasks.forms  # noqa: F401  (the task system imported: nothing of it may leak)
from sexp_tasks.errors import NameError_
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.primitives import PrimitiveRegistry
from sexp_tasks.lang.values import Value
from sexp_tasks.run_context import run_context
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.forms.task_loops import LOOP_CONFIG

CONTRACTS = {
    "Every module in one layer: an import only points down",
    "The language core knows no task, handler, process, run, memory, batch, API, REPL or CLI",
    "The language core imports from the package root only errors and resources",
    "litellm is imported by sexp_tasks.handler.llm alone",
    "httpx is imported by sexp_tasks.handler.direct_call alone (the direct model call's answers)",
    "http (http.client) and certifi are imported by sexp_tasks.handler.http_pool alone (the connection pool)",
    "tiktoken is imported by sexp_tasks.handler.tokens alone",
    "jsonschema (and its referencing) is imported by sexp_tasks.handler.json_schema alone",
    "pydantic is imported by sexp_tasks.handler.pydantic_models alone",
    "lxml is imported by sexp_tasks.xmltools alone",
    "lark is imported by sexp_tasks.syntax.tables alone",
    "prompt_toolkit is imported by sexp_tasks.repl.shell alone",
    "pygments is imported by sexp_tasks.repl.shell alone",
    "sqlite3 is imported by sexp_tasks.runs.store alone",
    "regex is imported by sexp_tasks.lang.primitives.text alone",
    "subprocess is imported by sexp_tasks.process.child_processes alone",
    "ray is imported by sexp_tasks.batching.ray_executor and ray_actors alone",
    "opentelemetry is imported by sexp_tasks.runs.otel_export alone",
    "mcp (and its HTTP client httpx2) is imported by sexp_tasks.handler.mcp_client alone",
}


def test_every_import_contract_is_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "400"},  # one line per contract
        timeout=scaled(120),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    kept = {line.removesuffix(" KEPT") for line in done.stdout.splitlines() if line.endswith(" KEPT")}
    assert kept == CONTRACTS
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in done.stdout


ROOT_MODULES = """
import json, sys
from sexp_tasks.lang.interpreter import Interpreter
Interpreter().run_source('(reduce + 0 (map inc (list 1 2))) (try (error "x") (catch e e))')
print(json.dumps([name for name in sys.modules if name.startswith("sexp_tasks.") and name.count(".") == 1]))
"""


def test_the_language_core_loads_of_the_package_root_only_errors_and_resources() -> None:
    loaded = set(json.loads(run_python(ROOT_MODULES)))
    stages = {"sexp_tasks.syntax", "sexp_tasks.lang"}
    assert loaded - stages == {"sexp_tasks.errors", "sexp_tasks.resources"}


# A reducer that is not a closure (a task, here a primitive) is called inside the operator hook.
SEEN = PrimitiveRegistry()


@SEEN.primitive("operator-seen", signature="(operator-seen acc x)")
def operator_seen(acc: Value, x: Value) -> Value:
    """acc with the operator whose context defaults a task called now would get."""
    assert isinstance(acc, list)
    return [*acc, run_context().operator]


def test_a_plain_interpreters_reduce_knows_no_task_a_runtimes_gives_the_reduce_defaults(
    runtime: Runtime,
) -> None:
    core = Interpreter()
    for interpreter in (core, runtime):
        SEEN.install(interpreter.globals, None)
    program = "(reduce operator-seen (list) (list 1 2))"
    assert core.run_source(program) == ["atomic", "atomic"]
    assert runtime.run_source(program) == ["reduce", "reduce"]
    with pytest.raises(ValueError, match="installed twice"):
        runtime.globals.operator_calls.install(lambda operator: core.globals.operator_calls.of(operator))


def test_a_dynamic_variable_is_the_compilers_that_installed_it(runtime: Runtime) -> None:
    """`*loop-config*` is dynamic in a Runtime (the task system installed it), and an ordinary
    global name in a plain Interpreter, though the task system was imported first."""
    core = Interpreter()
    assert core.compiler.dynamic_variables == {}
    assert runtime.compiler.dynamic_variables == {"*loop-config*": LOOP_CONFIG}
    for interpreter in (core, runtime):
        interpreter.run_source('(define *loop-config* "global") (define (config) *loop-config*)')
    with LOOP_CONFIG.bound("bound"):
        assert core.run_source("(list *loop-config* (config))") == ["global", "global"]
        assert runtime.run_source("(list *loop-config* (config))") == ["bound", "bound"]
        core.run_source('(set! *loop-config* "set")')  # the global, not the binding
        assert runtime.run_source("*loop-config*") == "bound"
    assert core.run_source("*loop-config*") == "set"
    with pytest.raises(ValueError, match="installed twice: \\*loop-config\\*"):
        runtime.compiler.add_dynamic_variable(LOOP_CONFIG)
    with pytest.raises(NameError_, match="unbound symbol '\\*loop-config\\*'"):
        Interpreter().run_source("*loop-config*")
