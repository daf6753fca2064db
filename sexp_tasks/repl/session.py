"""The REPL session: the core with no terminal in it (SPEC §8).

A Session takes the text the user typed and answers with a Reply: Incomplete while a list or
string is still open, else what to show. Definitions persist in one Runtime across inputs; an
error is rendered with a caret under the input and the session goes on. Commands (`:help`...)
live in commands.py. The shell (shell.py) only reads lines and shows replies.

Recording: each input is its own run, program `<repl>`, recorded in the store only if it makes
a step (calls a task) — the store and the run begin with the first step, so an input like
`(+ 1 2)` leaves nothing behind. `:trace` shows the last run this session recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, TypeVar

from ..config import Settings
from ..diagnostics import INTERRUPTED, error_line, failed_result_line, format_error, format_failure
from ..errors import ReadError, SexpError
from ..lang.deepstack import run_with_deep_stack
from ..lang.printer import to_repr
from ..lang.values import Value
from ..results import TaskResult
from ..runs.recording import Run
from ..runs.store import Store
from ..runtime import Runtime
from ..syntax.reader import read
from .call_at_cursor import keywords, open_call, signature_line
from .commands import COMMANDS, run_command
from .replies import Failed, Incomplete, Printed, Reply

T = TypeVar("T")

ORIGIN = "<repl>"
INTERRUPT_GRACE_SECONDS = 0.5  # how long Ctrl-C waits for an evaluation to unwind before leaving it
# A symbol being typed: the characters symbols are made of (SPEC §2.1).
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+*/<>=!?:.%&^~$")


def is_unfinished(err: ReadError) -> bool:
    """Whether a read error only says the text ended inside a list, a string or after a quote."""
    return err.incomplete


class Session:
    """One REPL session: a Runtime, the inputs' runs, and the commands of §8."""

    def __init__(
        self, settings: Settings | None = None, out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        self.settings = settings or Settings()
        self.out = out
        self.err = err
        self.debug = False
        self.last_run: str | None = None  # the id of the last run this session recorded
        self._store: Store | None = None
        self._store_lock = threading.Lock()
        self.startup_messages: list[str] = []
        self.runtime = self._new_runtime()

    # Lifecycle ------------------------------------------------------------------------------
    def _new_runtime(self) -> Runtime:
        """A fresh Runtime; templates that fail to load are reported and left out (SPEC §9)."""
        runtime = Runtime(self.settings, out=self.out, err=self.err, load_templates=False, show_answers=True)
        self.startup_messages = [format_error(e) for e in runtime.tasks.load_templates(strict=False)]
        self.user_names: list[str] = []  # globals the user's inputs defined, in order
        return runtime

    def reset(self) -> None:
        """Forget every definition: a fresh Runtime with the same settings (and :model)."""
        self.runtime = self._new_runtime()

    def set_model(self, model: str) -> None:
        """The model for every later task call that names none, given as --model gives it."""
        self.settings = self.runtime.override_settings(model=model)

    def close(self) -> None:
        """Release the run store."""
        with self._store_lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def store(self, create: bool) -> Store | None:
        """The run store, opened once; None when there is none and create is false."""
        with self._store_lock:
            if self._store is None:
                if not create and not Path(self.settings.store).is_file():
                    return None
                self._store = Store(self.settings.store)
            return self._store

    # Input ------------------------------------------------------------------------------------
    def is_complete(self, text: str) -> bool:
        """Whether text can be submitted: a command, or forms whose lists and strings all close."""
        if text.lstrip().startswith(":"):
            return True
        try:
            read(text, ORIGIN)
        except ReadError as err:
            return not is_unfinished(err)
        return True

    def line_break(self, before_cursor: str) -> str:
        """What Enter inserts into an input that is not complete: a new line, indented by two
        spaces unless the text before the cursor ends inside a string (whose text it would change)."""
        try:
            read(before_cursor, ORIGIN)
        except ReadError as err:
            if err.in_string:
                return "\n"
        return "\n  "

    def submit(self, text: str, final: bool = False) -> Reply:
        """Evaluate text (or carry out a command) and say what to show.

        Incomplete when text ends inside a list or string, unless final (no more input will
        come), when the reader's error is shown instead.
        """
        stripped = text.strip()
        if not final and not self.is_complete(text):
            return Incomplete()
        undecodable = _not_utf8(text)
        if undecodable:
            return Failed(undecodable)
        if stripped.startswith(":"):
            return run_command(self, stripped)
        return self.evaluate(lambda: self.runtime.run_source(text, ORIGIN), ORIGIN, text)

    def evaluate(self, action: Callable[[], Value], program: str, text: str) -> Reply:
        """Run action as one input: on a deep stack, recorded when it calls a task; its reply."""
        run = self._input_run()
        run.begin_at_first_step(program, text)
        before = dict(self.runtime.globals.values)
        pending = set(self.runtime.globals.pending)
        status = "failed"
        try:
            value = run_interruptibly(lambda: _within(run, action))
            status = "failed" if isinstance(value, TaskResult) and value.failed else "completed"
            return Printed(_echo(value))
        except KeyboardInterrupt:
            status = "interrupted"
            if self.runtime.live is not None:  # a call left unwinding shows nothing under the prompt
                self.runtime.live.drop_answers()
            return Failed(INTERRUPTED)
        except Exception as exc:  # the input's error, or a bug in sexp itself: say so, and go on
            return Failed(format_failure(exc, self.debug))
        finally:
            self._note_definitions(before, pending)
            if run.begun:
                self.last_run = run.run_id
                try:
                    run.end(status)
                except SexpError as err:  # the store went away: the reply still stands
                    self.runtime.warn(f"run {run.run_id} not marked {status}: {err.message}")

    def _input_run(self) -> Run:
        """An input's run: recorded in the session's store from its first step, spending from the
        session's budget, with its cassette; the REPL announces no run."""
        outside = self.runtime.tasks.unrecorded
        return Run(outside.budget, outside.cassette, lambda create: self._open(), str(self.settings.store))

    def _open(self) -> Store:
        store = self.store(create=True)
        assert store is not None  # made when missing
        return store

    def _note_definitions(self, before: dict[str, Value], pending: set[str]) -> None:
        """Remember the globals this input defined or redefined (not prelude names it looked up)."""
        values = self.runtime.globals.values
        looked_up = pending - set(self.runtime.globals.pending)
        for name, value in values.items():
            if name in looked_up or (name in before and before[name] is value):
                continue
            if name in self.user_names:
                self.user_names.remove(name)
            self.user_names.append(name)

    # Completion -------------------------------------------------------------------------------
    def names(self) -> set[str]:
        """Every name worth completing: special forms, primitives, globals, prelude and task names."""
        env = self.runtime.globals
        names = set(self.runtime.compiler.forms) | set(env.values) | set(env.pending)
        for source in env.name_sources:  # task templates, among others
            names.update(source())
        return names

    def completions(self, before_cursor: str) -> tuple[str, list[str]]:
        """The word being typed at the end of before_cursor and what it may become.

        A command at the start of the input completes to command names, `:show`'s and `:doc`'s
        operand to names, `:load`'s to file paths; a `:keyword` inside a call to the keyword
        arguments its operator takes that the call does not give yet, in the order it declares
        them (a task's inputs, a procedure's &key parameters); any other symbol to names, sorted.
        """
        stripped = before_cursor.lstrip()
        if stripped.startswith(":"):
            command, space, operand = stripped.partition(" ")
            if not space:
                return command, sorted(f":{name}" for name in COMMANDS if f":{name}".startswith(command))
            if command == ":load":
                return operand, _paths(operand)
            if command not in (":show", ":doc"):
                return "", []
        prefix = _word_at_end(before_cursor)
        if not prefix or before_cursor.count('"') % 2:  # nothing typed yet, or inside a string
            return prefix, []
        if prefix.startswith(":"):
            return prefix, self._keywords(before_cursor, prefix)
        return prefix, sorted(name for name in self.names() if name.startswith(prefix))

    def _keywords(self, before_cursor: str, prefix: str) -> list[str]:
        """The keyword arguments starting with prefix that the call being typed may still give."""
        call = open_call(before_cursor)
        if call is None:
            return []
        given = call.given - {prefix}
        value = self.runtime.globals.values.get(call.operator)
        found = keywords(self.runtime.documentation, call.operator, value)
        return [key for key in found if key.startswith(prefix) and key not in given]

    def signature(self, before_cursor: str) -> str:
        """The signatures of the operator of the call being typed ('' outside a call, or for an
        undocumented operator): what the shell shows under the input."""
        call = open_call(before_cursor)
        return self.signature_of(call.operator) if call is not None else ""

    def signature_of(self, name: str) -> str:
        """name's signatures on one line, '' when it has none (beside a completed name)."""
        return signature_line(self.runtime.documentation, name)


def _word_at_end(text: str) -> str:
    """The symbol characters that end text ('' when none): a scan back, linear in the word."""
    start = len(text)
    while start and text[start - 1] in _WORD_CHARS:
        start -= 1
    return text[start:]


def _paths(prefix: str) -> list[str]:
    """Files and directories (with a trailing /) whose path starts with prefix."""
    typed = Path(prefix).expanduser()
    directory, stem = (typed, "") if prefix.endswith("/") or not prefix else (typed.parent, typed.name)
    head = prefix[: len(prefix) - len(stem)]
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [
        head + entry.name + ("/" if entry.is_dir() else "")
        for entry in entries
        if entry.name.startswith(stem) and (stem.startswith(".") or not entry.name.startswith("."))
    ]


def _not_utf8(text: str) -> str | None:
    """The error for input holding bytes that are not UTF-8 (read as lone surrogates), else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return error_line("the input is not UTF-8 text", f"{ORIGIN}:{text.count(chr(10), 0, err.start) + 1}")
    return None


def _echo(value: Value) -> str:
    """What the REPL shows for a value: nothing for nil; a FAILED TaskResult's error line too."""
    if value is None:
        return ""
    text = to_repr(value)
    line = failed_result_line(value)
    return f"{text}\n{line}" if line else text


def _within(run: Run, action: Callable[[], T]) -> T:
    """action() as run's code (in the evaluating thread: a new thread starts outside any run)."""
    with run.active():
        return action()


def run_interruptibly(action: Callable[[], T]) -> T:
    """action() on a deep stack; Ctrl-C stops it within a second (SPEC §10.1).

    run_with_deep_stack raises the interrupt in the evaluating thread too and waits a moment for
    it to unwind: Python code stops at once, and a script's wait notices within a tenth of a
    second and kills its process group. An evaluation still blocked in C after that (a model
    call waiting on the network) is abandoned: its thread unwinds when the wait returns, with
    nothing left to do, and the session goes on meanwhile.
    """
    return run_with_deep_stack(action, interrupt_grace=INTERRUPT_GRACE_SECONDS)
