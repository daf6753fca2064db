"""The Memory System (SPEC §5): an index of file metadata in the store, and ranking over it.

    index_path(store, workspace, path)                 build or refresh the index (`sexp index`)
    MemorySystem(store, workspace).relevant(query)     lexical ranking: [RelevantFile(path, score, summary)]
    relevant_files(query, limit, settings, tasks, warn)  what get-context and fresh context give:
                                                        lexical, refined by a model when one is configured

Only the indexer reads files; at query time only the stored metadata is used.
"""

from __future__ import annotations

from .indexer import IndexReport, index_path
from .relevant import relevant_files
from .system import MemorySystem, RelevantFile

__all__ = ["IndexReport", "MemorySystem", "RelevantFile", "index_path", "relevant_files"]
