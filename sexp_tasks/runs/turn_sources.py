"""Where each recorded model turn's answer came from, as `sexp trace` marks it (SPEC §11.2):
`paid` (sent now), `reused` (`--reuse RUN_ID`), `cached` (`--cache`) or `replayed` (a cassette).

A turn keeps its source in its notes' reply (tasks/journaled_steps.py); a turn recorded before
sources were kept was paid for. The text trace marks only the turns not paid for (the plain case
needs no mark, and a line's end stays its preview); `--json` gives every turn's."""

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


def sources_mark(turns: list[dict[str, Any]]) -> str:
    """What ends a task's trace line when some of its turns were not paid for: their sources,
    one a turn in order (`  [reused]`, `  [paid reused]`); "" when every turn was paid."""
    sources = [turn_source(turn) for turn in turns]
    if all(source == PAID for source in sources):
        return ""
    return f"  [{' '.join(sources)}]"


def answer_mark(turn: dict[str, Any]) -> str:
    """What follows a turn's `answer:` label in `sexp trace --full`: ` reused`, ` cached`,
    ` replayed`, or nothing for a paid turn."""
    source = turn_source(turn)
    return "" if source == PAID else f" {source}"
