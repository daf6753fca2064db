"""get-context (SPEC §2.4, §5): files relevant to a query, from the index `sexp index` builds."""

from __future__ import annotations

from typing import Any

from ..errors import TypeError_, ValueError_
from ..nodes import Keyword
from ..printer import to_repr
from . import primitive
from .strings import as_string

DEFAULT_LIMIT = 10


@primitive("get-context", "get_context")
def get_context(ctx: Any, query: Any, *options: Any) -> list[dict[str, Any]]:
    """Indexed files relevant to query, best first: dicts with path, score and summary (`:limit n`)."""
    from ..memory import relevant_files

    text = as_string("get-context", query)
    limit = _limit(options)
    journal = ctx.tasks.journal
    found = relevant_files(
        text,
        limit,
        ctx.settings,
        ctx.tasks,
        lambda message: ctx.warn(f"get-context: {message}"),
        store=journal.store if journal is not None else None,
    )
    return [f.to_value() for f in found]


def _limit(options: tuple[Any, ...]) -> int:
    """n from `:limit n`, else the default; a positive integer either way."""
    limit: Any = DEFAULT_LIMIT
    rest = list(options)
    while rest:
        key = rest.pop(0)
        if not isinstance(key, Keyword) or key.name != "limit":
            raise TypeError_(f"get-context: unexpected argument {to_repr(key)}; the only option is :limit n")
        if not rest:
            raise TypeError_("get-context: :limit needs a value")
        limit = rest.pop(0)
    if type(limit) is not int or limit < 1:
        raise ValueError_(f"get-context: :limit must be a positive integer, got {to_repr(limit)}")
    return limit
