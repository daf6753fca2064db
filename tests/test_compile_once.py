"""A batch's program is read and compiled once per worker thread's Runtime, not once per row
(Runtime.run_recorded keeps the codes of its last programs: lang/compiled_programs.py), and every
row still runs as if its program had been compiled for it alone."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import write

import sexp_tasks
from sexp_tasks.config import Settings
from sexp_tasks.lang.compiled_programs import KEPT, CompiledPrograms
from sexp_tasks.lang.compiler import Compiler
from sexp_tasks.lang.environment import Scope
from sexp_tasks.lang.values import Code
from sexp_tasks.runs.store import Store
from sexp_tasks.runtime import Runtime
from sexp_tasks.syntax.nodes import Node
from sexp_tasks.syntax.reader import Reader

# Each row looks at what an earlier row would have left (its define of counter), then defines
# and sets globals from its own x, makes a closure of it and calls primitives; no model.
PROGRAM = """\
(define seen (try counter (catch e "unbound")))
(define counter (* x 10))
(define (make-adder n) (lambda (y) (+ n y)))
(define add-x (make-adder x))
(set! counter (+ counter 1))
(define label (if (> x 25) "big" "small"))
(list x seen counter (add-x 100) (string-append label "-" (str x)) (length (list 1 2 3)))
"""


def expected(x: int) -> list[Any]:
    return [x, "unbound", x * 10 + 1, x + 100, f"{'big' if x > 25 else 'small'}-{x}", 3]


def test_every_row_gets_its_own_values_from_the_shared_compilation(workspace: Path) -> None:
    write(workspace / "p.sexp", PROGRAM)
    rows = [{"x": i} for i in range(50)]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, executor="threads", concurrency=4, quiet=True)
    assert [row["status"] for row in got] == ["ok"] * 50, [row["error"] for row in got if row["error"]]
    assert [row["value"] for row in got] == [expected(i) for i in range(50)]


def _on_a_row_thread() -> bool:
    return threading.current_thread().name.startswith("sexp-batch-")  # a row's, not the driver's


def test_the_program_is_read_and_compiled_once_per_thread(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = str(write(workspace / "p.sexp", PROGRAM))
    reads: list[str] = []
    compiles: list[str] = []
    threads: set[str] = set()
    read, compile_ = Reader.read, Compiler.compile

    def counting_read(self: Reader, text: str, origin: str = "<input>") -> list[Node]:
        if _on_a_row_thread() and origin == program:
            reads.append(threading.current_thread().name)
        return read(self, text, origin)

    def counting_compile(self: Compiler, node: Node, scope: Scope | None, tail: bool = False) -> Code:
        span = getattr(node, "span", None)
        if _on_a_row_thread() and scope is None and span is not None and span.origin == program:
            if (span.line, span.column) == (1, 1):  # the first form: compiled once per compilation
                compiles.append(threading.current_thread().name)
        return compile_(self, node, scope, tail)

    def noting(fresh: Any) -> Any:
        def fresh_noting(self: object, *args: object) -> Runtime:
            threads.add(threading.current_thread().name)
            return fresh(self, *args)  # type: ignore[no-any-return]

        return fresh_noting

    from sexp_tasks.batching import thread_executor

    monkeypatch.setattr(Reader, "read", counting_read)
    monkeypatch.setattr(Compiler, "compile", counting_compile)
    monkeypatch.setattr(thread_executor.RowRuntimes, "fresh", noting(thread_executor.RowRuntimes.fresh))
    rows = [{"x": i} for i in range(40)]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, executor="threads", concurrency=2, quiet=True)
    assert [row["value"] for row in got] == [expected(i) for i in range(40)]
    assert 1 <= len(threads) <= 2
    # once per thread (each thread's Runtime); before, once per row: 40 of each
    assert len(reads) == len(threads) and sorted(set(reads)) == sorted(threads), reads
    assert len(compiles) == len(threads) and sorted(set(compiles)) == sorted(threads), compiles


def test_a_program_that_does_not_compile_fails_every_row_with_its_error(workspace: Path) -> None:
    write(workspace / "p.sexp", "(define y 1)\n(let x y)\n")
    rows = [{"x": i} for i in range(6)]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, executor="threads", concurrency=2, quiet=True)
    assert [row["status"] for row in got] == ["error"] * 6
    assert [row["error"] for row in got] == [
        f"{workspace / 'p.sexp'}:2:1: error: let: expected (let ((name expr)...) body...)"
    ] * 6
    store = Store(workspace / ".sexp" / "store.db")
    # a program that does not compile is no run
    assert [store.run(row["run_id"]) for row in got] == [None] * 6


def test_what_a_compilation_assumed_of_the_globals_decides_whether_it_is_reused(workspace: Path) -> None:
    # Whether (greet (who "Ada")) may be a call by pair syntax is decided when it is compiled: not
    # when greet is a global bound to something other than a task then, as in the first run here.
    # The second run, greet unbound when compiled, must get its own compilation: its defatom makes
    # greet a task before the call.
    text = (
        '(if (= (try greet (catch e 0)) 1) nil (defatom greet (params who) (instructions "Hi {{who}}")))\n'
        '(try (task-content (greet (who "Ada"))) (catch e (get e "message")))\n'
    )
    path = write(workspace / "p.sexp", text)
    settings = Settings(workspace=str(workspace), model="mock/m", quiet=True)
    runtime = Runtime(settings, out=io.StringIO(), err=io.StringIO())
    saved = runtime.globals.saved()
    runtime.define("greet", 1)
    assert runtime.run_recorded(path, text, {}) == "unbound symbol 'who'"
    runtime.globals.restore(saved)
    assert runtime.run_recorded(path, text, {}) == "mock response 1 for greet"
    runtime.globals.restore(saved)
    runtime.define("greet", 1)
    assert runtime.run_recorded(path, text, {}) == "unbound symbol 'who'"


def test_a_program_that_does_not_read_is_no_run_each_time(workspace: Path) -> None:
    path = write(workspace / "p.sexp", "(+ 1\n")
    runtime = Runtime(Settings(workspace=str(workspace), quiet=True), out=io.StringIO(), err=io.StringIO())
    messages = []
    for _ in range(2):
        with pytest.raises(sexp_tasks.SexpError) as caught:
            runtime.run_recorded(path, "(+ 1\n", {})
        messages.append(str(caught.value))
        assert runtime.run is None  # no run was made
    assert messages == ["unclosed '(' opened at 1:1; expected ')' before end of input"] * 2


def test_a_bad_defatom_raised_again_does_not_keep_the_earlier_runs_tracebacks(workspace: Path) -> None:
    # Its error is made when compiled and raised each time the code runs: a kept compilation runs
    # for every row, whose frames the error's traceback would otherwise hold on to.
    runtime = Runtime(Settings(workspace=str(workspace), quiet=True), out=io.StringIO(), err=io.StringIO())
    codes = CompiledPrograms(runtime.compiler).codes("(defatom bad (params))\n", "p.sexp")
    lengths = []
    for _ in range(3):
        with pytest.raises(sexp_tasks.SexpError, match="defatom bad: missing") as caught:
            codes[0]([None, 0])
        tb, length = caught.value.__traceback__, 0
        while tb is not None:
            tb, length = tb.tb_next, length + 1
        lengths.append(length)
    assert lengths[0] == lengths[1] == lengths[2]


def test_a_compilation_is_kept_for_the_same_text_origin_and_object_named_only() -> None:
    programs = CompiledPrograms(Runtime(load_templates=False).compiler)
    settings, other = Settings(), Settings()
    codes = programs.codes("(+ 1 2)", "a.sexp", settings)
    assert programs.codes("(+ 1 2)", "a.sexp", settings) is codes
    assert programs.codes("(+ 1 2)", "a.sexp", other) is not codes  # equal settings, but not the same
    assert programs.codes("(+ 1 2)", "b.sexp", settings) is not codes
    assert programs.codes("(+ 1 3)", "a.sexp", settings) is not codes
    assert [code([None, 0]) for code in programs.codes("(+ 1 3)", "a.sexp", settings)] == [4]


def test_only_the_last_programs_are_kept() -> None:
    programs = CompiledPrograms(Runtime(load_templates=False).compiler)
    first = programs.codes("(+ 1 0)", "a.sexp")
    for i in range(1, KEPT):
        programs.codes(f"(+ 1 {i})", "a.sexp")
    assert programs.codes("(+ 1 0)", "a.sexp") is first  # KEPT programs: all still kept
    programs.codes(f"(+ 1 {KEPT})", "a.sexp")  # one more: the first compiled goes
    again = programs.codes("(+ 1 0)", "a.sexp")
    assert again is not first and [code([None, 0]) for code in again] == [1]


def test_a_library_definition_is_compiled_once_per_thread_not_once_a_row(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row's first use of a prelude procedure compiles it; the thread's Runtime keeps it,
    compiled again in its clean state, for its next rows (before, every row compiled it again)."""
    from sexp_tasks.lang.prelude import LazyDefinitions

    write(workspace / "p.sexp", "(define (inc x) (- x 1))\n(list (inc x) (sum (list x x)) (even? x))\n")
    compiled: list[str] = []
    resolve = LazyDefinitions.resolve

    def counting(self: LazyDefinitions, name: str) -> Any:
        if name in self._pending and name in ("sum", "even?", "inc"):
            compiled.append(name)
        return resolve(self, name)

    monkeypatch.setattr(LazyDefinitions, "resolve", counting)
    rows = [{"x": i} for i in range(40)]
    got = sexp_tasks.batch(workspace / "p.sexp", rows, executor="threads", concurrency=2, quiet=True)
    # inc is the program's own (it shadows the prelude's in every row): never the library's
    assert [row["value"] for row in got] == [[i - 1, 2 * i, i % 2 == 0] for i in range(40)]
    assert "inc" not in compiled
    for name in ("sum", "even?"):  # at most twice per thread (first use, then once clean): 2 threads
        assert 1 <= compiled.count(name) <= 4, compiled
