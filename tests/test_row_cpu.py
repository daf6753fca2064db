"""What a batch row's model call no longer spends CPU on (issue 23, point 3), asserted as behaviour:
httpx's default headers and litellm's model map read once per process, whatever the threads; no
workspace or program path resolved unless a file or `load` needs one; the proxy check reading the
raw environment with the decoded environment's answer; one fingerprint per turn; and the answer
awaited in one wait that a Ctrl-C still ends at once, over TLS too. The CPU itself is measured by
bench/batch.py, not here."""

from __future__ import annotations

import io
import os
import ssl
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from conftest import scaled, wait_for, write
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import LLMServer
from test_http_pool import KeepAlive, post, self_signed

from sexp_tasks.config import Settings
from sexp_tasks.handler import direct_call, http_pool, model_info, model_request
from sexp_tasks.handler.model_request import ModelRequest
from sexp_tasks.lang import deepstack
from sexp_tasks.lang.deepstack import raise_interrupt_in
from sexp_tasks.runtime import Runtime

THREADS = 16


def at_once(call: Callable[[], Any]) -> list[Any]:
    """call's results in THREADS threads let go together."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = []

    def one() -> None:
        barrier.wait(10)
        results.append(call())

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def counted(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """owner.name replaced by a spy counting its calls (each slowed, so that threads would meet in it)."""
    real = getattr(owner, name)
    calls: list[int] = []
    slow = threading.Event()

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        slow.wait(0.05)  # widens the window a thread-unsafe "read once" would let others in by
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def test_httpx_default_headers_are_read_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct_call, "_headers", None)
    made = counted(monkeypatch, direct_call.httpx, "Client")
    headers = at_once(direct_call.default_headers)
    assert len(made) == 1
    assert all(found is headers[0] for found in headers) and "user-agent" in {h.lower() for h in headers[0]}
    direct_call.default_headers()
    assert len(made) == 1


def test_litellm_s_model_map_is_read_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_info, "_map", None)
    read = counted(monkeypatch, model_info, "_read_map")
    maps = at_once(model_info.model_map)
    assert len(read) == 1
    assert all(found is maps[0] for found in maps) and "gpt-4o" in maps[0]
    assert model_info.model_info("openai/gpt-4o")["max_input_tokens"] > 0
    assert len(read) == 1


PROGRAM = '(defatom greet (params who) (instructions "Hi {{who}}"))\n(task-content (greet (who "Ada")))\n'


def mock_runtime(workspace: Path) -> Runtime:
    settings = Settings(workspace=str(workspace), model="mock/m", quiet=True)
    return Runtime(settings, io.StringIO(), io.StringIO())


def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path resolution from now on (the workspace's, a program's path's), by what did it."""
    seen: list[str] = []
    realpath, resolve = os.path.realpath, Path.resolve

    def spied_realpath(path: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(f"realpath {path}")
        return realpath(path, *args, **kwargs)

    def spied_resolve(self: Path, *args: Any, **kwargs: Any) -> Any:
        seen.append(f"resolve {self}")
        return resolve(self, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", spied_realpath)
    monkeypatch.setattr(Path, "resolve", spied_resolve)
    return seen


def test_a_row_without_files_resolves_no_path(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row whose program reads no file, loads none and gives its task none resolves neither
    the workspace nor its program's path: each is resolved when a file needs it."""
    path = write(workspace / "p.sexp", PROGRAM)
    runtime = mock_runtime(workspace)
    assert runtime.run_recorded(path, PROGRAM, {}) == "mock response 1 for greet"  # the first row's own work
    seen = resolutions(monkeypatch)
    assert runtime.run_recorded(path, PROGRAM, {}) == "mock response 2 for greet"
    assert seen == []


def test_files_and_load_still_resolve_what_they_need(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace / "sub" / "notes.txt", "the notes")
    write(workspace / "sub" / "helper.sexp", '(define helped (read-file "sub/notes.txt"))\n')
    text = (
        '(load "helper.sexp")\n'
        '(defatom summarize (params) (instructions "Sum up"))\n'
        '(list helped (task-content (summarize :files (list "sub/notes.txt"))))\n'
    )
    path = write(workspace / "sub" / "p.sexp", text)
    runtime = mock_runtime(workspace)
    seen = resolutions(monkeypatch)
    assert runtime.run_recorded(path, text, {})[0] == "the notes"  # loaded beside the program
    assert any("p.sexp" in line for line in seen) and any("notes.txt" in line for line in seen)


NAMES = ["HTTP_PROXY", "http_proxy", "Https_Proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "SSL_CERT_FILE"]
NAMES += ["ssl_cert_dir", "HTTP_PROXYS", "X_HTTPS_PROXY", "PROXY", "ÅLL_PROXY", "HTTP_PROXY\u212a"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def decoded_settings() -> tuple[tuple[str, str], ...]:
    """What the proxy settings were before: read from the whole decoded environment."""
    variables = direct_call.CLIENT_VARIABLES
    return tuple(sorted((name, value) for name, value in os.environ.items() if name.lower() in variables))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES) | TEXT.filter(lambda name: name and "=" not in name), TEXT))
def test_the_raw_environment_gives_the_decoded_environment_s_proxy_settings(added: dict[str, str]) -> None:
    before = dict(os.environ)
    try:
        os.environ.update(added)
        expected = decoded_settings()
        wanted = direct_call.PROXY_VARIABLES
        proxied = any(value and name.lower() in wanted for name, value in os.environ.items())
        assert direct_call._proxy_settings() == expected
        assert direct_call._proxied() == proxied
        with mock.patch.object(os, "supports_bytes_environ", False):  # as on Windows: os.environ read
            assert (direct_call._proxy_settings(), direct_call._proxied()) == (expected, proxied)
    finally:
        os.environ.clear()
        os.environ.update(before)


def test_for_model_of_its_own_model_is_the_request_and_streamed_keeps_its_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": "Hi"}])
    assert request.for_model("openai/test-model") is request
    key = request.fingerprint()
    digests = counted(monkeypatch, model_request, "digest")
    streamed = request.streamed()
    assert streamed.stream and streamed.fingerprint() == key and streamed.streamed(False).fingerprint() == key
    assert request.streamed(False) is request
    assert digests == []
    other = request.for_model("openai/other-model")
    assert other.model == "openai/other-model" and other.fingerprint() != key
    assert len(digests) == 1


@pytest.mark.parametrize("how", ["paid", "cached", "reused"])
def test_a_turn_computes_one_fingerprint(
    server: LLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A recorded turn with the answer cache on, or --reuse of an earlier run, keys the journal,
    the reuse, the cache and the answer kept on the one fingerprint of its request: paid for
    (then kept), answered from the cache, or reused (--reuse also keys the earlier run's turn,
    once, when it reads it)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-row-cpu")
    server.script("hello", "hello again")
    settings = Settings(
        workspace=str(workspace), model="openai/test-model", api_base=server.base_url, cache=True, quiet=True
    )
    path = write(workspace / "p.sexp", PROGRAM)
    earlier = Runtime(settings, io.StringIO(), io.StringIO())
    earlier.run_recorded(path, PROGRAM, {})
    assert earlier.run is not None and earlier.run.run_id
    runtime = Runtime(replace(settings, cache=how != "reused"), io.StringIO(), io.StringIO())
    digests = counted(monkeypatch, model_request, "digest")
    reuse = earlier.run.run_id if how == "reused" else None
    text = PROGRAM.replace("Ada", "Bo") if how == "paid" else PROGRAM
    expected = "hello again" if how == "paid" else "hello"
    assert runtime.run_recorded(path, text, {}, reuse=reuse) == expected
    assert len(digests) == (2 if how == "reused" else 1)
    assert len(server.requests) == (2 if how == "paid" else 1)


@pytest.mark.parametrize("where", ["answer", "body", "tls"])
def test_an_interrupt_ends_the_one_long_wait_for_an_answer_at_once(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer (and each piece of its body) is awaited in one blocking read, not in slices: an
    interrupt raised in the waiting thread (Ctrl-C, lang/deepstack.py) wakes it by shutting its
    socket down, so the call ends at once, not when the server answers (30 s on); over TLS too,
    where the server's TLS 1.3 session tickets arrive before the answer."""
    tls = None
    if where == "tls":
        pytest.importorskip("cryptography", reason="makes the test's certificate")
        cert_file, key_file = self_signed(tmp_path)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert_file, key_file)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    server = KeepAlive(tls)
    pieces: list[bytes] = []
    seen: list[BaseException] = []
    if where == "body":
        server.release.clear()  # the server sends a first piece, then waits (30 s at most)
        server.hold = 30.0
    else:
        server.delay = 30.0

    def ask() -> None:
        try:
            path = "/stream" if where == "body" else "/echo"
            reply = http_pool.Pool(8).post(server.url + path, {}, b"hi", 60)
            pieces.extend(reply.chunks())
        except BaseException as err:  # noqa: BLE001  (the interrupt is what is looked for)
            seen.append(err)

    try:
        waiting = threading.Thread(target=ask, daemon=True)
        waiting.start()
        if where == "body":
            wait_for(lambda: pieces, 10, "the body's first piece")
        else:
            wait_for(lambda: server.headers, 10, "the request arrived")
        raise_interrupt_in(waiting)
        waiting.join(scaled(10))  # a generous bound: the server answers 30 s on, if ever
        assert not waiting.is_alive()
        assert [type(err) for err in seen] == [KeyboardInterrupt]
    finally:
        server.release.set()
        server.stop()


def test_a_wait_s_waker_is_gone_once_the_answer_came() -> None:
    """An interrupt raised in a thread after its answer came shuts no socket: the waker is
    registered only while the thread waits (the kept-alive connection is reused)."""
    server = KeepAlive()
    try:
        pool = http_pool.Pool(8)
        assert post(pool, server.url + "/echo") == b"HELLO"
        assert threading.get_ident() not in deepstack._wakers
        assert post(pool, server.url + "/echo") == b"HELLO" and server.accepted == 1
    finally:
        server.stop()
