"""The direct model call's HTTP transport (direct_call.py): one pool of kept-alive HTTP/1.1
connections per process, on the standard library's http.client.

A model call is one POST whose answer is read whole or as a stream of server-sent events. httpx's
client spent ~1.4 ms of CPU on each in a 1,000-row batch (its request and response models, and
httpcore's pool scanning every connection for each request): more than all of sexp's own work for
the row. Here a call takes an idle connection to its host, or opens one, sends the request as
given (its headers are the caller's: direct_call.py keeps httpx's defaults, so the bytes sent are
the same), reads the status and headers and hands the body over; the connection goes back to the
pool once its answer was read to the end, and is closed when it was not or the server ends it.

An idle connection whose socket is readable was closed by the server (or holds bytes nobody
asked for): it is dropped, not reused, as urllib3 and httpcore do; so is one idle for longer than
KEEPALIVE_SECONDS. A request is never sent twice here: a failure is the caller's to retry.

The answer, and each piece of its body, is awaited in one blocking read (a model may think for
minutes). Ctrl-C reaches a program's thread as an exception raised in it (lang/deepstack.py),
seen only once the read returns: so the thread registers its connection as `wakeable` while it
waits, and an interrupt raised in it shuts the socket down (`wake`), ending the read at once.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import ssl
import threading
import time
from base64 import b64encode
from collections.abc import Iterator
from functools import partial
from urllib.parse import unquote, urlsplit

from ..lang.deepstack import wakeable

KEEPALIVE_SECONDS = 30.0  # how long an idle connection is kept
READ_SIZE = 65536  # the most a stream's read takes at once (what has arrived, up to this)

_Key = tuple[str, str, int]  # scheme, host, port
# What a failed connection raises (TimeoutError, a timeout, is an OSError); CUT_SHORT: a status
# line or body the connection ended in the middle of
CUT_SHORT = http.client.HTTPException
FAILURES = (OSError, CUT_SHORT)


class Reply:
    """A response: its status, reason and headers as they came (in order, repeated ones kept), and
    its body, read by `body()` whole or `chunks()` as it arrives (decoded from chunked transfer
    encoding, not from a content encoding). close() ends it: the connection is pooled again when
    the body was read to its end, else closed."""

    def __init__(self, pool: Pool, key: _Key, connection: http.client.HTTPConnection) -> None:
        self._pool, self._key, self._connection = pool, key, connection
        self._response: http.client.HTTPResponse | None = connection.getresponse()
        self.status = self._response.status
        self.reason = self._response.reason
        self.headers = self._response.getheaders()

    def body(self) -> bytes:
        """The whole body."""
        assert self._response is not None
        try:
            with wakeable(self._wake):
                data = self._response.read()
        except BaseException:
            self._discard()
            raise
        self.close()
        return data

    def chunks(self) -> Iterator[bytes]:
        """The body, in pieces as they arrive."""
        response = self._response
        assert response is not None
        try:
            while piece := self._read(response):
                yield piece
            if response.length:  # the connection ended before the Content-Length did
                raise http.client.IncompleteRead(b"", response.length)
            response.read()  # b"": read1 leaves a body of known length "open" at its end
        except BaseException:
            self._discard()
            raise
        self.close()

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        with wakeable(self._wake):
            return response.read1(READ_SIZE)

    def _wake(self) -> None:
        """Ends a wait for the answer or its body in the thread an interrupt was raised in."""
        wake(self._connection)

    def close(self) -> None:
        response, self._response = self._response, None
        if response is None:
            return
        if response.isclosed() and not response.will_close:
            self._pool.give_back(self._key, self._connection)
        else:  # not read to its end, or the server ends the connection: it cannot carry another
            response.close()
            self._connection.close()

    def _discard(self) -> None:
        response, self._response = self._response, None
        if response is not None:
            response.close()
        self._connection.close()


class Pool:
    """Kept-alive connections by scheme, host and port, shared by every thread; at most `size`
    idle ones per host are kept."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: dict[_Key, list[tuple[float, http.client.HTTPConnection]]] = {}
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None

    def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> Reply:
        """Send a POST of body to url with exactly these headers (and Host and Content-Length);
        its Reply once the status and headers have arrived. OSError (TimeoutError for a timeout)
        or http.client.HTTPException when the connection fails."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an HTTP URL: {url}")
        default = 443 if scheme == "https" else 80
        key = (scheme, parts.hostname, parts.port or default)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        given = {name.lower() for name in headers}
        connection = self._take(key) or self._open(key, timeout)
        try:
            connection.timeout = timeout
            if connection.sock is not None:
                connection.sock.settimeout(timeout)
            connection.putrequest("POST", target, skip_host=True, skip_accept_encoding=True)
            if "host" not in given:  # as httpx writes it: the port only when it is not the default
                host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
                connection.putheader("Host", host if key[2] == default else f"{host}:{key[2]}")
            if parts.username is not None and "authorization" not in given:  # user:password@ in the URL
                pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
                connection.putheader("Authorization", "Basic " + b64encode(pair.encode()).decode())
            for name, value in headers.items():
                connection.putheader(name, value)
            connection.putheader("Content-Length", str(len(body)))
            with wakeable(partial(wake, connection)):  # sent, and the answer awaited in one wait
                connection.endheaders(body)
                return Reply(self, key, connection)
        except BaseException:
            connection.close()
            raise

    def give_back(self, key: _Key, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < self.size:
                idle.append((time.monotonic(), connection))
                return
        connection.close()

    def _take(self, key: _Key) -> http.client.HTTPConnection | None:
        """An idle connection to key still open, the most recently used first; None if none."""
        now = time.monotonic()
        while True:
            with self._lock:
                idle = self._idle.get(key)
                if not idle:
                    return None
                since, connection = idle.pop()
            if now - since < KEEPALIVE_SECONDS and not _readable(connection):
                return connection
            connection.close()

    def _open(self, key: _Key, timeout: float) -> http.client.HTTPConnection:
        scheme, host, port = key
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self._tls_context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def _tls_context(self) -> ssl.SSLContext:
        """The certificates httpx trusts: SSL_CERT_FILE when set, else SSL_CERT_DIR, else certifi's."""
        if self._tls is None:
            cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
            if cafile:
                self._tls = ssl.create_default_context(cafile=cafile)
            elif capath:
                self._tls = ssl.create_default_context(capath=capath)
            else:
                import certifi  # noqa: PLC0415  (only for https; it comes with httpx)

                self._tls = ssl.create_default_context(cafile=certifi.where())
        return self._tls


def wake(connection: http.client.HTTPConnection) -> None:
    """Wakes a thread blocked on connection (connecting, sending, or awaiting the answer in one
    wait: a model may think for minutes): its socket shut down, the blocked call returns at once,
    and the thread sees the interrupt raised in it (lang/deepstack.py's wakeable). A TLS socket is
    shut down beneath its TLS layer: a read waiting for the answer (after the session tickets a
    TLS 1.3 server sends first) returns too. The connection is not used again."""
    sock = connection.sock
    if sock is not None:
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:  # already closed
            pass


def _ready(sock: socket.socket, seconds: float) -> bool:
    """Whether sock has something to read within seconds."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(seconds * 1000))
    return bool(select.select([sock], [], [], seconds)[0])


def _readable(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle connection's socket has something to read: the server closed it (or sent
    what nobody asked for). A closed socket counts as readable."""
    sock = connection.sock
    try:
        return sock is None or _ready(sock, 0)
    except (OSError, ValueError):
        return True
