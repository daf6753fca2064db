"""'Did you mean' suggestions: the one place close names are found and worded."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """'; did you mean 'x' or 'y'?' naming up to three close candidates, or ''."""
    import difflib  # only on error paths

    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else ""
