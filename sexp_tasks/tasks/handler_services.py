"""What the task system hands every Handler of a run (HandlerServices): the mock script, the
cassette, the user for ask_user, warnings, its hooks for subtasks, tool calls, model turns and
the cost budget, and the answers a turn may take without a request (reused or cached)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from ..config import Settings, api_base_warning
from ..diagnostics import warning_line
from ..errors import ServiceError
from ..handler.contract import HandlerServices
from ..handler.replay import Cassette, MockScript
from ..runs.answers import AnswerCache, ReadyAnswers

if TYPE_CHECKING:
    from ..runs.store import Store
    from .runner import TaskSystem

# The api_base warnings this process has given: each once, however many runtimes, rows or calls.
_API_BASE_WARNED: set[str] = set()
_API_BASE_LOCK = threading.Lock()


def read_mock_script(settings: Settings, warn: Callable[[str], None]) -> MockScript | ServiceError | None:
    """The --mock-responses script, read before the program runs so that one holding no
    replies is a usage error; a file that cannot be read or used is the error the first
    mock call raises (a program that makes none never needs it)."""
    if not settings.mock_responses:
        return None
    try:
        return MockScript.from_file(settings.mock_responses, warn)
    except ServiceError as err:
        return err


def make_handler_services(
    system: TaskSystem, mock: MockScript | ServiceError | None, warn: Callable[[str], None]
) -> HandlerServices:
    """The run's services, with the mock script read_mock_script gave (raised if it was an error)."""
    settings = system.settings
    if isinstance(mock, ServiceError):
        raise mock
    cassette = system.cassette  # given: one shared by several runs (a batch's rows)
    if cassette is None and settings.record:
        cassette = Cassette(settings.record, "record")
    elif cassette is None and settings.replay:
        cassette = Cassette(settings.replay, "replay")
    return HandlerServices(
        mock=mock or MockScript(),
        cassette=cassette,
        ask_user=lambda question: ask_user(question, system.err),
        warn=warn,
        spawn_subtask=system.spawn_subtask,
        record_tool=system.record_tool,
        record_turn=system.record_turn,
        budget=system.budget,
        python_tools=system.python_tools,  # the same dict: a tool added later is offered too
        # on stderr even when quiet (a batch's rows always are): where the key goes is no chatter
        before_sending=lambda: warn_api_base_once(settings, lambda message: _notice(system.err, message)),
        ready_answer=system.answers.ready,  # the run --reuse names, then the cache (SPEC §11.2)
        keep_answer=system.answers.keep,
    )


def answer_sources(system: TaskSystem) -> ReadyAnswers:
    """Where the run's model turns may be answered from without a request: the run `--reuse`
    names (set per run, on the result) and, with the `cache` setting, the store's answer cache
    (the recorded run's store, or the settings' store opened when first asked)."""
    settings = system.settings
    if not settings.cache:
        return ReadyAnswers()

    def recording() -> Store | None:
        return system.journal.store if system.journal is not None else None

    return ReadyAnswers(AnswerCache(settings.store, recording))


def _notice(err: TextIO, message: str) -> None:
    err.write(warning_line(message) + "\n")
    err.flush()


def warn_api_base_once(settings: Settings, warn: Callable[[str], None]) -> None:
    """Before a model call goes to an api_base a workspace file set (a provider key is set): its
    warning, the first time in this process (SPEC §10.1, issue 19)."""
    message = api_base_warning(settings)
    if message is None:
        return
    with _API_BASE_LOCK:
        if message in _API_BASE_WARNED:
            return
        _API_BASE_WARNED.add(message)
    warn(message)


def ask_user(question: str, err: TextIO) -> str:
    """The ask_user tool on a terminal: the question on the runtime's stderr, the answer from stdin."""
    err.write(f"{question}\n> ")
    err.flush()
    return sys.stdin.readline().rstrip("\n")
