"""The composition root: one Runtime is the language core (lang/interpreter.py: globals,
primitives, prelude, compiler) with the task system and the memory system installed in it, the
services its primitives ask for, and the recording of runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cached_property
from pathlib import Path
from typing import TextIO

from .config import Settings, override
from .diagnostics import log_line, warning_line
from .errors import FileError, OutputClosed, SexpError
from .handler.tracing import NO_TRACER
from .lang.check import check_forms
from .lang.compiled_programs import CompiledPrograms
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
from .runs.recording import Run
from .runs.store import Store
from .runs.telemetry import Telemetry, open_telemetry
from .syntax.nodes import Node
from .syntax.reader import read
from .tasks.forms import install as install_tasks
from .tasks.forms.checks import TaskChecks
from .tasks.library import TaskLibrary
from .tasks.live_region import LiveRegion, is_terminal, live_region
from .tasks.mcp_services import checked_tool_names
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
        library: TaskLibrary | None = None,
        telemetry: Telemetry | None = None,
        show_answers: bool = False,
    ) -> None:
        """program: the file the session runs or checks, whose own tasks/ directory is loaded too;
        library: templates already loaded (a batch's), of which the session gets a copy of its own
        to add to (defatom), instead of none yet; telemetry: the exporter of spans a batch's rows
        share (default: the session's own, when the settings ask for one); show_answers: draw
        model answers as they arrive (with the stream setting, on a terminal): the command line's
        and the REPL's display, not the Python API's, whose program owns its terminal."""
        self.settings = settings or Settings()
        self._own_telemetry = telemetry is None
        self.telemetry = telemetry if telemetry is not None else open_telemetry(self.settings, self.warn)
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._root = os.path.abspath(self.settings.workspace)  # resolved when a file needs it (workspace)
        self._loading: list[Path] = []  # the files running, absolute; resolved when a `load` needs one
        self._memory_store: Store | None = None  # the store fresh context reads when not recording
        self.run: Run | None = None  # the recorded run this session ran last (or runs now)
        # The terminal's bottom lines, where bars and answers in flight are drawn (None when err is
        # no terminal, or quiet); answers stream there with the stream setting (SPEC §11.3).
        shown = is_terminal(self.err) and not self.settings.quiet
        self.live: LiveRegion | None = live_region(self.err) if shown else None
        streams = self.live.open if self.live is not None and show_answers and self.settings.stream else None
        own = library.copy(self.warn) if library is not None else None
        self.tasks = TaskSystem(
            self.settings,
            self.warn,
            self.err,
            library=own,
            memory_query=self.relevant_files,
            open_stream=streams,
            tracer=self.telemetry.tracer if self.telemetry is not None else NO_TRACER,
        )
        core = _language(self.settings, self.tasks, self)
        self.globals, self.compiler, self.library = core.globals, core.compiler, core.prelude
        self.documentation = core.documentation  # help, `sexp doc`
        self._core_names = frozenset(self.globals.values.keys() | self.globals.pending.keys())  # bind_inputs
        self._programs = CompiledPrograms(self.compiler)  # run_recorded's: a batch's rows run one program
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
        self._loading.append(path.absolute())
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
        run: Run | None = None,
        *,
        reuse: str | None = None,
        then: Callable[[Value], None] | None = None,
    ) -> Value:
        """Run a program file as a recorded run (or resume one): run (a batch row's), else one
        announced on stderr with the session's budget and cassette (`new_run`). A program that
        does not read or compile is no run. reuse: a recorded run whose answers this new run's
        model turns take when they ask what it asked (SPEC §11.2). then: called with the program's
        value inside the run (a batch's scorer: batching/scoring.py)."""
        codes = self._programs.codes(text, str(path), self.tasks.settings)  # run_script keeps the settings
        run = self.run = run or self.new_run()
        program, given = str(path), _json_inputs(inputs)
        if resume is None:
            run.begin(program, text, given, reuse)
        else:
            for name, value in run.resume(resume, program, text, given, force).items():
                self.define(name, value)  # the recorded inputs: JSON values are the language's as they are
        status = "failed"
        self._loading.append(path.absolute())
        try:
            with run.active(), self.tasks.tracer.run(run.run_id or "", program) as traced:
                value = self._execute(codes)
                if then is not None:
                    then(value)
                status = "failed" if isinstance(value, TaskResult) and value.failed else "completed"
                traced.note({"sexp.status": status, "sexp.cost_usd": run.budget.spent})
            return value
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self._loading.pop()
            run.end(status)
            self.tasks.mcp.stop()  # kept for the run, stopped at its end (SPEC §11.4)
            if self.telemetry is not None:
                self.telemetry.flush()  # the run's spans go now, not at some later batch's timer

    def close_telemetry(self) -> None:
        """Flush and shut down the session's exporter of spans, when it has its own (a batch row's
        is the batch's to close); a failed export is one warning."""
        if self.telemetry is not None and self._own_telemetry:
            self.telemetry.close()

    def new_run(self) -> Run:
        """A run of this session, recorded in its store: spending from the session's budget,
        with its cassette; `run: <id>` and the resume hint on stderr unless quiet."""
        outside = self.tasks.unrecorded
        return Run(
            outside.budget,
            outside.cassette,
            lambda create: Store(self.settings.store, create=create),
            str(self.settings.store),
            announce=lambda run_id: _say(self.err, self.settings, f"run: {run_id}"),
            interrupted=lambda run_id, program: _say(
                self.err, self.settings, f"resume with: sexp run --resume {run_id} {program or 'FILE'}"
            ),
        )

    def abandon_run(self) -> None:
        """From another thread, when the evaluating one cannot stop in time: erase the answers
        still shown live (their calls may not have unwound yet), mark the recorded run interrupted
        and let go of its lock (recording.Run.abandon)."""
        if self.live is not None:
            self.live.drop_answers()
        if self.run is not None:
            self.run.abandon()

    def relevant_files(self, query: str, limit: int) -> list[str] | None:
        """The Memory System's files for a query (lexical ranking), None when there is no index."""
        store = self.tasks.current_run().store
        if store is not None:
            pass  # the recorded run's
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

    def override_settings(self, **given: object) -> Settings:
        """Settings given by name, checked and ranking as a command's flags do (config.override),
        for the task calls to come (the REPL's `:model` is `--model`); the settings now in force.
        What was built from the settings at the start (the workspace, the mock replies, the
        recursion limit) keeps them."""
        self.settings = override(self.settings, given)
        self.tasks.use_settings(self.settings)
        return self.settings

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
            with self._above_live_region():
                self.out.write(text)
                self.out.flush()
        except OSError as err:
            raise OutputClosed(err) from None

    def log(self, message: str) -> None:
        with self._above_live_region():
            _say(self.err, self.settings, log_line(message))

    def warn(self, message: str) -> None:
        with self._above_live_region():
            _say(self.err, self.settings, warning_line(message))

    def _above_live_region(self) -> AbstractContextManager[None]:
        """What is written now goes above the bars and answers drawn live (erased, then drawn below)."""
        return self.live.cleared() if self.live is not None else nullcontext()

    @cached_property
    def workspace(self) -> Workspace:
        """The workspace, resolved when a file is first read, written or loaded (a batch row's
        program seldom touches one)."""
        return Workspace(self._root)

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
        base = self._loading[-1].resolve().parent if self._loading else Path.cwd()
        target = self.workspace.resolve(path, "load", base)
        if not target.exists():
            raise FileError(f"load: no such file '{path}' (looked in {base})")
        text, unread = self.workspace.read_prefix(path, READ_LIMIT, "load", base)
        if unread:
            raise FileError(f"load: '{path}' is larger than {READ_LIMIT} bytes")
        # named in errors as given when loaded from the top (relative to the working directory)
        return (target if self._loading else Path(path)), text


def program_checker(
    settings: Settings,
    program: Path | None = None,
    err: TextIO | None = None,
    server_tools: Callable[[str], Collection[str] | None] | None = None,
) -> Callable[[Sequence[Node]], list[SexpError]]:
    """`sexp check` of one program: every problem found in its forms without running them, in
    source order. Builds only what checking reads, not a Runtime: the language core with the task
    system's forms installed, and the templates the program sees (its own tasks/ directory too),
    whose warnings go to err unless quiet. server_tools (server_tool_lister's) lists an MCP
    server's tools; one lister checking several programs asks each server once."""
    stream = err or sys.stderr
    tasks = TaskSystem(settings, lambda message: _say(stream, settings, warning_line(message)), stream)
    core = _language(settings, tasks, None)
    tasks.load_templates(program=program)
    listed = server_tools or server_tool_lister(settings, stream)
    return _checker(core.compiler, core.prelude, tasks, listed)


def server_tool_lister(settings: Settings, err: TextIO | None = None) -> Callable[[str], list[str] | None]:
    """For checks: a declared MCP server's tool names, the server started and stopped to list
    them (each server once per lister); None, with a warning on err, when it cannot be asked."""
    stream = err or sys.stderr
    return checked_tool_names(settings.mcp, lambda message: _say(stream, settings, warning_line(message)))


def _checker(
    compiler: Compiler,
    prelude: LazyDefinitions,
    tasks: TaskSystem,
    server_tools: Callable[[str], Collection[str] | None] | None = None,
) -> Callable[[Sequence[Node]], list[SexpError]]:
    """Checking in one language: its forms, its prelude, and the task system's call checks
    (server_tools, when given, lists an MCP server's tools to check `NAME/tool` names)."""
    checks = [TaskChecks(tasks.library, compiler.forms, tasks.python_tools, tasks.settings.mcp, server_tools)]
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
