"""Lexical ranking of indexed files for a query: BM25 over weighted fields, scores in [0, 1].

A file's terms come from its path, headings, identifiers and summary, the more telling fields
weighing more. Identifiers are split at case changes and underscores, so `runScript` and
`run_script` both match "run script". A score is the share of the query's weight (by inverse
document frequency) that the file matches, scaled by its BM25 score against the best file's:
1.0 only for the best file when it matches every query word.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
FIELD_WEIGHTS = {"path": 3.0, "headings": 2.0, "identifiers": 1.5, "summary": 1.0}

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of to and or in on for with by is are be this that it as at from where which what how"
    " do does file files code me my find show about into there their".split()
)


def terms(text: str) -> list[str]:
    """The search terms of text: lower-case words, identifiers split, stop words out, plurals folded."""
    words = _WORD.findall(_CAMEL.sub(_apart, text).lower())
    return [_fold(word) for word in words if word not in _STOP]


def _apart(match: re.Match[str]) -> str:
    return match.group(1) + " " + match.group(2)


def _fold(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _probe(term: str) -> str:
    """A substring every spelling of term contains (`library` is also in `libraries` as `librar`)."""
    return term[:-1] if term.endswith("y") and len(term) > 1 else term


@dataclass(frozen=True)
class Document:
    """One indexed file as the ranking sees it."""

    path: str
    summary: str
    headings: Sequence[str]
    identifiers: Sequence[str]

    def weighted_terms(self) -> dict[str, float]:
        """Each term's count, weighted by the field it occurs in."""
        counts: dict[str, float] = {}
        for field, text in (
            ("path", self.path.replace("/", " ")),
            ("headings", " ".join(self.headings)),
            ("identifiers", " ".join(self.identifiers)),
            ("summary", self.summary),
        ):
            for term in terms(text):
                counts[term] = counts.get(term, 0.0) + FIELD_WEIGHTS[field]
        return counts

    def length(self) -> float:
        """The weighted number of words, counted roughly (it only normalises BM25's term frequencies)."""
        return (
            FIELD_WEIGHTS["path"] * (self.path.count("/") + 2)
            + FIELD_WEIGHTS["headings"] * sum(h.count(" ") + 1 for h in self.headings)
            + FIELD_WEIGHTS["identifiers"] * len(self.identifiers)
            + FIELD_WEIGHTS["summary"] * (self.summary.count(" ") + 1)
        )

    def text(self) -> str:
        """Every field in lower case, for a quick test of whether a term can occur at all."""
        return " ".join([self.path, self.summary, *self.headings, *self.identifiers]).lower()


def _holds(text: str, probes: list[str]) -> bool:
    return any(probe in text for probe in probes)


def rank(query: str, documents: Iterable[Document]) -> list[tuple[float, Document]]:
    """Every document with its score for query, best first (ties by path); scores in [0, 1]."""
    docs = list(documents)
    query_terms = list(dict.fromkeys(terms(query)))
    if not docs:
        return []
    if not query_terms:
        return [(0.0, doc) for doc in sorted(docs, key=lambda d: d.path)]
    lengths = [doc.length() for doc in docs]
    average = sum(lengths) / len(docs) or 1.0
    probes = [_probe(t) for t in query_terms]
    # Only documents whose text holds a probe can match: the others are never split into terms.
    bags = {i: doc.weighted_terms() for i, doc in enumerate(docs) if _holds(doc.text(), probes)}
    frequency = {t: sum(1 for bag in bags.values() if t in bag) for t in query_terms}
    idf = {t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
    total_idf = sum(idf.values())
    raw: list[tuple[float, float]] = [(0.0, 0.0)] * len(docs)
    for i, bag in bags.items():
        bm25 = coverage = 0.0
        norm = K1 * (1 - B + B * lengths[i] / average)
        for term in query_terms:
            tf = bag.get(term, 0.0)
            if tf:
                bm25 += idf[term] * tf * (K1 + 1) / (tf + norm)
                coverage += idf[term]
        raw[i] = (bm25, coverage / total_idf)
    best = max(bm25 for bm25, _ in raw) or 1.0
    scored = [(coverage * bm25 / best, bm25, doc) for (bm25, coverage), doc in zip(raw, docs, strict=True)]
    scored.sort(key=lambda item: (-item[0], -item[1], item[2].path))
    return [(round(score, 3), doc) for score, _, doc in scored]
