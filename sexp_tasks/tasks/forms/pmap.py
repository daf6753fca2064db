"""pmap (SPEC §3.6): apply a procedure to every element on a few worker threads, in input order.

A worker takes the next element, calls the procedure, stores the value in the element's place
and takes another, so at most n calls are in flight. An element whose call raises a language
error is a FAILED TaskResult in its place, so one bad element never loses the others' work.
Each element runs in a copy of the caller's context variables, as an Element of this call's
Batch (the element of its RunContext, sexp_tasks/run_context.py): the journal keys its steps by
the element's path (SPEC §6: `[3]`, nested `[3][0]`) and scripted mock replies go to it by its
index (SPEC §10.1).

The calling thread only waits, in short steps so Ctrl-C reaches it; then it stops the workers
from starting anything more, interrupts each (a script they wait on is killed, as in the calling
thread) and lets the interrupt go on. Workers are daemon threads: a call blocked in C (a model
call) cannot be interrupted at once, and must not keep the process alive at exit.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...errors import SexpError, TypeError_
from ...lang.calls import apply_procedure
from ...lang.deepstack import STACK_BYTES, deep_recursion, raise_interrupt_in, start_thread
from ...lang.primitives.lists import as_list
from ...lang.primitives.options import ABSENT, keyword_option, positive_integer
from ...lang.printer import to_repr
from ...lang.values import Procedure, Value, passed_arguments, type_name
from ...results import FAILED, TaskError, TaskResult
from ...run_context import Batch, Element, run_context, within
from ..progress import Progress, progress
from ..task_services import TaskServices
from . import TASK_PRIMITIVES

WAIT_STEP = 0.05  # seconds the calling thread waits at a time, so that Ctrl-C is seen at once
# Errors about the run rather than an element (no model configured, an unusable mock script or
# cassette, the store): every element would fail the same way, so they stop pmap as they stop map.
RUN_ERRORS = frozenset({"CONFIGURATION_ERROR", "HANDLER_ERROR", "STORE_ERROR"})

RunElement = Callable[[int], Value]  # runs element i, giving its value or its FAILED result


@TASK_PRIMITIVES.primitive("pmap", signature="(pmap f xs [:concurrency n])")
def pmap(ctx: TaskServices, depth: int, fn: Any, seq: Any, *options: Any) -> list[Any]:
    """(f x) for each element on up to n threads (`:concurrency n`, default from config), in order.

    The results keep the order of xs. An element whose call raises or fails gives a FAILED
    TaskResult in its place; the others go on. f is a procedure or a task; each task call keeps
    its own budgets, and `max_cost_usd` holds across all of them.

    (pmap (lambda (x) (* x x)) (list 1 2 3) :concurrency 2)
    ;; => (1 4 9)
    """
    if not isinstance(fn, Procedure):
        raise TypeError_(f"pmap: expected a procedure or task, got {to_repr(fn)} ({type_name(fn)})")
    items = as_list("pmap", seq, "second")
    limit = _concurrency(options, ctx.settings.concurrency)
    batch = Batch(len(items), run_context().element)
    parent = contextvars.copy_context()

    def element(index: int) -> Value:
        args = passed_arguments(fn, [items[index]])
        return parent.copy().run(_run_element, fn, args, depth, batch.element(index))

    if len(items) <= 1:
        return [element(i) for i in range(len(items))]
    nested = batch.parent is not None  # a pmap inside an element draws no bar over the outer one's
    bar = (
        Progress("pmap", len(items), ctx.err, enabled=False)
        if nested
        else progress(ctx.err, ctx.settings.quiet, "pmap", len(items))
    )
    with bar:
        return _Pool(element, len(items), min(limit, len(items)), bar.advance).run()


def _concurrency(options: tuple[Any, ...], default: Any) -> int:
    """n from `:concurrency n`, else the configured default; a positive integer either way."""
    n = keyword_option("pmap", "concurrency", options)
    if n is ABSENT:
        return positive_integer("pmap", "the `concurrency` setting", default)
    return positive_integer("pmap", ":concurrency", n)


def _run_element(fn: Procedure, args: list[Value], depth: int, element: Element) -> Value:
    """(fn args...) as `element`, or a FAILED TaskResult when it raises a language error."""
    index = element.index
    try:
        with within(replace(run_context(), element=element)):
            return apply_procedure(fn, args, depth)
    except SexpError as err:
        if err.error_type in RUN_ERRORS:
            raise
        return element_failure(index, err)
    except RecursionError:
        return element_failure(index, SexpError("nesting too deep to evaluate"))


def element_failure(index: int, err: SexpError) -> TaskResult:
    """The FAILED result standing in for element `index`, whose call raised err."""
    where = f" (line {err.span.line}, column {err.span.column})" if err.span is not None else ""
    message = f"pmap: element {index} failed: {err.error_type}: {err.message}{where}"
    return TaskResult(
        content="",
        status=FAILED,
        notes={"element": index},
        error=TaskError(
            "TASK_FAILURE",
            message,
            reason="element_failure",
            details={"index": index, "error": err.to_value()},
        ),
    )


class _Pool:
    """n worker threads with a large C stack, sharing one cursor over the elements."""

    def __init__(self, element: RunElement, count: int, n: int, advance: Callable[[], None]) -> None:
        self.element = element
        self.count = count
        self.n = n
        self.advance = advance
        self.results: list[Value] = [None] * count
        self.next = 0
        self.finished = 0
        self.error: BaseException | None = None  # what stopped the run, re-raised by the caller
        self.cancelled = False
        self.lock = threading.Lock()
        self.all_done = threading.Event()
        self.working: set[threading.Thread] = set()  # workers inside work(), under the lock

    def run(self) -> list[Value]:
        """Start the workers and wait for every element (or for the first error that stops all)."""
        previous = threading.stack_size(STACK_BYTES)
        try:
            for i in range(self.n):
                try:
                    start_thread(threading.Thread(target=self.work, name=f"sexp-pmap-{i}", daemon=True))
                except RuntimeError:  # no more threads to be had: go on with those already working
                    if i == 0:
                        raise
                    break
        finally:
            threading.stack_size(previous)
        try:
            while not self.all_done.wait(WAIT_STEP):
                pass
        except BaseException:
            self.cancel(interrupt=True)  # Ctrl-C: start no more elements, and stop those in flight
            raise
        if self.error is not None:
            raise self.error
        return self.results

    def cancel(self, interrupt: bool = False) -> None:
        """Start no more elements; with interrupt, raise KeyboardInterrupt in every worker still
        working (only those: a finished thread's id may already be another thread's)."""
        with self.lock:
            self.cancelled = True
            for worker in self.working if interrupt else ():
                raise_interrupt_in(worker)

    def take(self) -> int | None:
        """The index of the next element to run, or None when none is left or pmap stopped."""
        with self.lock:
            if self.cancelled or self.next >= self.count:
                return None
            self.next += 1
            return self.next - 1

    def work(self) -> None:
        """A worker's loop: run elements until none is left."""
        me = threading.current_thread()
        try:
            with self.lock:
                self.working.add(me)
            try:
                with deep_recursion():
                    self._work()
            finally:
                with self.lock:
                    self.working.discard(me)
        except KeyboardInterrupt:  # pmap was interrupted between two elements: just stop
            pass

    def _work(self) -> None:
        while (index := self.take()) is not None:
            try:
                self.results[index] = self.element(index)
            except BaseException as exc:  # a run error or a bug, not the element's: stop everything
                with self.lock:
                    self.cancelled = True
                    self.error = self.error or exc
                self.all_done.set()
                return
            self.advance()
            with self.lock:
                self.finished += 1
                if self.finished == self.count:
                    self.all_done.set()
