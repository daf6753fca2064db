"""Context management (SPEC §3.5): what a task sees besides its own instructions.

Three dimensions — inherit_context, accumulate_data (+ accumulation_format), fresh_context —
resolved from the operator's defaults, then the template's settings, then the call's `context`
overrides. The context a task can inherit is the innermost enclosing `sequential`'s frame: what
that frame itself inherited plus what its earlier steps accumulated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from ..results import TaskResult
from ..run_context import run_context, within
from .settings import Parsers, choice, flag, read_settings
from .template import ContextSettings

INHERIT = ("full", "none", "subset")
FORMATS = ("notes_only", "full_output")


@dataclass(frozen=True)
class ContextPolicy:
    """Resolved settings: every dimension decided."""

    inherit: str
    accumulate: bool
    accumulation_format: str
    fresh: bool


OPERATOR_DEFAULTS = {
    "atomic": ContextPolicy("full", False, "notes_only", False),
    "sequential": ContextPolicy("full", True, "notes_only", False),
    "reduce": ContextPolicy("none", True, "notes_only", True),
    "script": ContextPolicy("full", False, "notes_only", False),
    "director_evaluator_loop": ContextPolicy("none", True, "notes_only", True),
    "subtask": ContextPolicy("subset", False, "notes_only", True),
}


class ContextError(ValueError):
    """A context override that names no setting or gives a setting a value it cannot have."""


def resolve(operator: str, *layers: ContextSettings) -> ContextPolicy:
    """The operator's defaults overridden by each layer in turn (template, then call site)."""
    policy = OPERATOR_DEFAULTS[operator]
    for layer in layers:
        if layer.inherit_context is not None:
            policy = replace(policy, inherit=layer.inherit_context)
            if layer.inherit_context == "full" and layer.fresh_context is None:
                # Asking for the caller's whole context overrides an operator's fresh default.
                policy = replace(policy, fresh=False)
        if layer.accumulate_data is not None:
            policy = replace(policy, accumulate=layer.accumulate_data)
        if layer.accumulation_format is not None:
            policy = replace(policy, accumulation_format=layer.accumulation_format)
        if layer.fresh_context is not None:
            policy = replace(policy, fresh=layer.fresh_context == "enabled")
            if policy.fresh and layer.inherit_context is None and policy.inherit == "full":
                # Asking for fresh context without saying what to inherit means starting afresh.
                policy = replace(policy, inherit="none")
    if policy.fresh and policy.inherit == "full":
        raise ContextError("fresh_context enabled cannot be combined with inherit_context full")
    return policy


_SETTINGS: Parsers = {
    "inherit_context": choice(INHERIT),
    "accumulate_data": flag,
    "accumulation_format": choice(FORMATS),
    "fresh_context": lambda key, raw: "enabled" if flag(key, raw) else "disabled",
}


def parse_overrides(value: Any) -> ContextSettings:
    """A call's `context` value — a dict or an association list, keys snake_case or camelCase."""
    if value is None:
        return ContextSettings()
    try:
        return ContextSettings(
            **read_settings(value, _SETTINGS, "context", '(dict "inherit_context" "none")')
        )
    except ValueError as err:
        raise ContextError(str(err)) from None


# The enclosing sequential's context --------------------------------------------------------


@dataclass
class ContextFrame:
    """A sequential's context: what it inherited, and its steps' accumulated notes or output."""

    policy: ContextPolicy
    inherited: str = ""
    steps: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Everything a step inheriting fully sees."""
        parts = [self.inherited] if self.inherited else []
        parts += [f'<step n="{i}">\n{step}\n</step>' for i, step in enumerate(self.steps, 1)]
        return "\n".join(parts)

    def pieces(self) -> list[str]:
        """What it inherited, then each step's notes or output (a subset is chosen among them)."""
        return ([self.inherited] if self.inherited else []) + self.steps

    def accumulate(self, value: Any) -> None:
        """Keep a finished step's notes (or whole output) for the steps after it."""
        if not self.policy.accumulate or not isinstance(value, TaskResult):
            return
        if self.policy.accumulation_format == "full_output":
            self.steps.append(value.content)
        else:
            self.steps.append(notes_text(value))


# Notes that are the Handler's metrics, not what the task learned.
_METRIC_NOTES = frozenset(
    {"template", "model", "usage", "cost_usd", "latency_ms", "resources", "warnings", "retries", "fallbacks"}
)


def notes_text(result: TaskResult) -> str:
    """A result's own notes (not its metrics) as `key: value` lines; its template names it."""
    template = result.notes.get("template", "task")
    lines = [f"{k}: {v}" for k, v in result.notes.items() if k not in _METRIC_NOTES]
    return f"[{template}] " + ("; ".join(lines) if lines else "(no notes)")


@contextmanager
def sequential_frame(policy: ContextPolicy) -> Iterator[ContextFrame]:
    """A new frame for a sequential's steps, inheriting from the enclosing one per policy."""
    here = run_context()
    outer = here.frame
    inherited = outer.text() if outer is not None and policy.inherit != "none" else ""
    frame = ContextFrame(policy, inherited)
    with within(replace(here, frame=frame, operator="atomic")):  # its own steps see its frame
        yield frame


_WORD = re.compile(r"[a-z0-9_]{3,}")


def inherited_context(policy: ContextPolicy, instructions: str) -> str:
    """The caller's context this task sees: all of it (full), the relevant part (subset), or none."""
    frame = run_context().frame
    if frame is None or policy.inherit == "none":
        return ""
    if policy.inherit == "full":
        return frame.text()
    # subset: the pieces sharing words with the task's instructions
    wanted = set(_WORD.findall(instructions.lower()))
    return "\n".join(p for p in frame.pieces() if wanted & set(_WORD.findall(p.lower())))
