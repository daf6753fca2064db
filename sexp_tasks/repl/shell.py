"""The REPL on a terminal: prompt_toolkit around a Session (the one module that imports it).

Pygments colours the input, Tab completes from the session's names (and a call's keyword
arguments), the line under the input shows the signature of the call being typed, Enter submits
only when the session says the input is complete (else it starts a continuation line), history
persists in $XDG_STATE_HOME/sexp/history, Ctrl-C clears the input and Ctrl-D on an empty line
leaves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.styles import Style
from pygments.lexers.lisp import SchemeLexer

from .. import __version__
from ..diagnostics import INTERRUPTED, report, warning_line
from .lines import CONTINUATION, PROMPT, show
from .replies import Failed, Quit
from .session import Session


def history_path() -> Path:
    """$XDG_STATE_HOME/sexp/history, or ~/.local/state/sexp/history."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "sexp" / "history"


class NameCompleter(Completer):
    """Completions from the session: names (each with its signature beside it, shown when the
    menu draws it), a call's keyword arguments, commands, and files after `:load`."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word, candidates = self.session.completions(document.text_before_cursor)
        for candidate in candidates:
            yield Completion(candidate, start_position=-len(word), display_meta=self._signature(candidate))

    def _signature(self, name: str) -> Callable[[], str]:
        return lambda: self.session.signature_of(name)


def _history() -> History:
    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError as err:
        report(warning_line(f"history not kept: cannot write '{path}': {err.strerror}"))
        return InMemoryHistory()
    return FileHistory(str(path))


def _key_bindings(session: Session) -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        """Submit a complete input; otherwise go on to a continuation line (indented, unless
        inside a string)."""
        buffer = event.current_buffer
        if buffer.complete_state is not None:  # Enter picks the highlighted completion
            buffer.complete_state = None
            return
        if session.is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text(session.line_break(buffer.document.text_before_cursor))

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        """Meta-Enter: a new line even when the input is complete."""
        event.current_buffer.insert_text("\n")

    return bindings


def _signature_bar(session: Session) -> Callable[[], str]:
    """The bottom toolbar: the signatures of the call being typed, blank outside a call."""

    def signature() -> str:
        return session.signature(get_app().current_buffer.document.text_before_cursor)

    return signature


def _continuation(width: int, line_number: int, wrap_count: int) -> StyleAndTextTuples:
    return [("class:prompt.continuation", CONTINUATION.rjust(width))]


def run_shell(session: Session) -> int:
    """Read, evaluate and show until :quit or Ctrl-D; the exit status (0)."""
    prompt: PromptSession[str] = PromptSession(
        message=PROMPT,
        multiline=True,
        prompt_continuation=_continuation,
        lexer=PygmentsLexer(SchemeLexer),
        completer=NameCompleter(session),
        complete_while_typing=False,
        history=_history(),
        key_bindings=_key_bindings(session),
        bottom_toolbar=_signature_bar(session),
        style=Style.from_dict({"bottom-toolbar": "noreverse"}),  # a plain line, blank when empty
    )
    print(f"sexp {__version__}  (:help for commands, Ctrl-D to leave)")
    while True:
        try:
            text = prompt.prompt()
        except KeyboardInterrupt:  # Ctrl-C: the input is dropped, the session goes on
            continue
        except EOFError:  # Ctrl-D on an empty line
            return 0
        try:
            reply = session.submit(text, final=True)
        except KeyboardInterrupt:
            reply = Failed(INTERRUPTED)
        if isinstance(reply, Quit):
            return 0
        show(reply)
