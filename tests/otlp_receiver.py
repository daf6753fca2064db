"""A real OTLP/HTTP receiver on 127.0.0.1 for the OpenTelemetry tests: it accepts POST /v1/traces,
decodes each ExportTraceServiceRequest with opentelemetry-proto, and keeps the spans (as plain
dicts) and every raw body received (to look for keys that must never be sent)."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class ReceivedSpan:
    """One span as received: ids as hex, attributes as Python values."""

    name: str
    span_id: str
    parent_id: str
    trace_id: str
    kind: int
    attributes: dict[str, Any]
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    resource: dict[str, Any] = field(default_factory=dict)


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which) if which else None


class OtlpReceiver:
    """The receiver, serving in a thread of its own until stopped (a context manager)."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._keep(body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _keep(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    found.append(
                        ReceivedSpan(
                            name=span.name,
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            trace_id=span.trace_id.hex(),
                            kind=span.kind,
                            attributes={kv.key: _value(kv.value) for kv in span.attributes},
                            status_code=span.status.code,
                            status_message=span.status.message,
                            resource=resource,
                        )
                    )
        with self._lock:
            self.bodies.append(body)
            self.spans.extend(found)

    def received(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self.spans)

    def raw(self) -> bytes:
        with self._lock:
            return b"".join(self.bodies)

    def named(self, prefix: str) -> list[ReceivedSpan]:
        return [span for span in self.received() if span.name.startswith(prefix)]

    def parent(self, span: ReceivedSpan) -> ReceivedSpan | None:
        return next((other for other in self.received() if other.span_id == span.parent_id), None)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()
