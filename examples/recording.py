"""Record an example's cassette offline: a local OpenAI-compatible server answers every request.

The answer depends on the request, not on the order requests arrive in, so workflows that call
models concurrently (pmap) record the same cassette every time. The workflow runs through
litellm's real HTTP path with `sexp run --record`; the recording key is a fake one, set only in
the child's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import LLMServer, Recorded, Scripted, _completion  # noqa: E402

Answer = Callable[[dict[str, Any]], Scripted | str]
MODEL = "openai/gpt-4o-mini"
FAKE_KEY = "sk-local-recording-not-a-key"  # the local server ignores it; litellm wants one


def answer(content: str, data_usage: str) -> str:
    """A well-behaved model's reply: the content in <output>, what it used in <notes>."""
    return f"<output>{content}</output><notes><data_usage>{data_usage}</data_usage></notes>"


def spawn(description: str, hints: list[str], inputs: dict[str, Any]) -> Scripted:
    """A reply that calls the spawn_subtask tool."""
    arguments = {"description": description, "template_hints": hints, "inputs": inputs}
    return Scripted(content=None, tool_calls=[{"name": "spawn_subtask", "arguments": arguments}])


def user_message(body: dict[str, Any]) -> str:
    """The text of the request's first user message (the task's substituted instructions)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


class RoutingServer(LLMServer):
    """An LLMServer whose reply to each request is answer(request body)."""

    def __init__(self, route: Answer) -> None:
        self.route = route
        super().__init__()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self
        base: Any = super()._handler_class()

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(Recorded(self.path, dict(self.headers), body))
                reply = server.route(body)
                scripted = Scripted(content=reply) if isinstance(reply, str) else reply
                time.sleep(scripted.delay)
                self._send(200, _completion(scripted, body.get("model", "test-model")))

        return Handler


def record(program: str, templates: str, cassette: str, route: Answer, *options: str) -> int:
    """Run program with --record cassette against a server answering with route; the exit status."""
    command = ["-m", "sexp_tasks", "run", program, "--templates", templates]
    return _recorded([*command, "--model", MODEL, "--record", cassette, *options], cassette, route, {})


def record_script(script: str, cassette: str, route: Answer, *options: str) -> int:
    """Run a Python example (it takes --record CASSETTE) afresh against a server answering with
    route, the checkout importable; the exit status."""
    (ROOT / cassette).unlink(missing_ok=True)
    return _recorded([script, "--record", cassette, *options], cassette, route, {"PYTHONPATH": str(ROOT)})


def _recorded(arguments: list[str], cassette: str, route: Answer, more_env: dict[str, str]) -> int:
    """`python ARGUMENTS` run against a server answering with route; says how many requests it
    recorded; the exit status."""
    server = RoutingServer(route).start()
    try:
        env = {**os.environ, "SEXP_API_BASE": server.base_url, "OPENAI_API_KEY": FAKE_KEY, **more_env}
        status = subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env).returncode
    finally:
        server.stop()
    print(f"\n{len(server.requests)} requests recorded in {cassette}", file=sys.stderr)
    return status
