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
from ..handler.replay import MockScript
from ..runs.answers import AnswerCache
from ..runs.recording import Run
from .mcp_services import RunMcpSource

if TYPE_CHECKING:
    from .runner import TaskSystem

# The api_base warnings this process has given: each once, however many runtimes, rows or calls.
_API_BASE_WARNED: set[str] = set()
_API_BASE_LOCK = threading.Lock()


def read_mock_script(settings: Settings, warn: Callable[[str], None]) -> MockScript | ServiceError:
    """The --mock-responses script, read before the program runs so that one holding no
    replies is a usage error; a file that cannot be read or used is the error the first
    mock call raises (a program that makes none never needs it). Without one, the script of
    numbered mock replies, counted across the session's runs."""
    if not settings.mock_responses:
        return MockScript()
    try:
        return MockScript.from_file(settings.mock_responses, warn)
    except ServiceError as err:
        return err


def make_handler_services(
    system: TaskSystem, run: Run, mock: MockScript | ServiceError, warn: Callable[[str], None]
) -> HandlerServices:
    """run's services (its budget, cassette and ready answers), with the mock script
    read_mock_script gave (raised if it was an error)."""
    settings = system.settings
    if isinstance(mock, ServiceError):
        raise mock
    ready_answer, keep_answer = run.answers.hooks(system.answer_cache)  # None when neither is on
    return HandlerServices(
        mock=mock,
        cassette=run.cassette.get(),  # opened by the run's first model call
        ask_user=lambda question: ask_user(question, system.err),
        warn=warn,
        spawn_subtask=system.spawn_subtask,
        record_tool=system.record_tool,
        record_turn=system.record_turn,
        budget=run.budget,
        python_tools=system.python_tools,  # the same dict: a tool added later is offered too
        # on stderr even when quiet (a batch's rows always are): where the key goes is no chatter
        before_sending=lambda: warn_api_base_once(settings, lambda message: _notice(system.err, message)),
        ready_answer=ready_answer,  # the run --reuse names, then the cache (SPEC §11.2)
        keep_answer=keep_answer,
        open_stream=system.open_stream,  # the terminal's live region, with the stream setting
        tracer=system.tracer,  # OpenTelemetry's spans, with the otel setting (SPEC §11.4)
        mcp=mcp_source(system, run),
    )


def mcp_source(system: TaskSystem, run: Run) -> RunMcpSource | None:
    """The run's MCP tools, when sexp.toml declares servers: listed and called through the run's
    journal and cassette, the servers started by the task system when first needed."""
    if not system.settings.mcp:
        return None
    return RunMcpSource(dict(system.settings.mcp), system.mcp.clients, lambda: run.journal, run.cassette.get)


def answer_cache(system: TaskSystem) -> AnswerCache | None:
    """The answer cache, with the `cache` setting (None without): the store's `answers` table, on
    the connection of the run recording now, else on one of its own opened when first asked."""
    if not system.settings.cache:
        return None
    return AnswerCache(str(system.settings.store), lambda: system.current_run().store)


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
