"""What the layers below the runtime tell a tracer (SPEC §11.4): the run, each task call, model
turn, tool call and script begin and end as spans, nested as they ran. The handler and the task
system know only this protocol; runs/telemetry.py implements it with OpenTelemetry, and without
`otel` the tracer is NO_TRACER, whose spans cost a method call and do nothing.

A span is current in the context it is opened in (OpenTelemetry's own context variable), so a
pmap branch, which copies the context, nests its spans under the span that was current when it
began."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..results import TaskError, TaskResult
    from .model_request import ModelAnswer, ModelRequest


class Traced(Protocol):
    """One span while it is open: what is learnt of it before it ends."""

    def answered(self, answer: ModelAnswer) -> None:
        """A model turn's answer: the model that answered, tokens, cost, finish reason, source."""
        ...

    def note(self, attributes: Mapping[str, Any]) -> None:
        """More attributes (sexp.* names, or the conventions')."""
        ...

    def returned(self, text: str) -> None:
        """What a tool call or script gave (kept only with otel_content)."""
        ...

    def failed(self, error: TaskError) -> None:
        """The span's work failed: status ERROR, with the error's kind."""
        ...

    def finished(self, result: TaskResult) -> None:
        """A task call's or script's result: its status, cost and tokens; a FAILED one fails."""
        ...


class Tracer(Protocol):
    """Opens the spans of a run; each is a context manager giving its Traced."""

    def run(self, run_id: str, program: str) -> AbstractContextManager[Traced]:
        """A recorded run of a program."""
        ...

    def task(self, template: str, model: str, step: str | None) -> AbstractContextManager[Traced]:
        """One task call (its template, the model it asks, its journal step)."""
        ...

    def chat(self, request: ModelRequest, turn: int) -> AbstractContextManager[Traced]:
        """One model turn: request is what it asks."""
        ...

    def tool(self, name: str, arguments: Mapping[str, Any]) -> AbstractContextManager[Traced]:
        """One tool call a model asked for."""
        ...

    def script(self, command: str) -> AbstractContextManager[Traced]:
        """One system:run_script (its command as shown)."""
        ...

    def batch(self, batch_id: str, rows: int) -> AbstractContextManager[Traced]:
        """A batch of rows, each a run under it."""
        ...

    def carrier(self) -> dict[str, str]:
        """The span current here, as W3C trace context headers (`traceparent`): what a batch
        hands its rows, which run on threads of their own or on Ray."""
        ...

    def adopt(self, carrier: Mapping[str, str]) -> AbstractContextManager[object]:
        """Spans opened inside are children of the span carrier names (another thread's, or
        another process's)."""
        ...


class _Untraced:
    """A span that records nothing."""

    def answered(self, answer: ModelAnswer) -> None:
        """Nothing is kept."""

    def note(self, attributes: Mapping[str, Any]) -> None:
        """Nothing is kept."""

    def returned(self, text: str) -> None:
        """Nothing is kept."""

    def failed(self, error: TaskError) -> None:
        """Nothing is kept."""

    def finished(self, result: TaskResult) -> None:
        """Nothing is kept."""


UNTRACED = _Untraced()
_NOTHING: nullcontext[Traced] = nullcontext(UNTRACED)


class NoTracer:
    """The tracer when OpenTelemetry is off: every span is the same empty one."""

    def run(self, run_id: str, program: str) -> AbstractContextManager[Traced]:
        return _NOTHING

    def task(self, template: str, model: str, step: str | None) -> AbstractContextManager[Traced]:
        return _NOTHING

    def chat(self, request: ModelRequest, turn: int) -> AbstractContextManager[Traced]:
        return _NOTHING

    def tool(self, name: str, arguments: Mapping[str, Any]) -> AbstractContextManager[Traced]:
        return _NOTHING

    def script(self, command: str) -> AbstractContextManager[Traced]:
        return _NOTHING

    def batch(self, batch_id: str, rows: int) -> AbstractContextManager[Traced]:
        return _NOTHING

    def carrier(self) -> dict[str, str]:
        return {}

    def adopt(self, carrier: Mapping[str, str]) -> AbstractContextManager[object]:
        return _NOTHING


NO_TRACER: Tracer = NoTracer()
