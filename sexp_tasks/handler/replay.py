"""Services shared by every Handler of one run: the mock script and the record/replay cassette."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ServiceError, UsageError
from ..lang.suggest import did_you_mean
from ..redact import scrub
from ..run_context import ProgramOrder
from .model_request import ModelAnswer, ModelRequest
from .provider_errors import REASONS, ProviderError, scripted_error


@dataclass
class MockReply:
    """A scripted answer for a mock/ model: content and tool calls ({"name", "arguments"}); or,
    with error (a TASK_FAILURE reason: provider_errors.REASONS), the provider's failure, as a
    real model's request fails (retried when the reason may be, and a chain's next model tried)."""

    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    status: int | None = None

    def failure(self) -> ProviderError | None:
        """The provider error this reply scripts, or None: it is an answer."""
        if self.error is None:
            return None
        return scripted_error(
            self.error, self.status, f"{self.error.replace('_', ' ')} (a scripted mock reply)"
        )

    def openai_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls in the OpenAI shape litellm's mock expects."""
        shaped = []
        for index, call in enumerate(self.tool_calls, 1):
            arguments = call.get("arguments", {})
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            function = {"name": call.get("name", ""), "arguments": text}
            shaped.append({"id": f"call_mock_{index}", "type": "function", "function": function})
        return shaped


class MockScript:
    """Scripted replies for mock/ models (thread-safe): one list for every template, or a list per
    template. A list's replies go to the calls in program order — inside pmap by element index
    (run_context.ProgramOrder) — and once it runs out its last reply repeats, with one warning."""

    def __init__(
        self,
        entries: list[Any] | dict[str, list[Any]] | None = None,
        warn: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.by_template = isinstance(entries, dict)
        lists = entries if isinstance(entries, dict) else {"": entries or []}
        self.replies = {
            name: [_check_entry(e, i, name) for i, e in enumerate(replies)] for name, replies in lists.items()
        }
        self.entries = self.replies.get("", [])  # the list form's replies
        self.calls = 0
        self._order = ProgramOrder()
        self._warn = warn
        self._ran_out: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path, warn: Callable[[str], None] = lambda message: None) -> MockScript:
        """The script in a JSON file: a list of replies, or an object mapping template names to
        lists of replies; a reply is a string or a {"content", "tool_calls"} object.
        Holding no replies at all is a usage error."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ServiceError(f"mock responses: no such file '{path}'") from None
        except (OSError, UnicodeDecodeError) as err:
            raise ServiceError(f"mock responses: cannot read '{path}': {err}") from None
        except json.JSONDecodeError as err:
            raise ServiceError(
                f"mock responses: '{path}' is not JSON: {err.msg} (line {err.lineno})"
            ) from None
        if isinstance(data, dict):
            for name, replies in data.items():
                if not isinstance(replies, list):
                    raise ServiceError(
                        f"mock responses: '{path}': the replies for '{name}' must be a JSON list"
                    )
        elif not isinstance(data, list):
            raise ServiceError(
                f"mock responses: '{path}' must hold a JSON list of replies or an object of lists"
            )
        empty = [name for name, replies in data.items() if not replies] if isinstance(data, dict) else []
        if not data or empty:
            what = f"an empty list for '{empty[0]}'" if empty else "an empty list or object"
            raise UsageError(f"--mock-responses: '{path}' holds no replies ({what})")
        return cls(data, warn)

    def next(self, template: str, in_output_section: bool = False) -> MockReply:
        """The reply for this call of template, or `mock response <n> for <template>` without a script.

        The unscripted reply answers in the output protocol when the task asks for it, so that a
        mock run reads like a well-behaved model's (no "no <output> section" warning)."""
        with self._lock:
            self.calls += 1
            calls = self.calls
        if not self.by_template and not self.entries:
            text = f"mock response {calls} for {template}"
            return MockReply(f"<output>{text}</output>" if in_output_section else text)
        key = template if self.by_template else ""
        replies = self.replies.get(key)
        if replies is None:
            known = ", ".join(sorted(self.replies))
            raise ServiceError(
                f"mock responses: no replies for task '{template}' (replies are given for: {known})"
                + did_you_mean(template, self.replies)
            )
        number = self._order.take(key)
        if number >= len(replies):
            self._running_out(key, template)
        entry = replies[min(number, len(replies) - 1)]
        if isinstance(entry, str):
            return MockReply(entry)
        asked = list(entry.get("tool_calls") or [])
        return MockReply(str(entry.get("content") or ""), asked, entry.get("error"), entry.get("status"))

    def _running_out(self, key: str, template: str) -> None:
        """Warn, the first time only, that a list of replies ran out."""
        with self._lock:
            if key in self._ran_out:
                return
            self._ran_out.add(key)
        self._warn(f"mock responses for {template} ran out; repeating the last")


def _check_entry(entry: Any, index: int, template: str = "") -> Any:
    where = f"entry {index + 1}" + (f" for '{template}'" if template else "")
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and "error" in entry:
        if entry["error"] not in REASONS or not isinstance(entry.get("status", 0), int):
            raise ServiceError(
                f'mock responses: {where}: "error" is one of {", ".join(REASONS)}'
                ' (and "status" an HTTP status number)'
            )
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("tool_calls", []), list):
        for call in entry.get("tool_calls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ServiceError(f'mock responses: {where}: a tool call needs a "name"')
        return entry
    raise ServiceError(
        f'mock responses: {where} must be a string, {{"content", "tool_calls"}} or {{"error"}}'
    )


class Cassette:
    """Model answers recorded to, or replayed from, a JSONL file keyed by the request's
    fingerprint (a cassette an earlier version recorded, by its legacy_cassette_key). A request
    that failed with a provider error is recorded too (`error` in place of `reply`), so that a
    replay fails it again and a model chain moves on as it did (SPEC §11.4)."""

    def __init__(self, path: str | Path, mode: str) -> None:
        if mode not in ("record", "replay"):
            raise ValueError(f"cassette mode must be record or replay, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self._lock = threading.Lock()
        self._replies: dict[str, list[dict[str, Any]]] = {}
        self._served: dict[str, int] = {}
        self._kept: dict[str, list[Any]] = {}  # what else was recorded (MCP tools' listings and answers)
        if mode == "replay":
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    @property
    def replaying(self) -> bool:
        return self.mode == "replay"

    def _load(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise ServiceError(f"replay: cannot read cassette '{self.path}': {err.strerror or err}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if "kept" in entry:  # an MCP server's listing or answer (kept by keep)
                    self._kept.setdefault(entry["key"], []).append(entry["kept"])
                    continue
                if not ("reply" in entry or isinstance(entry.get("error"), dict)):
                    raise KeyError("reply")
                self._replies.setdefault(entry["key"], []).append(entry)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                raise ServiceError(
                    f"replay: cassette '{self.path}' line {number} is not a recorded reply"
                ) from None

    def replay(
        self, request: ModelRequest, retries: list[dict[str, Any]] | None = None
    ) -> tuple[ModelAnswer, ModelRequest]:
        """The recorded answer to this request (the same request's answers in recorded order), and
        the request as it was sent: without its response_format when it was recorded so (the
        provider refused it). ServiceError when the cassette holds none; the recorded
        ProviderError when the request failed so. retries gets the retries it was recorded with."""
        with self._lock:
            found = next(((key, sent) for key, sent in _keys(request) if self._replies.get(key)), None)
            if found is None:
                raise ServiceError(
                    f"replay: cassette '{self.path}' has no recorded reply for this request to "
                    f"{request.model} (key {request.fingerprint()[:12]}); record it again with --record"
                )
            key, sent = found
            index = self._served.get(key, 0)
            self._served[key] = index + 1
            replies = self._replies[key]
            recorded = replies[min(index, len(replies) - 1)]
        if retries is not None:
            retries += [retry for retry in recorded.get("retries") or () if isinstance(retry, dict)]
        if "reply" not in recorded:
            error = recorded["error"]
            status = error.get("status")
            raise scripted_error(
                str(error.get("reason")),
                status if isinstance(status, int) else None,
                str(error.get("message")),
            )
        answer = ModelAnswer.from_record(recorded["reply"])
        return replace(answer, latency_ms=0.0, source="replayed"), sent

    def record(self, sent: ModelRequest, answer: ModelAnswer, retries: Sequence[dict[str, Any]] = ()) -> None:
        """Append one answer under the fingerprint of the request as sent (no headers, keys or
        api_base: nothing secret is written), with the retries it took (a replay notes them)."""
        entry = {"key": sent.fingerprint(), "model": sent.model, "reply": answer.as_record()}
        self._write({**entry, **({"retries": list(retries)} if retries else {})})

    def record_failure(
        self, request: ModelRequest, error: ProviderError, retries: Sequence[dict[str, Any]] = ()
    ) -> None:
        """Append the provider error request failed with (after its retries, which it keeps), under
        its fingerprint."""
        failure = {"reason": error.kind, "message": error.message, "status": error.status}
        entry = {"key": request.fingerprint(), "model": request.model, "error": failure}
        self._write({**entry, **({"retries": list(retries)} if retries else {})})

    def _write(self, entry: dict[str, Any]) -> None:
        """Append one entry, scrubbed (no headers, keys or api_base: nothing secret is written)."""
        line = scrub(json.dumps(entry, sort_keys=True), shaped=False)
        with self._lock, self.path.open("a", encoding="utf-8") as stream:
            stream.write(line + "\n")

    def kept(self, key: str) -> Any:
        """The next value keep recorded under key (the last again once all were served); a
        ServiceError when there is none."""
        with self._lock:
            values = self._kept.get(key)
            if not values:
                raise ServiceError(
                    f"replay: cassette '{self.path}' has no recorded {key.partition(':')[0]} for this"
                    f" ({key.partition(':')[2][:60]}); record it again with --record"
                )
            index = self._served.get(key, 0)
            self._served[key] = index + 1
            return values[min(index, len(values) - 1)]

    def keep(self, key: str, value: Any) -> None:
        """Append a value other than a model's answer (an MCP server's listing or answer) under key."""
        line = scrub(json.dumps({"key": key, "kept": value}, sort_keys=True), shaped=False)
        with self._lock, self.path.open("a", encoding="utf-8") as stream:
            stream.write(line + "\n")


def _keys(request: ModelRequest) -> Iterator[tuple[str, ModelRequest]]:
    """The keys a cassette may hold request's answer under, each with the request as then sent:
    its fingerprint; without its response_format (recorded after the provider refused it); the
    key of a cassette recorded before fingerprints (model, messages and tools)."""
    yield request.fingerprint(), request
    if request.response_format is not None:
        plain = request.without_response_format()
        yield plain.fingerprint(), plain
    yield request.legacy_cassette_key(), request
