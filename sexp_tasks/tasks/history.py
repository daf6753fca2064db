"""The session's conversation history: earlier task exchanges a call may replay (history_config)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..results import TaskResult

if TYPE_CHECKING:
    from ..handler.contract import TaskPrompt
    from .reserved import HistoryConfig

KEPT = 50  # exchanges remembered; older ones are forgotten


class History:
    """Completed (instructions, answer) exchanges of this session, oldest first."""

    def __init__(self) -> None:
        self._exchanges: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def replay(self, config: HistoryConfig) -> tuple[tuple[str, str], ...]:
        """The last max_exchanges exchanges when the call asks for history, else none."""
        if not config.use_history or config.max_exchanges == 0:
            return ()
        with self._lock:
            return tuple(self._exchanges[-config.max_exchanges :])

    def record(self, config: HistoryConfig, prompt: TaskPrompt, result: TaskResult) -> None:
        """Remember a completed exchange (FAILED ones are not part of the conversation)."""
        if not config.record or result.failed:
            return
        with self._lock:
            self._exchanges.append((prompt.instructions, result.content))
            del self._exchanges[:-KEPT]
