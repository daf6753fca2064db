"""Session.stream yields an answer that was not sent for — replayed from a cassette, or from the
answer cache — as one piece before the TaskResult (review of issue 21: it yielded no text at all,
so a UI built from the pieces showed nothing in a replayed test)."""

from __future__ import annotations

from pathlib import Path

from llm_server import LLMServer, Scripted
from test_session_stream import GREET, PIECES, project

import sexp_tasks
from sexp_tasks import TaskResult

__all__ = ["project"]  # the fixture, used by name


def pieces_and_result(session: sexp_tasks.Session) -> tuple[list[str], TaskResult]:
    *pieces, result = session.stream("greet", name="Ada")
    assert isinstance(result, TaskResult)
    return [str(piece) for piece in pieces], result


def test_a_replayed_answer_streams_as_one_piece(project: Path, server: LLMServer) -> None:
    server.script(Scripted(content="".join(PIECES), pieces=PIECES))
    cassette = str(project / "greet.cassette.jsonl")
    recording = sexp_tasks.Session(quiet=True, record=cassette)
    recording.eval(GREET)
    live, result = pieces_and_result(recording)
    assert live == PIECES and result.content == "".join(PIECES)
    sent = len(server.requests)
    replaying = sexp_tasks.Session(quiet=True, replay=cassette)
    replaying.eval(GREET)
    replayed, again = pieces_and_result(replaying)
    assert replayed == ["".join(PIECES)] and again.content == result.content
    assert len(server.requests) == sent  # nothing sent


def test_a_cached_answer_streams_as_one_piece(project: Path, server: LLMServer) -> None:
    server.script(Scripted(content="".join(PIECES), pieces=PIECES))
    first = sexp_tasks.Session(quiet=True, cache=True)
    first.eval(GREET)
    assert pieces_and_result(first)[0] == PIECES
    second = sexp_tasks.Session(quiet=True, cache=True)
    second.eval(GREET)
    cached, result = pieces_and_result(second)
    assert cached == ["".join(PIECES)] and result.status == "COMPLETE"
    assert len(server.requests) == 1
