"""Template matching (SPEC §3.8): which templates fit a piece of text, scored in [0, 1]."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .template import TaskTemplate

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of to and or in on for with by is are be this that it as at from".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower().replace("_", " ").replace("-", " ")) if w not in _STOP}


# How much a perfect record of past success (mean successScore 1.0) adds to a matching score.
HISTORY_WEIGHT = 0.25


def match_templates(
    text: str,
    templates: Iterable[TaskTemplate],
    limit: int = 5,
    past_scores: dict[str, float] | None = None,
) -> list[tuple[float, TaskTemplate]]:
    """Up to `limit` templates with scores in [0, 1], best first; only those sharing a word.

    past_scores (template name -> mean recorded successScore) raise the score of a template
    that matches at all, never make one match that does not.
    """
    past_scores = past_scores or {}
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
            lexical = min(1.0, hits / (len(query) + len(name)))
            past = past_scores.get(template.name, 0.0)
            # History closes part of the gap to 1, so a score stays in [0, 1].
            score = lexical + (1.0 - lexical) * HISTORY_WEIGHT * past
            scored.append((round(score, 2), past, template))
    scored.sort(key=lambda found: (-found[0], -found[1], found[2].name))  # ties: better record first
    return [(score, template) for score, _, template in scored[:limit]]
