"""The Memory System (SPEC §5): files relevant to a query, from the index's metadata alone.

Nothing here reads a file's contents: ranking uses the stored summaries, headings and
identifiers, and a result is checked only to still exist. The Handler reads contents.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .ranking import Document, rank


class Store(Protocol):
    """The part of sexp_tasks.runs.store.Store the Memory System uses."""

    def indexed_count(self) -> int: ...
    def indexed_documents(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class RelevantFile:
    """A file relevant to a query: its path (relative to the workspace), score in [0, 1] and summary."""

    path: str
    score: float
    summary: str

    def to_value(self) -> dict[str, Any]:
        """The dict get-context returns for it."""
        return {"path": self.path, "score": self.score, "summary": self.summary}


class MemorySystem:
    """The file index of one store, for one workspace."""

    def __init__(self, store: Store, workspace: str | Path) -> None:
        self.store = store
        self.workspace = Path(workspace)

    def size(self) -> int:
        """How many files the index holds."""
        return self.store.indexed_count()

    def documents(self) -> list[Document]:
        """Every indexed file as the ranking sees it."""
        rows = self.store.indexed_documents()
        return [
            Document(row["path"], row["summary"], _names(row["headings"]), _names(row["identifiers"]))
            for row in rows
        ]

    def relevant(self, query: str, limit: int = 10) -> list[RelevantFile]:
        """Up to limit files matching query lexically (score above 0), best first."""
        return self._top(query, limit, matching_only=True)

    def candidates(self, query: str, limit: int) -> list[RelevantFile]:
        """The limit best files for query, matching or not (for a model to choose from), best first."""
        return self._top(query, limit, matching_only=False)

    def _top(self, query: str, limit: int, matching_only: bool) -> list[RelevantFile]:
        found: list[RelevantFile] = []
        for score, doc in rank(query, self.documents()):
            if len(found) >= limit or (matching_only and score <= 0):
                break
            if self._exists(doc.path):  # deleted since it was indexed: the Handler could not read it
                found.append(RelevantFile(doc.path, score, doc.summary))
        return found

    def _exists(self, path: str) -> bool:
        return os.path.isfile(self.workspace / path)


def _names(stored: str | None) -> list[str]:
    try:
        value = json.loads(stored or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
