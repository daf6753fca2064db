"""The direct model call's transport (sexp_tasks/handler/http_pool.py): kept-alive connections
reused, a connection the server closed or a body left unread never reused, streams read as they
arrive, failures raised as OSError; and the direct call's use of it (handler/direct_call.py): a
proxy setting sends the call through httpx, which applies it; the provider parameters asked once
per settings (handler/direct_request.py).

The recording server of the other tests speaks HTTP/1.0 for plain answers (a connection per
request): these tests have an HTTP/1.1 server of their own that keeps connections alive."""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from llm_server import LLMServer, Scripted

from sexp_tasks.handler import direct_call, direct_request, http_pool, llm
from sexp_tasks.handler.model_request import ModelRequest
from sexp_tasks.handler.provider_errors import ProviderError


class KeepAlive:
    """An HTTP/1.1 server on 127.0.0.1: POST answers its body upper-cased (Content-Length), or
    as `pieces` chunks when the path is /stream; counts the connections it accepted and has open."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.accepted = 0
        self.open = 0
        self.close_after_answer = False  # close the connection (silently) once an answer is sent
        self.delay = 0.0
        self.pieces = [b"one ", b"two ", b"three"]
        self.headers: list[tuple[str, str]] = []  # the last request's, names in lower case
        self.release = threading.Event()  # /stream waits for it after its first piece
        self.hold = 10.0  # at most this long
        self.release.set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                server.accepted += 1
                server.open += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    server.open -= 1

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                server.headers = [(name.lower(), value) for name, value in self.headers.items()]
                time.sleep(server.delay)
                try:
                    if self.path == "/short":  # promises 20 bytes, sends 7, and ends the connection
                        self.send_response(200)
                        self.send_header("Content-Length", "20")
                        self.end_headers()
                        self.wfile.write(b'{"a": 1')
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    if self.path == "/stream":
                        self.send_response(200)
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for number, piece in enumerate(server.pieces):
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                            self.wfile.flush()
                            if number == 0:
                                server.release.wait(server.hold)
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.send_response(200)
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body.upper())
                    self.wfile.flush()
                except OSError:
                    self.close_connection = True
                    return
                if server.close_after_answer:
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def keep_alive() -> Iterator[KeepAlive]:
    running = KeepAlive()
    yield running
    running.stop()


def post(pool: http_pool.Pool, url: str, body: bytes = b"hello", timeout: float = 10.0) -> bytes:
    return pool.post(url, {"Content-Type": "text/plain"}, body, timeout).body()


def test_connections_are_kept_alive_and_reused(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    answers = [post(pool, keep_alive.url + "/echo", f"call {i}".encode()) for i in range(20)]
    assert answers == [f"CALL {i}".encode() for i in range(20)]
    assert keep_alive.accepted == 1


def test_threads_share_the_pool_without_mixing_answers(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    keep_alive.delay = 0.01
    answers: dict[int, bytes] = {}

    def ask(i: int) -> None:
        for j in range(5):
            answers[i * 10 + j] = post(pool, keep_alive.url + "/echo", f"q{i}-{j}".encode())

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert answers == {i * 10 + j: f"Q{i}-{j}".encode() for i in range(8) for j in range(5)}
    assert keep_alive.accepted <= 8  # at most one connection per thread in flight at once


def test_a_connection_the_server_closed_while_idle_is_not_reused(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    keep_alive.close_after_answer = True  # as a server whose keep-alive timeout passed
    assert post(pool, keep_alive.url + "/echo", b"first") == b"FIRST"
    wait_for(lambda: keep_alive.open == 0, 10, "the server closed the connection")
    keep_alive.close_after_answer = False
    assert post(pool, keep_alive.url + "/echo", b"second") == b"SECOND"  # not an error: a new connection
    assert keep_alive.accepted == 2


def test_a_stream_arrives_in_pieces_and_its_connection_is_reused(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    keep_alive.release.clear()
    reply = pool.post(keep_alive.url + "/stream", {}, b"", 10.0)
    pieces = reply.chunks()
    assert next(pieces) == b"one "  # before the rest is sent: read as it arrives
    keep_alive.release.set()
    assert b"".join(pieces) == b"two three"
    assert post(pool, keep_alive.url + "/echo") == b"HELLO"
    assert keep_alive.accepted == 1


def test_a_body_left_unread_closes_its_connection(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    keep_alive.release.clear()
    reply = pool.post(keep_alive.url + "/stream", {}, b"", 10.0)
    assert next(reply.chunks()) == b"one "
    reply.close()  # a stream stopped early (a budget, a Ctrl-C): the rest would be the next answer's
    keep_alive.release.set()
    assert post(pool, keep_alive.url + "/echo") == b"HELLO"
    assert keep_alive.accepted == 2


def test_a_slow_answer_is_a_timeout(keep_alive: KeepAlive) -> None:
    keep_alive.delay = 2.0
    with pytest.raises(TimeoutError):
        post(http_pool.Pool(8), keep_alive.url + "/echo", timeout=0.2)


def test_a_refused_connection_is_an_os_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(http_pool.FAILURES):
        post(http_pool.Pool(8), f"http://127.0.0.1:{port}/echo")


def test_a_body_cut_short_is_an_error_not_an_answer(keep_alive: KeepAlive) -> None:
    pool = http_pool.Pool(8)
    with pytest.raises(http_pool.CUT_SHORT):
        b"".join(pool.post(keep_alive.url + "/short", {}, b"", 10.0).chunks())
    with pytest.raises(http_pool.CUT_SHORT):
        pool.post(keep_alive.url + "/short", {}, b"", 10.0).body()
    assert post(pool, keep_alive.url + "/echo") == b"HELLO"  # on a new connection


def test_host_and_a_url_s_user_are_sent_as_httpx_sends_them(keep_alive: KeepAlive) -> None:
    port = keep_alive.url.rsplit(":", 1)[1]
    post(http_pool.Pool(8), f"http://user:p%40ss@127.0.0.1:{port}/echo")
    sent = dict(keep_alive.headers)
    assert sent["host"] == f"127.0.0.1:{port}"
    assert sent["authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
    post(http_pool.Pool(8), f"http://127.0.0.1:{port}/echo", b"x")
    assert [name for name, _ in keep_alive.headers].count("host") == 1


def test_not_an_http_url_is_refused() -> None:
    with pytest.raises(ValueError, match="not an HTTP URL"):
        post(http_pool.Pool(8), "ftp://127.0.0.1/x")


def test_a_proxy_setting_sends_the_call_through_it(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY set: httpx's client sends the call, to the proxy (here the recording server,
    which answers what it is asked for in a proxy's absolute form)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-proxy")
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    direct_call.http_client()  # made before the proxy is set: it is made again with it
    monkeypatch.setenv("HTTP_PROXY", server.base_url.removesuffix("/v1"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    server.script("through the proxy")
    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": "hi"}])
    answer = llm.complete(request, api_base="http://provider.invalid/v1")
    assert answer.text == "through the proxy"
    assert server.requests[-1].path == "http://provider.invalid/v1/chat/completions"


def test_provider_parameters_are_asked_once_per_settings(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-params")
    litellm = llm._litellm()
    asked: list[dict[str, Any]] = []
    real = litellm.utils.get_optional_params

    def counted(**given: Any) -> Any:
        asked.append(given)
        return real(**given)

    monkeypatch.setattr(litellm.utils, "get_optional_params", counted)
    monkeypatch.setattr(direct_request, "_known_params", {})
    server.script("ok")
    for temperature in (0.2, 0.2, 0.7, 0.2):
        messages = [{"role": "user", "content": f"t {temperature}"}]
        request = ModelRequest.build("openai/test-model", messages, generation={"temperature": temperature})
        llm.complete(request, api_base=server.base_url)
    sent = [json.loads(request.raw)["temperature"] for request in server.requests]
    assert sent == [0.2, 0.2, 0.7, 0.2]
    assert [given["temperature"] for given in asked] == [0.2, 0.7]


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1, signed by its own key: (certificate, key) files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    here = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(here, False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


def test_https_trusts_ssl_cert_file_and_refuses_an_unknown_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("cryptography", reason="makes the test's certificate")
    cert_file, key_file = self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert_file, key_file)
    server = KeepAlive(tls)
    try:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        with pytest.raises(ssl.SSLCertVerificationError):  # certifi's authorities did not sign it
            post(http_pool.Pool(8), server.url + "/echo")
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        pool = http_pool.Pool(8)
        assert [post(pool, server.url + "/echo", b"over tls") for _ in range(3)] == [b"OVER TLS"] * 3
        assert server.accepted == 1  # one kept-alive connection (the refused handshake reached no handler)
    finally:
        server.stop()


def test_a_reader_s_own_os_error_is_not_a_lost_connection(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream's text shown on a closed pipe (`sexp run ... | head`) raises BrokenPipeError in
    the reader: not a lost connection, which would be retried and paid again."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-pipe")
    server.script(Scripted(content="one two three"))

    def closed_pipe(text: str) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    request = ModelRequest.build("openai/test-model", [{"role": "user", "content": "hi"}], stream=True)
    with pytest.raises(ProviderError) as raised:
        llm.complete(request, api_base=server.base_url, on_text=closed_pipe)
    assert "Broken pipe" in raised.value.message and "connection" not in raised.value.message
    assert raised.value.kind == "provider_error"  # as before the pool (httpx's client)
    assert len(server.requests) == 1


def test_a_thread_awaiting_an_answer_sees_an_interrupt_at_once(keep_alive: KeepAlive) -> None:
    """Ctrl-C reaches a program's thread as an exception raised in it (lang/deepstack.py), seen
    only between Python instructions: a thread blocked awaiting a slow model's answer is woken
    (its socket shut down), and sees it at once, not when the answer comes (the run then ends as
    interrupted, its spans sent)."""
    from sexp_tasks.lang.deepstack import raise_interrupt_in

    keep_alive.delay = 30.0
    seen: list[BaseException] = []
    asked = threading.Event()

    def ask() -> None:
        try:
            asked.set()
            post(http_pool.Pool(8), keep_alive.url + "/echo", timeout=60.0)
        except BaseException as err:  # noqa: BLE001  (the interrupt is what is looked for)
            seen.append(err)

    waiting = threading.Thread(target=ask, daemon=True)
    waiting.start()
    asked.wait(10)
    wait_for(lambda: keep_alive.open, 10, "the request arrived")
    began = time.monotonic()
    raise_interrupt_in(waiting)
    waiting.join(10)
    assert [type(err) for err in seen] == [KeyboardInterrupt]
    assert time.monotonic() - began < 5  # not the server's 30 s
