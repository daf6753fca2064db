"""The REPL without a terminal: lines from a pipe (or a dumb terminal) through the same Session."""

from __future__ import annotations

import sys
from typing import TextIO

from ..diagnostics import INTERRUPTED
from .replies import Failed, Incomplete, Printed, Quit, Reply
from .session import Session

PROMPT, CONTINUATION = "sexp> ", "  ... "


def show(reply: Reply) -> None:
    """Write a reply: values on stdout, errors on stderr."""
    if isinstance(reply, Printed) and reply.text:
        sys.stdout.write(reply.text + "\n")
    elif isinstance(reply, Failed):
        sys.stdout.flush()
        sys.stderr.write(reply.text + "\n")
    sys.stdout.flush()
    sys.stderr.flush()


def run_lines(session: Session, lines: TextIO, prompt: bool = False) -> int:
    """Submit lines as they come, joining those of a form that is still open; 0 at the end."""
    pending = ""
    while True:
        if prompt:
            sys.stderr.write(CONTINUATION if pending else PROMPT)
            sys.stderr.flush()
        try:
            line = lines.readline()
        except KeyboardInterrupt:  # Ctrl-C clears the input
            pending = ""
            sys.stderr.write("\n")
            continue
        if not line:
            break
        pending += line
        try:
            reply = session.submit(pending)
        except KeyboardInterrupt:
            reply = Failed(INTERRUPTED)
        if isinstance(reply, Incomplete):
            continue
        pending = ""
        if isinstance(reply, Quit):
            return 0
        show(reply)
    if pending.strip():  # the input ended inside a form: say where it was left open
        show(session.submit(pending, final=True))
    return 0
