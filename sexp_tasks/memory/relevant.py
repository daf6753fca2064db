"""Relevant files for a query, as get-context and fresh context give them.

The lexical ranking answers by default. When a model is configured, the best lexical
candidates (matching or not: on a small index, every file) go to the stdlib template
`associative_matching`, whose ranking replaces the lexical one; when the call fails or its answer
cannot be used, the lexical ranking stands, with a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..runs.store import Store
from .system import MemorySystem, RelevantFile

TEMPLATE = "associative_matching"
CANDIDATES = 30  # files offered to the model at most


def relevant_files(
    query: str,
    limit: int,
    settings: Any,
    tasks: Any,
    warn: Callable[[str], None],
    store: Any = None,
) -> list[RelevantFile]:
    """Up to limit files relevant to query, best first, from the index in settings.store (or store).

    settings needs .store, .workspace, .model and .model_override; tasks is the Task System.
    A missing or empty index gives [] and a warning saying how to build one.
    """
    if store is not None:
        return _relevant(MemorySystem(store, settings.workspace), query, limit, settings, tasks, warn)
    if not Path(settings.store).is_file():  # asking must not create a store
        warn(f"no file index at '{settings.store}'; run `sexp index` to build one")
        return []

    opened = Store(settings.store, create=False)
    try:
        return _relevant(MemorySystem(opened, settings.workspace), query, limit, settings, tasks, warn)
    finally:
        opened.close()


def _relevant(
    memory: MemorySystem, query: str, limit: int, settings: Any, tasks: Any, warn: Callable[[str], None]
) -> list[RelevantFile]:
    if memory.size() == 0:
        warn(f"the file index at '{settings.store}' is empty; run `sexp index` to build it")
        return []
    if not (settings.model or settings.model_override):
        return memory.relevant(query, limit)
    candidates = memory.candidates(query, max(CANDIDATES, limit))
    refined = associative_matching(tasks, query, candidates)
    if isinstance(refined, str):
        warn(f"associative matching failed ({refined}); using the lexical ranking")
        return memory.relevant(query, limit)
    return refined[:limit]


def associative_matching(tasks: Any, query: str, candidates: list[RelevantFile]) -> list[RelevantFile] | str:
    """The model's ranking of candidates for query, or why it cannot be used."""
    if not candidates:
        return []
    task = tasks.task(TEMPLATE)
    if task is None:
        return f"no '{TEMPLATE}' template"
    offered = [{"path": c.path, "summary": c.summary, "score": c.score} for c in candidates]
    result = task.call_named({"query": query, "candidates": offered})
    if result.failed:
        return result.error.summary() if result.error is not None else "the task failed"
    return read_ranking(result.parsed_content, {c.path: c for c in candidates})


def read_ranking(answer: Any, candidates: dict[str, RelevantFile]) -> list[RelevantFile] | str:
    """Files from `{"ranked": [{"path", "score"} or path...]}` naming candidates; or what is wrong."""
    ranked = answer.get("ranked") if isinstance(answer, dict) else answer
    if not isinstance(ranked, list):
        return 'the answer has no "ranked" list'
    found: dict[str, RelevantFile] = {}
    for position, entry in enumerate(ranked):
        path, score = (entry.get("path"), entry.get("score")) if isinstance(entry, dict) else (entry, None)
        if not isinstance(path, str):
            continue
        path = path.removeprefix("./")
        if path not in candidates or path in found:
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            score = 1.0 - position / len(ranked)  # no usable score: the position says it
        found[path] = RelevantFile(path, round(min(1.0, max(0.0, float(score))), 3), candidates[path].summary)
    if ranked and not found:
        return "the answer names none of the candidate files"
    return sorted(found.values(), key=lambda f: -f.score)  # stable: the model's order among equals
