"""Where each recorded model turn's answer came from, as `sexp trace` marks it (SPEC §11.2):
`paid` (sent now), `reused` (`--reuse RUN_ID`), `cached` (`--cache`) or `replayed` (a cassette).

A turn keeps its source in its notes' reply (tasks/journaled_steps.py); a turn recorded before
sources were kept was paid for. The text trace marks the sources only in a run that reused or
cached some turn (the plain case needs no mark, and a line's end stays its preview); `--json`
gives every turn's."""

from __future__ import annotations

import json
from typing import Any

from ..handler.model_request import ANSWER_SOURCES

PAID = "paid"


def turn_source(turn: dict[str, Any]) -> str:
    """The source of a recorded turn's answer (its reply's `source`); `paid` when it kept none
    (a turn recorded before sources were kept), or garbage."""
    try:
        record = json.loads(turn.get("result") or "")
    except (ValueError, TypeError):
        return PAID
    notes = record.get("notes") if isinstance(record, dict) else None
    reply = notes.get("reply") if isinstance(notes, dict) else None
    source = reply.get("source") if isinstance(reply, dict) else None
    return source if source in ANSWER_SOURCES else PAID


def sources_mark(turns: list[dict[str, Any]], every: bool = False) -> str:
    """What ends a task's trace line: its turns' sources, one a turn in order (`  [reused]`,
    `  [paid reused]`). Only when some turn was not paid for, or every: when some turn of the run
    was not (then a paid task says so too, `  [paid]`); "" for a task with no turns."""
    sources = [turn_source(turn) for turn in turns]
    if not sources or (not every and all(source == PAID for source in sources)):
        return ""
    return f"  [{' '.join(sources)}]"


def some_not_paid(turns: dict[str, list[dict[str, Any]]]) -> bool:
    """Whether any turn of a run (its turns by task step) was answered without being paid for."""
    return any(turn_source(turn) != PAID for listed in turns.values() for turn in listed)


def answer_mark(turn: dict[str, Any]) -> str:
    """What follows a turn's `answer:` label in `sexp trace --full`: ` reused`, ` cached`,
    ` replayed`, or nothing for a paid turn."""
    source = turn_source(turn)
    return "" if source == PAID else f" {source}"
