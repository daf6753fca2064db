"""The spans of runs exported over OTLP/HTTP (SPEC §11.4): OpenTelemetry's one importer.

Span names and attributes follow the GenAI semantic conventions: a model turn is `chat {model}`
(`gen_ai.operation.name` "chat", the provider, the request's settings, the response's model,
tokens and finish reasons), a task call `invoke_agent {template}`, a model's tool call
`execute_tool {name}`; sexp's own attributes are `sexp.*` (run id, journal step, cost, where an
answer came from). Messages, tool arguments and results are put in only with `otel_content`,
scrubbed of keys (redact.scrub) like everything else a span holds.

The exporter is the SDK's OTLP/HTTP one (OTEL_EXPORTER_OTLP_ENDPOINT...) behind a batch span
processor with a short timeout: a down endpoint costs it once, and one warning, never a traceback."""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ..handler.model_request import ModelAnswer, ModelRequest
from ..handler.tracing import Traced, Tracer
from ..redact import mask_url, scrub, scrubber
from ..results import TaskError, TaskResult
from ..run_context import run_context
from .otel_messages import input_messages, output_message
from .recording import current_run

EXPORT_TIMEOUT = 3.0  # seconds an export may take, unless OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT says
FLUSH_MILLIS = 5000  # how long the end of a run waits for its spans to go
RETRY_AFTER = 30.0  # seconds an endpoint that failed an export is left alone
KEPT_MESSAGES = 100  # the exporter's log messages kept for the warning, at most
QUEUE_SPANS = 16384  # spans waiting for export at most (the SDK's 2048 fills in a wide pmap)
# the loggers whose messages (an export failed, spans dropped) become one warning at the end
LOGGERS = (OTLPSpanExporter.__module__, "opentelemetry.sdk._shared_internal")
TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
# litellm's generation settings under the conventions' names
REQUEST_SETTINGS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "stop": "gen_ai.request.stop_sequences",
    "n": "gen_ai.request.choice.count",
}


class _GuardedExporter(SpanExporter):
    """The OTLP exporter whose failure is kept, not raised nor logged: after one, the endpoint
    counts as down for RETRY_AFTER seconds and batches are dropped at once meanwhile (a run that
    ends then does not wait for it again)."""

    def __init__(self, inner: OTLPSpanExporter) -> None:
        self.inner = inner
        self.failure: str | None = None
        self._down_until = 0.0
        self._logged: list[str] = []
        self._filter = _Keep(self._logged)
        for name in LOGGERS:
            logging.getLogger(name).addFilter(self._filter)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if time.monotonic() < self._down_until:
            return SpanExportResult.FAILURE
        try:
            result = self.inner.export(spans)
        except Exception as err:  # whatever the transport raised: a warning at the end
            result, self.failure = SpanExportResult.FAILURE, f"{type(err).__name__}: {err}"
        else:
            if result is not SpanExportResult.SUCCESS:
                self.failure = _reason(self._logged[0]) if self._logged else "the export failed"
        if result is not SpanExportResult.SUCCESS:
            self._down_until = time.monotonic() + RETRY_AFTER
        return result

    def shutdown(self) -> None:
        try:
            self.inner.shutdown()
        finally:
            for name in LOGGERS:
                logging.getLogger(name).removeFilter(self._filter)

    def dropped(self) -> bool:
        """Whether the batch span processor dropped spans (its queue was full)."""
        return any("dropping" in message.lower() for message in self._logged)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _reason(message: str) -> str:
    """What the exporter's first message says went wrong, without its retry chatter."""
    found = re.search(r"Transient error (.*) encountered while exporting", message)
    return found.group(1) if found else message


class _Keep(logging.Filter):
    """Keeps the exporter's log messages (the reason an export failed) instead of printing them."""

    def __init__(self, kept: list[str]) -> None:
        super().__init__()
        self.kept = kept

    def filter(self, record: logging.LogRecord) -> bool:
        if len(self.kept) < KEPT_MESSAGES:
            self.kept.append(record.getMessage())
        return False


class OtlpTelemetry:
    """Spans of this process's runs, sent over OTLP/HTTP; content: with messages and results."""

    def __init__(self, content: bool, warn: Callable[[str], None]) -> None:
        timeout = None if any(os.environ.get(name) for name in TIMEOUT_VARIABLES) else EXPORT_TIMEOUT
        exporter = OTLPSpanExporter(timeout=timeout)
        self.endpoint = scrub(mask_url(str(getattr(exporter, "_endpoint", "the OTLP endpoint"))))
        self._exporter = _GuardedExporter(exporter)
        service = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "sexp-tasks"}
        self._provider = TracerProvider(resource=Resource.create(service), shutdown_on_exit=False)
        self._provider.add_span_processor(
            BatchSpanProcessor(self._exporter, max_queue_size=QUEUE_SPANS, export_timeout_millis=FLUSH_MILLIS)
        )
        self._tracer = OtelTracer(self._provider.get_tracer("sexp_tasks"), content)
        self.tracer: Tracer = self._tracer
        self._warn = warn
        self._closed = False
        self._lock = threading.Lock()
        atexit.register(self.close)  # an API user's process that never closes its session

    def flush(self) -> None:
        self._provider.force_flush(FLUSH_MILLIS)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._tracer.end_abandoned()
            self._provider.force_flush(FLUSH_MILLIS)
            self._provider.shutdown()
        finally:
            atexit.unregister(self.close)
            if self._exporter.dropped():
                self._warn("otel: some spans were dropped: more were waiting for export than it can hold")
            if self._exporter.failure is not None:
                self._warn(
                    f"otel: spans were not exported to {self.endpoint}: {scrub(self._exporter.failure)}"
                )


class _Traced:
    """An open span, as the layers below see it (handler/tracing.py's Traced)."""

    def __init__(self, span: Span, content: bool, mask: Callable[[str], str]) -> None:
        self.span = span
        self.content = content
        self.mask = mask
        self.errored = False  # its error is said: an exception carrying it out keeps it
        self._ended = False
        self._ending = threading.Lock()

    def end(self) -> None:
        """End the span, once: by its block, or by end_abandoned if that came first."""
        with self._ending:
            ended, self._ended = self._ended, True
        if not ended:
            self.span.end()

    def note(self, attributes: Mapping[str, Any]) -> None:
        mask = self.mask
        self.span.set_attributes(
            {name: _scrubbed(value, mask) for name, value in attributes.items() if value is not None}
        )

    def answered(self, answer: ModelAnswer) -> None:
        self.note(
            {
                "gen_ai.response.model": answer.model,
                "gen_ai.usage.input_tokens": answer.prompt_tokens,
                "gen_ai.usage.output_tokens": answer.completion_tokens,
                "gen_ai.response.finish_reasons": [answer.finish_reason] if answer.finish_reason else None,
                "sexp.cost_usd": answer.cost_usd,
                "sexp.source": answer.source,
                "sexp.reused": answer.source != "paid",
            }
        )
        if self.content:
            self.note({"gen_ai.output.messages": json.dumps([output_message(answer)])})

    def returned(self, text: str) -> None:
        if text.startswith("error:"):  # a tool's error is its answer to the model, and a failed span
            self._error("tool_error", text)
        if self.content:
            self.note({"gen_ai.tool.call.result": text})

    def failed(self, error: TaskError) -> None:
        self.note({"sexp.error.reason": error.reason or error.resource})
        self._error(error.type, error.message)

    def finished(self, result: TaskResult) -> None:
        notes = result.notes
        usage = notes.get("usage") or {}
        self.note(
            {
                "sexp.status": result.status,
                "sexp.cost_usd": notes.get("cost_usd"),
                "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
                "sexp.exit_code": getattr(result, "exit_code", None),
            }
        )
        if result.failed and result.error is not None:
            self.failed(result.error)

    def _error(self, kind: str, message: str) -> None:
        self.errored = True
        self.span.set_attribute("error.type", kind)
        self.span.set_status(Status(StatusCode.ERROR, self.mask(message)[:500]))


class OtelTracer:
    """handler/tracing.py's Tracer, opening OpenTelemetry spans (current in the caller's context)."""

    def __init__(self, tracer: Any, content: bool) -> None:
        self._tracer = tracer
        self.content = content
        # keys masked in every attribute: the environment's credentials, read again as each run
        # or batch begins (reading them per span would cost a millisecond a call), and sk-... shapes
        self.mask = scrubber()
        self._open: dict[int, _Traced] = {}  # the spans begun and not ended, in the order begun
        self._opening = threading.Lock()

    def end_abandoned(self) -> None:
        """End every span still open as interrupted, innermost first. A run abandoned on Ctrl-C
        (its thread stuck in a model's HTTP read past the interrupt grace) never leaves its
        blocks, so their spans would never be ended, hence never exported."""
        with self._opening:
            abandoned = list(reversed(self._open.values()))
            self._open.clear()
        for traced in abandoned:
            if not traced.errored:
                traced._error("interrupted", "interrupted")
            traced.end()

    def run(self, run_id: str, program: str) -> AbstractContextManager[Traced]:
        self.mask = scrubber()
        return self._span("sexp.run", SpanKind.INTERNAL, {"sexp.run_id": run_id, "sexp.program": program})

    def batch(self, batch_id: str, rows: int) -> AbstractContextManager[Traced]:
        self.mask = scrubber()
        return self._span("sexp.batch", SpanKind.INTERNAL, {"sexp.batch_id": batch_id, "sexp.rows": rows})

    def carrier(self) -> dict[str, str]:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # W3C trace context: the default propagator
        return carrier

    @contextmanager
    def adopt(self, carrier: Mapping[str, str]) -> Iterator[object]:
        token = otel_context.attach(propagate.extract(carrier)) if carrier else None
        try:
            yield None
        finally:
            if token is not None:
                otel_context.detach(token)

    def task(self, template: str, model: str, step: str | None) -> AbstractContextManager[Traced]:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": template,
            "gen_ai.request.model": model,
            "gen_ai.provider.name": _provider(model),
            "sexp.task": template,
            **_where(step),
        }
        return self._span(f"invoke_agent {template}", SpanKind.INTERNAL, attributes)

    def chat(self, request: ModelRequest, turn: int) -> AbstractContextManager[Traced]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": request.model,
            "gen_ai.provider.name": _provider(request.model),
            "sexp.turn": turn,
            **_where(run_context().step),
        }
        for name, key in REQUEST_SETTINGS.items():
            value = request.generation.get(name)
            if isinstance(value, str) and key.endswith("stop_sequences"):
                value = [value]
            if isinstance(value, (int, float, str)) or (isinstance(value, list) and value):
                attributes[key] = value
        if request.response_format is not None:
            attributes["gen_ai.output.type"] = "json"
        if self.content:
            system, messages = input_messages(request.as_record()["messages"])  # images elided
            attributes["gen_ai.input.messages"] = json.dumps(messages)
            if system:
                attributes["gen_ai.system_instructions"] = json.dumps(system)
        return self._span(f"chat {request.model}", SpanKind.CLIENT, attributes)

    def tool(self, name: str, arguments: Mapping[str, Any]) -> AbstractContextManager[Traced]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
            **_where(run_context().step),
        }
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments, default=str)
        return self._span(f"execute_tool {name}", SpanKind.INTERNAL, attributes)

    def script(self, command: str) -> AbstractContextManager[Traced]:
        attributes = {"sexp.script.command": command, **_where(run_context().step)}
        return self._span("sexp.script", SpanKind.INTERNAL, attributes)

    @contextmanager
    def _span(self, name: str, kind: SpanKind, attributes: Mapping[str, Any]) -> Iterator[Traced]:
        """A span current while the block runs; an exception out of it sets status ERROR with its
        type (scrubbed message) and goes on."""
        # ended here, not on exit, so that end_abandoned may end it first and only once
        options = {"record_exception": False, "set_status_on_exception": False, "end_on_exit": False}
        with self._tracer.start_as_current_span(self.mask(name), kind=kind, **options) as span:
            traced = _Traced(span, self.content, self.mask)
            with self._opening:
                self._open[id(traced)] = traced
            traced.note(attributes)
            try:
                yield traced
            except BaseException as err:
                if not traced.errored:
                    kind_name = "interrupted" if isinstance(err, KeyboardInterrupt) else type(err).__name__
                    traced._error(kind_name, str(err) or kind_name)
                raise
            finally:
                with self._opening:
                    self._open.pop(id(traced), None)
                traced.end()


def _where(step: str | None) -> dict[str, Any]:
    """The run and journal step a span belongs to (sexp.run_id, sexp.step), when known."""
    run = current_run()
    return {"sexp.run_id": run.run_id if run is not None else None, "sexp.step": step}


def _provider(model: str) -> str | None:
    """The provider a litellm model name starts with (`openai/gpt-4o-mini`: openai); None when
    it names none (litellm infers it)."""
    prefix, slash, _ = model.partition("/")
    return prefix if slash else None


def _scrubbed(value: Any, mask: Callable[[str], str]) -> Any:
    """An attribute's value with keys masked (strings, and lists of them)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, (list, tuple)):
        return [mask(item) if isinstance(item, str) else item for item in value]
    return value
