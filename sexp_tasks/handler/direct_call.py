"""A model call without litellm.completion: litellm's provider config builds the request
(direct_request.py) and reads the answer, and one pool of kept-alive connections per process
(http_pool.py) sends it (issue 23, point 3).

litellm.completion spends ~5 ms of CPU per call on machinery a sexp call does not use (its logging
object, callbacks, cost and metadata bookkeeping, a new OpenAI SDK request per call); this path
keeps what decides the bytes sent and the answer read — the request as direct_request.py builds
it, the provider config's transform_response and its stream iterator, litellm's own exceptions for
a failure — and sends the request itself. tests/test_direct_call.py checks the same bytes reach the
provider either way.

The request goes with httpx's default headers, as litellm's clients send it; the answer is handed
to the provider config as the httpx.Response it reads (httpx decodes a compressed body). When a
proxy is configured (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), httpx's own pooled client sends the
request: it applies the proxy and NO_PROXY as litellm's clients do.

llm.py sends the calls direct_request.py does not build a request for through litellm.completion,
and the async transport through litellm.acompletion. litellm itself is passed in by llm.py, the one
module that imports it; httpx is imported here alone."""

from __future__ import annotations

import datetime
import os
import sys
import threading
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import httpx

from .direct_errors import lost_connection, status_error
from .direct_request import Prepared
from .http_pool import CUT_SHORT, FAILURES, Pool, Reply

# One connection pool for every call of the process: kept-alive connections reused across calls
# and threads, room for a batch's 64 rows in flight and more.
POOL_SIZE = 128
PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy"})  # in any case
CLIENT_VARIABLES = PROXY_VARIABLES | {"no_proxy", "ssl_cert_file", "ssl_cert_dir"}
_ENCODED = {names: frozenset(map(str.encode, names)) for names in (PROXY_VARIABLES, CLIENT_VARIABLES)}
_pool: Pool | None = None
_client: httpx.Client | None = None  # for a proxied call
_client_settings: tuple[tuple[str, str], ...] = ()  # the environment it was made with
_headers: dict[str, str] | None = None  # httpx's defaults (Accept, Accept-Encoding, User-Agent...)
_lock = threading.Lock()


def _forget_pools() -> None:
    """In a forked child: the parent's pools are its own (their connections are shared sockets),
    and the lock may have been held by a thread the child does not have."""
    global _pool, _client, _lock
    _pool, _client, _lock = None, None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pools)


def connection_pool() -> Pool:
    """The process's one pool of connections, made on first use."""
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = Pool(POOL_SIZE)
    return _pool


def http_client() -> httpx.Client:
    """The process's pooled httpx client for proxied calls, made on first use, and again when the
    proxy settings changed since (httpx reads them when a client is made)."""
    global _client
    settings = _proxy_settings()
    if _client is None or _client_settings != settings:
        with _lock:
            if _client is None or _client_settings != settings:
                limits = httpx.Limits(
                    max_connections=POOL_SIZE, max_keepalive_connections=POOL_SIZE, keepalive_expiry=30.0
                )
                made = httpx.Client(limits=limits, timeout=None, follow_redirects=False, trust_env=True)
                _set_client(made, settings)
    assert _client is not None
    return _client


def _set_client(client: httpx.Client, settings: tuple[tuple[str, str], ...]) -> None:
    global _client, _client_settings
    _client, _client_settings = client, settings  # the old one is left to its calls in flight


def _proxy_settings() -> tuple[tuple[str, str], ...]:
    """What httpx's client takes from the environment: its proxy variables (NO_PROXY too) and
    certificate locations."""
    return tuple(sorted(_environment(CLIENT_VARIABLES)))


def _environment(wanted: frozenset[str]) -> list[tuple[str, str]]:
    """The environment variables whose name in lower case is one of wanted, as os.environ gives
    them. Where the environment is bytes (POSIX), its raw bytes are looked through and only those
    decoded: os.environ decodes every name and value it hands out, ~20 µs a call of a row."""
    if not os.supports_bytes_environ:
        return [(name, value) for name, value in os.environ.items() if name.lower() in wanted]
    raw: Mapping[bytes, bytes] = getattr(os.environb, "_data", os.environb)  # its dict, else itself
    encoded = _ENCODED.get(wanted) or frozenset(map(str.encode, wanted))
    if encoded.isdisjoint(map(bytes.lower, raw)):  # the usual answer, decoding nothing
        return []
    encoding = sys.getfilesystemencoding()  # as os.environ decodes
    return [
        (name.decode(encoding, "surrogateescape"), value.decode(encoding, "surrogateescape"))
        for name, value in list(raw.items())
        if name.lower() in encoded
    ]


def send(litellm: Any, prepared: Prepared, timeout: float, stream: Any) -> Any:
    """The answer to prepared, as litellm's ModelResponse (a stream read to the end by stream, a
    StreamReader); a litellm exception when it fails, the one litellm.completion raises for it."""
    response = None
    try:
        if _proxied():
            response = _through_httpx(prepared, timeout)
        else:
            response = _through_pool(prepared, timeout)
        if response.status_code >= 400:
            response.read()
            raise status_error(litellm, prepared, response)
        if prepared.stream:
            return stream.read(_wrapped(litellm, prepared, _chunks(litellm, prepared, response)))
        response.read()
        return _answer(litellm, prepared, response)
    except httpx.TimeoutException as exc:
        raise litellm.Timeout(
            message=f"{type(exc).__name__}: {exc}", model=prepared.model, llm_provider=prepared.provider
        ) from None
    except httpx.TransportError as exc:
        raise lost_connection(litellm, prepared, exc)  # its cause is set: the lost connection
    finally:
        if response is not None:
            response.close()


def default_headers() -> dict[str, str]:
    """httpx's default headers (Accept, Accept-Encoding, Connection, User-Agent), read from a
    client of its once per process (threads asking meanwhile wait for it)."""
    global _headers
    if _headers is None:
        with _lock:
            if _headers is None:
                with httpx.Client(trust_env=False) as defaults:
                    _headers = dict(defaults.headers)
    return _headers


def _through_pool(prepared: Prepared, timeout: float) -> httpx.Response:
    """prepared sent over the pool; its response, the body still to read."""
    given = {name.lower() for name in prepared.headers}
    headers = {name: value for name, value in default_headers().items() if name.lower() not in given}
    headers.update(prepared.headers)
    try:
        reply = connection_pool().post(prepared.url, headers, prepared.body, timeout)
    except ValueError as err:  # not an http(s) URL
        raise httpx.UnsupportedProtocol(str(err)) from None
    except FAILURES as err:
        raise _as_httpx(err, prepared.url, httpx.ConnectTimeout, httpx.ConnectError) from err
    response = _Response(reply.status, headers=reply.headers, stream=_Body(reply, prepared.url))
    response.url_sent = prepared.url
    return response


class _Response(httpx.Response):
    """httpx's Response, its request made only when asked for (by an error's reader): building
    one parses the URL again, a tenth of the call's transport."""

    url_sent = ""

    @property
    def request(self) -> httpx.Request:
        if self._request is None:
            self._request = httpx.Request("POST", self.url_sent)
        return self._request

    @request.setter
    def request(self, value: httpx.Request) -> None:
        self._request = value


def _through_httpx(prepared: Prepared, timeout: float) -> httpx.Response:
    """prepared sent by httpx's client (its proxy settings applied); its response, the body still
    to read."""
    client = http_client()
    request = client.build_request(
        "POST", prepared.url, headers=prepared.headers, content=prepared.body, timeout=timeout
    )
    return client.send(request, stream=True)


def _as_httpx(
    err: BaseException, url: str, timeout: type[httpx.TransportError], failed: type[httpx.TransportError]
) -> Exception:
    """The connection's failure as httpx raises it (a timeout, or a failed connection): send maps
    only those, so an OSError of the caller's own (a closed pipe in a stream's display) passes."""
    if isinstance(err, TimeoutError):
        kind = timeout
    elif isinstance(err, CUT_SHORT):  # a body or status line cut short
        kind = httpx.RemoteProtocolError
    else:
        kind = failed
    return kind(f"{type(err).__name__}: {err}", request=httpx.Request("POST", url))


def _proxied() -> bool:
    """Whether a proxy is set for this process, as httpx's client would find one (trust_env):
    the environment's *_proxy variables in any case, and on macOS and Windows the system's
    settings too (read once)."""
    if any(value for _, value in _environment(PROXY_VARIABLES)):
        return True
    return sys.platform in ("darwin", "win32") and _system_proxies()


@lru_cache(maxsize=1)
def _system_proxies() -> bool:
    return bool(urllib.request.getproxies())


class _Body(httpx.SyncByteStream):
    """A Reply's body as httpx reads a response's: its pieces as they arrive."""

    def __init__(self, reply: Reply, url: str) -> None:
        self._reply = reply
        self._url = url

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._reply.chunks()
        except FAILURES as err:  # as httpx reports a body cut short: send's callers see its errors only
            raise _as_httpx(err, self._url, httpx.ReadTimeout, httpx.ReadError) from err

    def close(self) -> None:
        self._reply.close()


class _Unlogged:
    """Stands for litellm's logging object where a provider config wants one: nobody listens."""

    def __init__(self) -> None:
        self.model_call_details: dict[str, Any] = {}
        self.optional_params: dict[str, Any] = {}

    def pre_call(self, *args: Any, **kwargs: Any) -> None:
        pass

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _answer(litellm: Any, prepared: Prepared, response: httpx.Response) -> Any:
    """The ModelResponse the provider config reads from response."""
    return prepared.config.transform_response(
        model=prepared.model,
        raw_response=response,
        model_response=litellm.ModelResponse(),
        logging_obj=_Unlogged(),
        api_key=prepared.api_key,
        request_data=prepared.data,
        messages=prepared.messages,
        optional_params=prepared.optional_params,
        litellm_params=prepared.litellm_params,
        encoding=None,
        json_mode=prepared.json_mode,
    )


def _wrapped(litellm: Any, prepared: Prepared, chunks: Any) -> Any:
    """chunks as litellm.completion hands a stream over: OpenAI's named and with the end marker
    dropped (_named), the others built by litellm's CustomStreamWrapper, as its handlers do."""
    if prepared.provider == "openai":
        return _named(chunks, prepared.model)
    logging = litellm.litellm_core_utils.litellm_logging.Logging(
        model=prepared.model,
        messages=prepared.messages,
        stream=True,
        call_type="completion",
        start_time=datetime.datetime.now(),
        litellm_call_id=str(uuid.uuid4()),
        function_id="",
    )
    logging.update_environment_variables(
        model=prepared.model,
        user=None,
        optional_params=prepared.optional_params,
        litellm_params=prepared.litellm_params,
        custom_llm_provider=prepared.provider,
    )
    return litellm.CustomStreamWrapper(
        completion_stream=chunks,
        model=prepared.model,
        custom_llm_provider=prepared.provider,
        logging_obj=logging,
    )


def _named(chunks: Any, model: str) -> Any:
    """chunks, each naming the model (as litellm's stream wrapper names them: its chunk builder
    reads the first chunk's)."""
    for chunk in chunks:
        if isinstance(chunk, dict):  # the iterator's end marker ([DONE]): its stream wrapper drops it
            if not (chunk.get("text") or chunk.get("tool_use") or chunk.get("usage")):
                continue
            raise ValueError("a stream chunk litellm's stream wrapper would have to build")
        if not getattr(chunk, "model", None):
            chunk.model = model
        yield chunk


def _chunks(litellm: Any, prepared: Prepared, response: httpx.Response) -> Any:
    """The stream's chunks (litellm's ModelResponseStream) as the provider's iterator reads them
    from the server-sent events: Anthropic's handler's, else the provider config's."""
    lines = litellm.llms.custom_httpx.sse_lines.iter_sse_lines(response.iter_text())
    if prepared.provider == "anthropic":
        return litellm.llms.anthropic.chat.handler.ModelResponseIterator(
            streaming_response=lines, sync_stream=True, json_mode=prepared.json_mode, response=response
        )
    return prepared.config.get_model_response_iterator(
        streaming_response=lines, sync_stream=True, json_mode=prepared.json_mode
    )
