"""Loops over tasks (SPEC §2.7): (director-evaluator-loop clauses...) and (iterative-loop clauses...).

Clauses are `(name expr)` in any order. Their expressions are evaluated once, left to right,
when the loop runs; then each iteration calls the phase procedures (closures, primitives or
tasks) and a controller decides: `(list 'stop value)` or `(list 'continue next-input)`.
A loop never swallows a phase's failure (SPEC §10.1): an error raised in a phase ends it naming
the phase and iteration, and a phase that is a task and gives a FAILED result ends it with that
result as its value (saying the same in its message).
While the phases run, `*loop-config*` is dynamically bound to the loop's settings as an
association list, so a phase sees it wherever it was defined; loops running at once under pmap
each see their own (sexp_tasks/lang/dynamic.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import FormError, SexpError, Span, TypeError_
from ...lang.calls import apply_procedure
from ...lang.dynamic import DynamicVariable
from ...lang.forms import walk_all_clauses
from ...lang.printer import to_repr
from ...lang.quoting import datum
from ...lang.suggest import did_you_mean
from ...lang.values import Code, Procedure, Value, passed_arguments, type_name
from ...results import TaskResult
from ...run_context import operator_defaults
from ...syntax.nodes import FunctionCallNode, Keyword, Symbol
from ..progress import Progress, progress
from ..runner import TaskSystem
from ..task import Task
from . import TASK_FORMS
from .loop_support import evaluation_succeeded, failed_result, phase_failure

if TYPE_CHECKING:
    from ...lang.compiler import Compiler
    from ...lang.environment import Scope

LOOP_CONFIG = DynamicVariable("*loop-config*")  # dynamic where tasks.forms.install installs it
# One iteration of a loop: (input, i) -> (action 'stop' or 'continue', its value, the iteration's out).
Iteration = Callable[[Value, int], tuple[str, Value, Value]]


@dataclass(frozen=True)
class LoopShape:
    """A loop form's clauses: settings (shown in *loop-config*, in order), phases, optional ones."""

    name: str
    settings: tuple[str, ...]
    phases: tuple[str, ...]
    optional: frozenset[str] = frozenset()
    operator: str = "atomic"  # whose context defaults its task phases get (§3.5)

    @property
    def clauses(self) -> tuple[str, ...]:
        return (*self.settings, *self.phases)


DIRECTOR_EVALUATOR = LoopShape(
    "director-evaluator-loop",
    ("max-iterations", "initial-director-input"),
    ("director", "executor", "evaluator", "controller"),
    frozenset({"executor", "controller"}),
    operator="director_evaluator_loop",
)
ITERATIVE = LoopShape(
    "iterative-loop",
    ("max-iterations", "initial-input", "test-command"),
    ("executor", "validator", "controller"),
)


@dataclass(frozen=True)
class Clauses:
    """A loop form's compiled clause expressions, and where each clause (and the form) is."""

    codes: tuple[tuple[str, Code], ...]
    spans: dict[str, Span | None]
    form_span: Span | None

    def evaluate(self, env: list[Any]) -> dict[str, Value]:
        """Every clause's value, evaluated left to right."""
        return {name: code(env) for name, code in self.codes}

    def at(self, name: str) -> Span | None:
        """Where clause `name` is written (the form when it is not)."""
        return self.spans.get(name) or self.form_span


def compile_clauses(form: FunctionCallNode, shape: LoopShape, scope: Scope | None, c: Compiler) -> Clauses:
    """Check the clauses' shapes and names and compile their expressions."""
    compiled: list[tuple[str, Code]] = []
    spans: dict[str, Span | None] = {}
    for clause in form.args:
        if not isinstance(clause, FunctionCallNode):
            raise FormError(
                f"{shape.name}: expected clauses such as (max-iterations n), got {_show(clause)}",
                getattr(clause, "span", None) or form.span,
            )
        name = clause.name
        if name not in shape.clauses:
            hint = did_you_mean(name, shape.clauses) or f" (clauses: {', '.join(shape.clauses)})"
            raise FormError(f"{shape.name}: unknown clause ({name} ...){hint}", clause.span)
        if any(name == seen for seen, _ in compiled):
            raise FormError(f"{shape.name}: duplicate clause ({name} ...)", clause.span)
        if len(clause.args) != 1:
            raise FormError(f"{shape.name}: ({name} ...) takes one expression", clause.span)
        compiled.append((name, c.compile(clause.args[0], scope)))
        spans[name] = clause.span
    given = {name for name, _ in compiled}
    missing = [name for name in shape.clauses if name not in given and name not in shape.optional]
    if missing:
        listed = " ".join(f"({name} ...)" for name in missing)
        raise FormError(f"{shape.name}: missing clause{'s' if len(missing) > 1 else ''} {listed}", form.span)
    return Clauses(tuple(compiled), spans, form.span)


def _show(node: Any) -> str:
    return to_repr(datum(node))


class PhaseFailed(Exception):
    """A task phase gave a FAILED result: the loop stops with it as its value (SPEC §10.1).

    Only a task's: a procedure phase's values are the program's own, and its controller decides."""

    def __init__(self, result: TaskResult) -> None:
        super().__init__(result.error.message if result.error else "failed")
        self.result = result


class LoopRun:
    """One run of a loop form: its settings checked, its phases called and their errors named."""

    def __init__(self, shape: LoopShape, clauses: Clauses, env: list[Any]) -> None:
        self.shape = shape
        self.clauses = clauses
        self.values = values = clauses.evaluate(env)
        self.depth: int = env[1]
        count = values["max-iterations"]
        if type(count) is not int or count < 0:
            raise TypeError_(
                f"{shape.name}: max-iterations must be a non-negative integer, got {to_repr(count)}",
                clauses.at("max-iterations"),
            )
        self.count: int = count
        for phase in shape.phases:
            fn = values.get(phase)
            if phase in values and not isinstance(fn, Procedure):
                got = f"{to_repr(fn)} ({type_name(fn)})"
                raise TypeError_(
                    f"{shape.name}: {phase} must be a procedure or a task, got {got}", clauses.at(phase)
                )

    def config(self) -> list[Value]:
        """The association list *loop-config* holds: ((max-iterations n) (initial-... x) ...)."""
        return [[Symbol(name), self.values[name]] for name in self.shape.settings]

    def call(self, phase: str, args: list[Value], iteration: int) -> Value:
        """Call a phase; a task gets only as many arguments as it declares inputs, and the
        loop's context defaults (§3.5). A task whose result is FAILED ends the loop (PhaseFailed)."""
        fn = self.values[phase]
        try:
            with operator_defaults(self.shape.operator):
                value = apply_procedure(fn, passed_arguments(fn, args), self.depth, self.clauses.at(phase))
        except SexpError as err:
            raise annotated(err, f"{self.shape.name}: {phase} failed in iteration {iteration}: ") from err
        if isinstance(fn, Task) and failed_result(value):
            raise PhaseFailed(phase_failure(value, self.shape.name, phase, iteration))
        return value

    def iterate(self, c: Compiler, first_input: Value, iteration: Iteration) -> Value:
        """Run the iterations with *loop-config* bound: iteration(input, i) gives (action, value,
        out); 'stop' ends the loop with value, 'continue' makes value the next input. Out of
        iterations, the last out (nil after none); a task phase's FAILED result ends it as its value."""
        loop_input, out = first_input, None
        with LOOP_CONFIG.bound(self.config()), loop_progress(c, self.shape.name, self.count) as bar:
            try:
                for i in range(1, self.count + 1):
                    action, value, out = iteration(loop_input, i)
                    bar.advance()
                    if action == "stop":
                        return value
                    loop_input = value
            except PhaseFailed as failed:
                return failed.result
        return out

    def decide(self, args: list[Value], iteration: int) -> tuple[str, Value]:
        """The controller's decision: ('stop', value) or ('continue', next input)."""
        decision = self.call("controller", args, iteration)
        if isinstance(decision, list) and len(decision) == 2:
            head = decision[0]
            word = head.name if isinstance(head, (Symbol, Keyword)) else head
            if word in ("stop", "continue"):
                return word, decision[1]
        raise TypeError_(
            f"{self.shape.name}: controller returned {to_repr(decision)} in iteration {iteration};"
            " expected (list 'stop value) or (list 'continue next-input)",
            self.clauses.at("controller"),
        )


def annotated(err: SexpError, prefix: str) -> SexpError:
    """A copy of err, of the same type, whose message starts with prefix.

    A copy because an error object may be raised again (a defatom that failed to compile
    raises the same one every time it runs)."""
    copy = type(err).__new__(type(err))
    copy.__dict__.update(err.__dict__)
    copy.message = prefix + err.message
    copy.args = (copy.message,)
    return copy


def loop_progress(c: Compiler, label: str, total: int) -> Progress:
    """The iterations as a progress bar on the runtime's stderr when it is a terminal (nothing when
    piped or quiet, nor where no task system is installed: then there is no stream of its to use)."""
    system = c.extension(TaskSystem)
    if system is None:
        return Progress(label, total, sys.stderr, enabled=False)
    return progress(system.err, system.settings.quiet, label, total)


def default_decision(feedback: Value, loop_input: Value, out: Value) -> tuple[str, Value]:
    """Stop with out after a successful evaluation, else continue with the input and the feedback."""
    if evaluation_succeeded(feedback):
        return "stop", out
    said = feedback.content if isinstance(feedback, TaskResult) else feedback
    return "continue", {"input": loop_input, "feedback": said}


@TASK_FORMS.special_form(
    DIRECTOR_EVALUATOR.name,
    check=walk_all_clauses,
    signature=(
        "(director-evaluator-loop (max-iterations n) (initial-director-input x) (director f)"
        " [(executor f)] (evaluator f) [(controller f)])"
    ),
    doc="""Plan, act and judge in rounds until the controller stops or the rounds run out.

    Each iteration i (from 1): plan = `(director input i)`, out = `(executor plan i)` (out is
    plan without an executor), feedback = `(evaluator out plan i)`, then `(controller feedback
    plan out i)` gives `(list 'stop value)` or `(list 'continue next-input)`. The default
    controller stops with out when the evaluation succeeded (a result whose notes or parsed
    content say success, a script that exited 0, any other true value), else continues with
    `{"input" input "feedback" ...}`. Phases are called by position: a phase that is a task takes
    those arguments as its inputs, in declared order, as many as it declares (a director task's
    second input receives i). For a task director that should see the evaluator's feedback, use
    `refine`. When the iterations run out the value is the last out;
    0 iterations give nil. `*loop-config*` holds the settings during every phase call; a
    phase's error or FAILED task result ends the loop, naming the phase and iteration.

    (director-evaluator-loop
      (max-iterations 5)
      (initial-director-input 1)
      (director (lambda (n i) (* n 2)))
      (evaluator (lambda (out plan i) (> out 10)))
      (controller (lambda (ok plan out i) (if ok (list 'stop out) (list 'continue out)))))
    ;; => 16
    """,
)
def compile_director_evaluator_loop(
    form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler
) -> Code:
    """plan = (director input i); out = (executor plan i); fb = (evaluator out plan i); decide."""
    clauses = compile_clauses(form, DIRECTOR_EVALUATOR, scope, c)

    def run(env: list[Any]) -> Value:
        loop = LoopRun(DIRECTOR_EVALUATOR, clauses, env)
        values = loop.values

        def iteration(loop_input: Value, i: int) -> tuple[str, Value, Value]:
            plan = loop.call("director", [loop_input, i], i)
            out = loop.call("executor", [plan, i], i) if "executor" in values else plan
            feedback = loop.call("evaluator", [out, plan, i], i)
            if "controller" in values:
                return (*loop.decide([feedback, plan, out, i], i), out)
            return (*default_decision(feedback, loop_input, out), out)

        return loop.iterate(c, values["initial-director-input"], iteration)

    return run


@TASK_FORMS.special_form(
    ITERATIVE.name,
    check=walk_all_clauses,
    signature=(
        '(iterative-loop (max-iterations n) (initial-input x) (test-command "cmd") (executor f)'
        " (validator f) (controller f))"
    ),
    doc="""Act, validate with a command, and let the controller decide, in rounds.

    Each iteration i (from 1): out = `(executor input i)`, check = `(validator test-command i)`
    (typically running the command with `system:run_script`), then `(controller out check input
    i)` gives `(list 'stop value)` or `(list 'continue next-input)`. When the iterations run out
    the value is the last out; 0 iterations give nil. `*loop-config*` holds the settings during
    every phase call.

    (iterative-loop
      (max-iterations 3)
      (initial-input "draft")
      (test-command "true")
      (executor (lambda (text i) (string-append text "!")))
      (validator (lambda (cmd i) (system:run_script (command cmd))))
      (controller (lambda (out check text i)
                    (if (= (get-field check "exitCode") 0) (list 'stop out) (list 'continue out)))))
    ;; => "draft!"
    """,
)
def compile_iterative_loop(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    """out = (executor input i); val = (validator test-command i); (controller out val input i)."""
    clauses = compile_clauses(form, ITERATIVE, scope, c)

    def run(env: list[Any]) -> Value:
        loop = LoopRun(ITERATIVE, clauses, env)
        command = loop.values["test-command"]
        if not isinstance(command, str):
            got = to_repr(command)
            raise TypeError_(
                f"{ITERATIVE.name}: test-command must be a string, got {got}", clauses.at("test-command")
            )

        def iteration(loop_input: Value, i: int) -> tuple[str, Value, Value]:
            out = loop.call("executor", [loop_input, i], i)
            verdict = loop.call("validator", [command, i], i)
            return (*loop.decide([out, verdict, loop_input, i], i), out)

        return loop.iterate(c, loop.values["initial-input"], iteration)

    return run
