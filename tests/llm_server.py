"""A small OpenAI-compatible chat server for tests: scripted replies, every request recorded (its
body's bytes too). A POST to a path ending in /messages is answered as Anthropic's Messages API
answers (anthropic_message, anthropic_events), plain or streamed.

A request with `"stream": true` is answered as OpenAI streams: `text/event-stream` chunks
(`data: {chat.completion.chunk}` lines, the usage in a last chunk when `stream_options.include_usage`
asks for it, then `data: [DONE]`), the first after the reply's `delay`, each next after its
`chunk_delay`; a reply with `drop_after=N` breaks the connection after N chunks. Each recorded
request notes how many of its stream's events were written (`events_sent`) and whether the client
closed the connection before the stream's end (`client_left`)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One reply: an answer (content, tool calls, finish reason, usage) or an HTTP error."""

    content: str | None = "ok"
    tool_calls: list[dict[str, Any]] | None = None  # {"name", "arguments": dict or raw str}
    finish_reason: str | None = None
    # prompt_tokens and completion_tokens, and any of OpenAI's details (prompt_tokens_details...)
    usage: dict[str, Any] = field(default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 5})
    status: int = 200
    error: dict[str, Any] | None = None  # the error body for a status >= 400
    delay: float = 0.0
    no_choices: bool = False  # a 200 whose "choices" is [] (as some filtering proxies send)
    drop: bool = False  # close the connection without an answer (after delay), as a broken network does
    # streamed replies only: the text's pieces (default: word by word), the seconds between two
    # chunks, and the count of chunks after which the connection breaks (None: it does not)
    pieces: list[str] | None = None
    chunk_delay: float = 0.0
    drop_after: int | None = None


def context_length_error() -> Scripted:
    """The 400 an OpenAI server sends when the prompt is too long."""
    return Scripted(
        status=400,
        error={
            "message": "This model's maximum context length is 8192 tokens. "
            "However, your messages resulted in 9000 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        },
    )


@dataclass
class Recorded:
    """One request as received. Header names are kept in lower case (HTTP names are
    case-insensitive and clients differ in how they spell them): read `headers["authorization"]`.
    arrived: time.perf_counter() when its body had been read (bench/stream.py times from there)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    arrived: float = field(default_factory=time.perf_counter, compare=False)
    events_sent: int = 0  # a streamed reply's events written (its chunks, then [DONE])
    client_left: bool = False  # the client closed the connection before the stream's end
    raw: bytes = field(default=b"", repr=False)  # the body's bytes as they arrived

    def __post_init__(self) -> None:
        self.headers = {name.lower(): value for name, value in self.headers.items()}


class _Listening(ThreadingHTTPServer):
    """The server with a listen backlog a burst of concurrent clients fits in: the default (5)
    drops connections when 16 arrive at once on a busy machine, and sexp no longer hides that
    behind litellm's silent retries (each retry is its own, counted and traced)."""

    request_queue_size = 128


class LLMServer:
    """Serves POST /v1/chat/completions on 127.0.0.1 (ephemeral port) from a queue of Scripted replies."""

    def __init__(self) -> None:
        self.queue: deque[Scripted] = deque()
        self.last: Scripted = Scripted()
        self.requests: list[Recorded] = []
        self.on_request: Callable[[int], None] | None = None  # called with the count of requests so far
        self.connections = 0  # client connections open now (a dead client's close when read to their end)
        # content (or a whole Scripted reply) computed from the request
        self.answer: Callable[[dict[str, Any]], str | Scripted] | None = None
        # when set, a request carrying response_format is refused with this 400 (queue untouched),
        # as a provider that does not take the parameter refuses it
        self.refuse_response_format = False
        self._lock = threading.Lock()
        self._server = _Listening(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Scripted | str) -> None:
        """Queue replies (a string is a plain answer); the last one repeats when the queue is empty."""
        for reply in replies:
            self.queue.append(Scripted(content=reply) if isinstance(reply, str) else reply)

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self) -> Scripted:
        with self._lock:
            if self.queue:
                self.last = self.queue.popleft()
            return self.last

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server.connections += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with server._lock:
                        server.connections -= 1

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                recorded = Recorded(self.path, dict(self.headers), body, raw=raw)
                with server._lock:
                    server.requests.append(recorded)
                    count = len(server.requests)
                if server.on_request is not None:
                    server.on_request(count)
                if server.refuse_response_format and "response_format" in body:
                    error = {
                        "message": "Unsupported parameter: 'response_format' is not supported by this model",
                        "type": "invalid_request_error",
                        "param": "response_format",
                    }
                    self._send(400, {"error": error})
                    return
                reply = server._next()
                if server.answer is not None:
                    answered = server.answer(body)
                    reply = (  # a Scripted from `llm_server` or `tests.llm_server`: two classes
                        Scripted(content=answered, delay=reply.delay, chunk_delay=reply.chunk_delay)
                        if isinstance(answered, str)
                        else answered
                    )
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif reply.status >= 400:
                    error = reply.error or {
                        "message": f"scripted error {reply.status}",
                        "type": "server_error",
                    }
                    anthropic = self.path.endswith("/messages")
                    self._send(
                        reply.status, {"type": "error", "error": error} if anthropic else {"error": error}
                    )
                elif self.path.endswith("/messages"):  # Anthropic's Messages API (anthropic_message)
                    model = body.get("model", "test-model")
                    if body.get("stream"):
                        self._events(reply, anthropic_events(reply, model), recorded)
                    else:
                        self._send(200, anthropic_message(reply, model))
                elif body.get("stream"):
                    self._stream(reply, body, recorded)
                else:
                    self._send(200, _completion(reply, body.get("model", "test-model")))

            def _stream(self, reply: Scripted, body: dict[str, Any], recorded: Recorded) -> None:
                """The reply as server-sent events, in HTTP/1.1 chunks: a connection broken before
                the last chunk is an incomplete body the client sees as an error."""
                options = body.get("stream_options") or {}
                chunks = _stream_chunks(
                    reply, body.get("model", "test-model"), bool(options.get("include_usage"))
                )
                self._events(reply, [f"data: {chunk}\n\n" for chunk in [*chunks, "[DONE]"]], recorded)

            def _events(self, reply: Scripted, events: list[str], recorded: Recorded) -> None:
                """Server-sent events written one by one, as _stream says."""
                self.protocol_version = "HTTP/1.1"
                self.close_connection = True
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for sent, text in enumerate(events):
                        if reply.drop_after is not None and sent >= reply.drop_after:
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        if sent and reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                        event = text.encode()
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        recorded.events_sent = sent + 1
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    recorded.client_left = True  # the client gave up (a cancelled or stopped stream)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


def _completion(reply: Scripted, model: str) -> dict[str, Any]:
    """A chat.completion object for a scripted answer."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"]
                    if isinstance(c["arguments"], str)
                    else json.dumps(c["arguments"]),
                },
            }
            for i, c in enumerate(reply.tool_calls, 1)
        ]
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    counted = reply.usage.get("prompt_tokens", 0) + reply.usage.get("completion_tokens", 0)
    usage = {**reply.usage, "total_tokens": counted}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [] if reply.no_choices else [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _stream_chunks(reply: Scripted, model: str, include_usage: bool) -> list[str]:
    """The chat.completion.chunk events (JSON text) of a streamed reply: the role, the text's
    pieces, each tool call's name then its arguments in two pieces, the finish reason, and the
    usage when asked for."""
    whole = _completion(reply, model)
    head = {"id": whole["id"], "object": "chat.completion.chunk", "created": whole["created"], "model": model}

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({**head, "choices": [choice]})

    events = [event({"role": "assistant", "content": ""})]
    text = reply.content or ""
    pieces = (
        reply.pieces if reply.pieces is not None else [p for p in text.replace(" ", " \0").split("\0") if p]
    )
    events += [event({"content": piece}) for piece in pieces]
    for index, call in enumerate(
        whole["choices"][0]["message"].get("tool_calls") or [] if whole["choices"] else []
    ):
        function = call["function"]
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        events.append(event({"tool_calls": [first]}))
        half = len(function["arguments"]) // 2
        for part in (function["arguments"][:half], function["arguments"][half:]):
            events.append(event({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    if whole["choices"]:
        events.append(event({}, whole["choices"][0]["finish_reason"]))
    if include_usage:
        events.append(json.dumps({**head, "choices": [], "usage": whole["usage"]}))
    return events


# Anthropic's Messages API: a scripted reply in its shape ---------------------------------------------


def anthropic_message(reply: Scripted, model: str) -> dict[str, Any]:
    """A Messages API `message` for a scripted answer: text and tool_use blocks, stop_reason, usage."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] if reply.content else []
    for i, call in enumerate(reply.tool_calls or [], 1):
        arguments = call["arguments"]
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{i}",
                "name": call["name"],
                "input": json.loads(arguments) if isinstance(arguments, str) else arguments,
            }
        )
    stop = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
    usage = {"input_tokens": reply.usage["prompt_tokens"], "output_tokens": reply.usage["completion_tokens"]}
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_events(reply: Scripted, model: str) -> list[str]:
    """The Messages API's server-sent events for a scripted answer: message_start, a text block
    (its pieces as text_delta), each tool_use block (its input JSON in two input_json_delta
    pieces), message_delta (stop_reason, output tokens), message_stop."""
    whole = anthropic_message(reply, model)

    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    start = {**whole, "content": [], "stop_reason": None, "usage": {**whole["usage"], "output_tokens": 1}}
    events = [event("message_start", {"message": start})]
    text = reply.content or ""
    pieces = (
        reply.pieces if reply.pieces is not None else [p for p in text.replace(" ", " \0").split("\0") if p]
    )
    index = 0
    if text:
        events.append(
            event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
        )
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            events.append(event("content_block_delta", {"index": 0, "delta": delta}))
        events.append(event("content_block_stop", {"index": 0}))
        index = 1
    for block in whole["content"]:
        if block["type"] != "tool_use":
            continue
        opened = {**block, "input": {}}
        events.append(event("content_block_start", {"index": index, "content_block": opened}))
        arguments = json.dumps(block["input"])
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(event("content_block_delta", {"index": index, "delta": delta}))
        events.append(event("content_block_stop", {"index": index}))
        index += 1
    stopped = {"delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None}}
    events.append(
        event("message_delta", {**stopped, "usage": {"output_tokens": whole["usage"]["output_tokens"]}})
    )
    events.append(event("message_stop", {}))
    return events


# Image-checking: what a request's content parts carry ---------------------------------------------


def attached(body: dict[str, Any]) -> list[tuple[str, bytes | str]]:
    """The images and files of a request's messages, in order: (media type, the decoded bytes) for
    a base64 data URL, ("url", the URL) for an image or file sent by URL. Raises when a data URL
    is not valid base64: a test should see a malformed one."""
    import base64
    import binascii

    found: list[tuple[str, bytes | str]] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            inner = part.get("image_url") or part.get("file") or {}
            url = inner.get("url") or inner.get("file_data") or inner.get("file_id")
            if not isinstance(url, str):
                continue
            if url.startswith("data:"):
                header, _, data = url.partition(",")
                assert header.endswith(";base64"), header
                try:
                    found.append((header[5:].removesuffix(";base64"), base64.b64decode(data, validate=True)))
                except binascii.Error as err:
                    raise AssertionError(f"not base64: {err}") from None
            else:
                found.append(("url", url))
    return found


def describe_attached(body: dict[str, Any]) -> str:
    """An answer naming what the request attached (`server.answer = describe_attached`: the
    image-checking mode): `<output>image/png 69 bytes; url https://...</output>`."""
    shown = [
        f"{kind} {len(data)} bytes" if isinstance(data, bytes) else f"url {data}"
        for kind, data in attached(body)
    ]
    return "<output>" + ("; ".join(shown) or "nothing attached") + "</output>"
