"""get-context (SPEC §2.4, §5): files relevant to a query, from the index `sexp index` builds.

The memory system's primitives register in MEMORY_PRIMITIVES; the composition root installs them
in its interpreter."""

from __future__ import annotations

from typing import Any

from ..lang.primitives import PrimitiveRegistry
from ..lang.primitives.options import ABSENT, keyword_option, positive_integer
from ..lang.primitives.strings import as_string
from ..tasks.task_services import TaskServices
from .relevant import relevant_files

DEFAULT_LIMIT = 10
MEMORY_PRIMITIVES = PrimitiveRegistry()


@MEMORY_PRIMITIVES.primitive("get-context", "get_context", signature="(get-context query [:limit n])")
def get_context(ctx: TaskServices, query: Any, *options: Any) -> list[dict[str, Any]]:
    """Indexed files relevant to query, best first: dicts with path, score and summary (`:limit n`).

    The index holds metadata only and is built by `sexp index`; without one the value is () and a
    warning says so. `get_context` is the same primitive.

    (get-context "the reader's error messages" :limit 3)
    ;; => ()
    """
    text = as_string("get-context", query)
    limit = _limit(options)
    found = relevant_files(
        text,
        limit,
        ctx.settings,
        ctx.tasks,
        lambda message: ctx.warn(f"get-context: {message}"),
        store=ctx.tasks.current_run().store,  # the recorded run's, when there is one
    )
    return [f.to_value() for f in found]


def _limit(options: tuple[Any, ...]) -> int:
    """n from `:limit n`, else the default; a positive integer either way."""
    limit = keyword_option("get-context", "limit", options)
    return positive_integer("get-context", ":limit", DEFAULT_LIMIT if limit is ABSENT else limit)
