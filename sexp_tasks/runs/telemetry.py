"""Whether a run exports OpenTelemetry spans (SPEC §11.4), and the exporter when it does.

On with the `otel` setting (`--otel`, sexp.toml `otel = true`, the API's `otel=True`) or the
standard OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant) being set; off by default, and
then nothing of OpenTelemetry is imported. runs/otel_export.py, the one importer of the SDK, is
loaded only here, once it is asked for."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Protocol

from ..config import Settings
from ..errors import SettingsError
from ..handler.tracing import Tracer

INSTALL = "pip install 'sexp-tasks[otel]'"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


class Telemetry(Protocol):
    """An exporter of spans: its tracer, and its end."""

    tracer: Tracer

    def flush(self) -> None:
        """Send the spans ended so far (bounded by the export timeout)."""
        ...

    def close(self) -> None:
        """Flush, then shut the exporter down; a failed export is one warning. Idempotent."""
        ...


def telemetry_wanted(settings: Settings, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether spans are exported: the otel setting, or an OTLP endpoint in the environment."""
    return settings.otel or any(environ.get(name) for name in ENDPOINT_VARIABLES)


def open_telemetry(settings: Settings, warn: Callable[[str], None]) -> Telemetry | None:
    """The exporter the settings ask for (None when they ask for none); a SettingsError naming the
    extra to install when the OpenTelemetry SDK is missing."""
    if not telemetry_wanted(settings):
        return None
    try:
        from . import otel_export  # lazy: the SDK only when spans are exported (cli/startup.py)
    except ImportError as err:
        if not (err.name or "").startswith("opentelemetry"):
            raise
        raise SettingsError(
            f"otel: OpenTelemetry is not installed (no module {err.name!r}); install it with {INSTALL}"
        ) from None
    return otel_export.OtlpTelemetry(settings.otel_content, warn)
