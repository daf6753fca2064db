"""Template matching (SPEC §3.8): which templates fit a piece of text, scored in [0, 1]."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .template import TaskTemplate

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to and or in on for with by is are be this that it as at from".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower().replace("_", " ").replace("-", " ")) if w not in _STOP}


def match_templates(
    text: str, templates: Iterable[TaskTemplate], limit: int = 5
) -> list[tuple[float, TaskTemplate]]:
    """Up to `limit` templates with scores in [0, 1], best first; only those sharing a word."""
    query = _words(text)
    if not query:
        return []
    scored = []
    for template in templates:
        name = _words(template.name)
        described = _words(" ".join(filter(None, [template.description, template.criteria or ""])))
        # Words in the name count double: a name is the template's own summary of itself.
        hits = 2 * len(query & name) + len(query & described)
        if hits:
            score = min(1.0, hits / (len(query) + len(name)))
            scored.append((round(score, 2), template))
    scored.sort(key=lambda pair: (-pair[0], pair[1].name))
    return scored[:limit]
