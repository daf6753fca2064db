"""The composition root: one Runtime is the language core (lang/interpreter.py: globals,
primitives, prelude, compiler) with the task system and the memory system installed in it, the
services its primitives ask for, and the recording of runs."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .config import Settings
from .diagnostics import log_line, warning_line
from .errors import FileError, OutputClosed, RunError, SexpError
from .lang.check import check_forms
from .lang.compiler import Compiler
from .lang.documentation import Doc
from .lang.environment import TOP_FRAME
from .lang.interpreter import Interpreter
from .lang.prelude import LazyDefinitions
from .lang.printer import to_json_value
from .lang.values import Code, Value
from .memory.memory_primitives import MEMORY_PRIMITIVES
from .memory.system import MemorySystem
from .process.workspace import READ_LIMIT, Workspace
from .results import TaskResult
from .runs.answers import ReusedTurns
from .runs.journal import Journal, new_run_id, program_hash
from .runs.store import Store, kept_json
from .syntax.nodes import Node
from .syntax.reader import read
from .tasks.forms import install as install_tasks
from .tasks.forms.checks import TaskChecks
from .tasks.runner import TaskSystem
from .tasks.task_services import TaskServices

# An input (--set, a batch's column) never hides a built-in (SPEC §11.1); the warning says so.
NOT_BOUND = "is not bound (a built-in has that name)"


class Runtime(TaskServices):
    """A session of the language: definitions persist across `run_source` calls; what its
    primitives may ask of it is TaskServices (the core's Services and the task system's needs)."""

    def __init__(
        self,
        settings: Settings | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
        load_templates: bool = True,
        program: Path | None = None,
    ) -> None:
        """program: the file the session runs or checks, whose own tasks/ directory is loaded too."""
        self.settings = settings or Settings()
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.workspace = Workspace(self.settings.workspace)
        self._loading: list[Path] = []
        self._run_lock: object | None = None  # held while this process records a run
        self._memory_store: Store | None = None  # the store fresh context reads when not recording
        self._run_time: tuple[float, float | None] = (0.0, 0.0)  # the recorded run's start and end
        self.tasks = TaskSystem(self.settings, self.warn, self.err)
        core = _language(self.settings, self.tasks, self)
        self.globals, self.compiler, self.library = core.globals, core.compiler, core.prelude
        self.documentation = core.documentation  # help, `sexp doc`
        self._core_names = frozenset(self.globals.values.keys() | self.globals.pending.keys())  # bind_inputs
        self.tasks.memory_query = self.relevant_files
        if load_templates:
            self.tasks.load_templates(program=program)

    # The pipeline ------------------------------------------------------------------------
    def run_source(self, text: str, origin: str = "<input>") -> Value:
        """Read every form in text, compile them all, then run them in order; the last value."""
        return self.run_forms(read(text, origin))

    def run_forms(self, forms: list[Node]) -> Value:
        """Compile every form before running any, so a malformed form stops the program early."""
        return self._execute([self.compiler.compile(form, None) for form in forms])

    def check(self, forms: list[Node]) -> list[SexpError]:
        """`sexp check`: every problem found in a program's forms without running them, in
        source order (the task system checks calls of tasks)."""
        return _checker(self.compiler, self.library, self.tasks)(forms)

    @staticmethod
    def _execute(codes: list[Code]) -> Value:
        value: Value = None
        for code in codes:
            value = code(TOP_FRAME)
        return value

    def run_file(self, path: Path, text: str | None = None) -> Value:
        """Run a file (its text given or read); `load`s inside resolve paths from its directory."""
        if text is None:
            text = path.read_text(encoding="utf-8")
        self._loading.append(path.resolve())
        try:
            return self.run_source(text, str(path))
        finally:
            self._loading.pop()

    def run_recorded(
        self,
        path: Path,
        text: str,
        inputs: dict[str, Value],
        resume: str | None = None,
        force: bool = False,
        reuse: str | None = None,
    ) -> Value:
        """Run a program file as a recorded run (or resume one); a program that does not read
        or compile is no run. reuse: a new run whose model turns that ask what a turn of the run
        reuse recorded asked take that turn's answer (SPEC §11.2)."""
        codes = [self.compiler.compile(form, None) for form in read(text, str(path))]
        self.tasks.answers.reuse = None if reuse is None else self._reused_turns(reuse)
        self._run_time = (time.monotonic(), None)
        if resume is None:
            self.start_run(str(path), text, inputs)
        else:
            self.resume_run(resume, str(path), text, inputs, force)
        status = "failed"
        self._loading.append(path.resolve())
        try:
            value = self._execute(codes)
            status = "failed" if isinstance(value, TaskResult) and value.failed else "completed"
            return value
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self._loading.pop()
            self.tasks.answers.reuse = None  # later runs of the session reuse nothing
            self.end_run(status)
            self._run_time = (self._run_time[0], time.monotonic())

    def _reused_turns(self, run_id: str) -> ReusedTurns:
        """The completed model turns of run_id, read from the store (a RunError for a run it
        does not hold, as --resume's)."""
        store = self._open_store(create=False)
        try:
            turns = ReusedTurns.of_run(store, run_id)
        finally:
            store.close()
        if turns is None:
            raise RunError(f"unknown run '{run_id}' in {self.settings.store}")
        return turns

    # Recording ----------------------------------------------------------------------------
    def start_run(self, program: str, text: str, inputs: dict[str, Value], run_id: str | None = None) -> str:
        """Record this run in the store from now on, under run_id (a new id by default: a batch
        chooses its rows'); its id (also printed as `run: <id>`)."""
        store = self._open_store(create=True)
        run_id = run_id or new_run_id()
        self._run_lock = store.hold_run(run_id)
        with self._letting_go_on_error():
            store.begin_run(run_id, program, program_hash(text), _json_inputs(inputs))
            self.tasks.journal = Journal(store, run_id, root=_program_root(program))
        self._announce(run_id)
        return run_id

    def resume_run(self, run_id: str, program: str, text: str, inputs: dict[str, Value], force: bool) -> None:
        """Record into run_id again, answering its completed steps from the store.

        The run's recorded --set inputs are bound again unless new ones are given; a changed
        program or changed inputs are refused unless forced (and then recorded as the run's)."""
        store = self._open_store(create=False)
        run = store.run(run_id)
        if run is None:
            raise RunError(f"unknown run '{run_id}' in {self.settings.store}")
        digest = program_hash(text)
        if run["program_hash"] != digest and not force:
            raise RunError(
                f"the program has changed since run {run_id} was recorded; resume anyway with --force"
                " (steps whose requests changed will run again)"
            )
        recorded = json.loads(run["inputs"] or "{}")
        given = _json_inputs(inputs)
        if given and json.loads(kept_json(given)) != recorded and not force:  # as the store keeps them
            raise RunError(
                f"run {run_id} was recorded with other --set inputs ({run['inputs']}); give the same ones,"
                " none (to reuse them), or --force"
            )
        if not given:
            for name, value in recorded.items():  # JSON values are the language's values as they are
                self.define(name, value)
        self._run_lock = store.hold_run(run_id)
        with self._letting_go_on_error():
            if store.run(run_id) is None:  # pruned while this process looked at it
                raise RunError(f"unknown run '{run_id}' in {self.settings.store}")
            store.reopen_run(run_id, digest if force else None, given if force and given else None)
            self.tasks.journal = Journal(store, run_id, resuming=True, root=_program_root(program))
            self.tasks.seed_spending(float(store.run_cost(run_id)))
        self._announce(run_id)

    def abandon_run(self) -> None:
        """From another thread, when the evaluating one cannot stop in time (blocked in C): mark
        the run interrupted, on a connection of its own, if nothing else has, and let go of its
        lock (the process exits now, without waiting for that thread)."""
        journal = self.tasks.journal
        if journal is None:
            return

        try:
            store = Store(journal.store.path, create=False)
            run = store.run(journal.run_id)
            if run is not None and run["status"] == "running":
                store.end_run(journal.run_id, "interrupted")
                self._resume_hint(journal.run_id, run["program"])
            store.close()
        except SexpError:
            pass  # the store is unusable now; the run stays resumable all the same
        finally:
            self.release_run_lock()

    @property
    def run_seconds(self) -> float:
        """The wall time of the recorded run, so far when it has not ended (`sexp run`'s summary)."""
        began, ended = self._run_time
        return (time.monotonic() if ended is None else ended) - began

    def _open_store(self, create: bool) -> Store:
        return Store(self.settings.store, create=create)

    def _announce(self, run_id: str) -> None:
        if not self.settings.quiet:
            self.err.write(f"run: {run_id}\n")
            self.err.flush()

    def end_run(self, status: str) -> None:
        """Mark the recorded run completed, failed or interrupted."""
        journal = self.tasks.journal
        if journal is not None:
            try:
                journal.store.end_run(journal.run_id, status)
            finally:
                self.release_run_lock()  # the run is over: another session may resume it
            if status == "interrupted":
                self._resume_hint(journal.run_id, (journal.store.run(journal.run_id) or {}).get("program"))

    def release_run_lock(self) -> None:
        """Let go of the recorded run's lock (held since the run began or resumed), if any; its
        file goes with it."""
        lock, self._run_lock = self._run_lock, None
        getattr(lock, "close", lambda: None)()

    @contextmanager
    def _letting_go_on_error(self) -> Iterator[None]:
        """The run's lock is let go of when recording it cannot begin (the store refused a write)."""
        try:
            yield
        except BaseException:
            self.release_run_lock()
            raise

    def _resume_hint(self, run_id: str, program: str | None) -> None:
        if not self.settings.quiet:
            self.err.write(f"resume with: sexp run --resume {run_id} {program or 'FILE'}\n")
            self.err.flush()

    def relevant_files(self, query: str, limit: int) -> list[str] | None:
        """The Memory System's files for a query (lexical ranking), None when there is no index."""
        journal = self.tasks.journal
        if journal is not None:
            store = journal.store
        elif self._memory_store is not None:
            store = self._memory_store
        elif Path(self.settings.store).is_file():
            store = self._memory_store = Store(self.settings.store, create=False)  # opened once
        else:
            return None
        memory = MemorySystem(store, self.settings.workspace)
        if memory.size() == 0:
            return None
        return [found.path for found in memory.relevant(query, limit)]

    def define(self, name: str, value: Value) -> None:
        """Bind a global (for --set)."""
        self.globals.define(name, value)

    def built_in_names(self) -> set[str]:
        """The names bound before anything ran: special forms, primitives, library procedures
        (compiled or not yet) and templates; not what a session or program defined since."""
        names = {*self.compiler.forms, *self._core_names}
        for source in self.globals.name_sources:
            names.update(source())
        return names

    def bind_inputs(self, pairs: list[tuple[str, Value]], flag: str = "--set") -> dict[str, Value]:
        """Bind each (name, value) as a global, except a built-in's name (SPEC §11.1: an input never
        hides `format` or `get` from the program and the library), which gets one warning; the
        pairs bound."""
        built_ins = self.built_in_names() if pairs else set()
        bound = {}
        for name, value in pairs:
            if name in built_ins:
                self.warn(f"{flag} '{name}' {NOT_BOUND}")
            else:
                self.define(name, value)
                bound[name] = value
        return bound

    def docs(self) -> dict[str, Doc]:
        """Every documented name bound now, sorted: the special forms, primitives and library
        procedures bound at start-up and the loaded templates (`sexp doc`, the docs/ reference)."""
        return self.documentation.all()

    # Services primitives use -------------------------------------------------------------
    def write_output(self, text: str) -> None:
        """What `print` writes; a closed or full output ends the command (OutputClosed)."""
        try:
            self.out.write(text)
            self.out.flush()
        except OSError as err:
            raise OutputClosed(err) from None

    def log(self, message: str) -> None:
        _say(self.err, self.settings, log_line(message))

    def warn(self, message: str) -> None:
        _say(self.err, self.settings, warning_line(message))

    def read_file(self, path: str) -> str:
        return self.workspace.read_text(path)

    def write_file(self, path: str, text: str) -> str:
        return self.workspace.write_text(path, text)

    def load(self, path: str) -> Value:
        """Run a file of the workspace (relative to the file loading it), confined like read-file."""
        return self.run_file(*self.loadable(path))

    def loadable(self, path: str) -> tuple[Path, str]:
        """The path and text of the file (load path) would run: (load)'s and the REPL's
        `:load`'s one way to a file, confined like read-file; a FileError for one it may not run."""
        base = self._loading[-1].parent if self._loading else Path.cwd()
        target = self.workspace.resolve(path, "load", base)
        if not target.exists():
            raise FileError(f"load: no such file '{path}' (looked in {base})")
        text, unread = self.workspace.read_prefix(path, READ_LIMIT, "load", base)
        if unread:
            raise FileError(f"load: '{path}' is larger than {READ_LIMIT} bytes")
        # named in errors as given when loaded from the top (relative to the working directory)
        return (target if self._loading else Path(path)), text


def program_checker(
    settings: Settings, program: Path | None = None, err: TextIO | None = None
) -> Callable[[Sequence[Node]], list[SexpError]]:
    """`sexp check` of one program: every problem found in its forms without running them, in
    source order. Builds only what checking reads, not a Runtime: the language core with the task
    system's forms installed, and the templates the program sees (its own tasks/ directory too),
    whose warnings go to err unless quiet."""
    stream = err or sys.stderr
    tasks = TaskSystem(settings, lambda message: _say(stream, settings, warning_line(message)), stream)
    core = _language(settings, tasks, None)
    tasks.load_templates(program=program)
    return _checker(core.compiler, core.prelude, tasks)


def _checker(
    compiler: Compiler, prelude: LazyDefinitions, tasks: TaskSystem
) -> Callable[[Sequence[Node]], list[SexpError]]:
    """Checking in one language: its forms, its prelude, and the task system's call checks."""
    checks = [TaskChecks(tasks.library, compiler.forms, tasks.python_tools)]
    return lambda forms: check_forms(forms, compiler, prelude, checks)


def _language(settings: Settings, tasks: TaskSystem, ctx: TaskServices | None) -> Interpreter:
    """The language a program runs (or is checked) in: the core with the task system and the
    memory system installed; ctx is what their primitives ask (None when nothing runs)."""
    core = Interpreter(ctx, settings.recursion_limit)
    install_tasks(tasks, core, ctx)
    MEMORY_PRIMITIVES.install(core.globals, ctx)
    return core


def _say(err: TextIO, settings: Settings, line: str) -> None:
    """A warning or log line on err at once, unless quiet."""
    if not settings.quiet:
        err.write(line + "\n")
        err.flush()


def _json_inputs(inputs: dict[str, Value]) -> dict[str, object]:
    return {name: to_json_value(value) for name, value in inputs.items()}


def _program_root(program: str) -> str | None:
    """The directory step keys are relative to: the program file's, None for <eval> and <repl>."""
    return None if program.startswith("<") else os.path.dirname(os.path.realpath(program))
