"""The one module that imports litellm: a ModelRequest in, a ModelAnswer or a ProviderError out.

A streamed request (`ModelRequest.stream`) is read chunk by chunk, each piece of text handed to
`on_text` as it arrives, and its chunks built into one response by litellm's stream_chunk_builder
(the usage of its last chunk, tool calls assembled): from there on it is the unstreamed path."""

from __future__ import annotations

import contextvars
import gc
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.util import find_spec
from typing import Any

from ..lang.values import well_formed
from ..results import round_cost
from .model_request import ModelAnswer, ModelRequest
from .provider_errors import translate_error

DEFAULT_INPUT_WINDOW = 100_000
DEFAULT_OUTPUT_LIMIT = 4096  # output tokens a call reserves against a budget when the model gives none
# Where litellm keeps the callbacks a user may register; when all are empty its per-call logging
# (a payload built for every response, on a background thread) serves nobody and is skipped.
_CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "input_callback",
    "service_callback",
    "audit_log_callbacks",
    "_async_success_callback",
    "_async_failure_callback",
    "_async_input_callback",
)


@dataclass
class MockReply:
    """A scripted answer for a mock/ model: content and tool calls ({"name", "arguments"})."""

    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


_imported: dict[str, Any] = {}  # "module" once litellm is imported (or "error": why it could not be)
_importing = threading.Lock()


def _litellm() -> Any:
    """litellm, imported on first use, offline-safe and quiet.

    The import runs on a thread of its own, which callers wait for: an interrupt (Ctrl-C, a
    cancelled acall: KeyboardInterrupt raised in the caller's thread) stops the wait, never the
    import, which would leave a half-built litellm in sys.modules or the import lock held for
    every other caller."""
    if "module" not in _imported:
        with _importing:
            if not _imported:
                threading.Thread(target=_import_litellm, name="litellm-import", daemon=True).start()
        while not _imported:
            time.sleep(0.005)  # a wait an interrupt can end
    if "error" in _imported:
        raise _imported["error"]
    return _imported["module"]


def _import_litellm() -> None:
    """Import litellm into _imported.

    The import builds hundreds of thousands of long-lived objects. The cyclic collector is
    paused while it runs, and what exists then is frozen (gc.freeze) so no later collection
    walks it again: a `sexp run` that calls a model takes about 2 s less CPU (4.0 -> 1.9 s)."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    collecting = gc.isenabled()
    gc.disable()
    try:
        import litellm
    except BaseException as exc:  # raised by every caller
        _imported["error"] = exc
        return
    finally:
        gc.freeze()
        if collecting:
            gc.enable()

    litellm.suppress_debug_info = True
    if not os.environ.get("LITELLM_LOG"):  # sexp says what matters (a dropped setting ...), once
        logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
    _imported["module"] = litellm


@cache
def _unlogged_flag() -> contextvars.ContextVar[bool] | None:
    """litellm's context flag that skips its logging for one call (None if this litellm has none)."""
    try:
        from litellm._internal_context import is_internal_call
    except ImportError:
        return None
    return is_internal_call


def _nobody_listens(litellm: Any) -> bool:
    """Whether no litellm callback is registered (read per call: a user may register one at any time)."""
    return not any(getattr(litellm, name, None) for name in _CALLBACK_LISTS)


@cache
def input_window(model: str) -> int:
    """The model's input window in tokens from litellm's model info, 100,000 when unknown.

    Read from the model map litellm ships (what its get_model_info reads offline) without
    importing litellm, so a replayed or budget-checked run does not pay seconds for the import."""
    name = "openai/" + model.removeprefix("mock/") if model.startswith("mock/") else model
    models = _model_map()
    info = models.get(name) or models.get(name.split("/", 1)[-1]) or {}
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else DEFAULT_INPUT_WINDOW


@cache
def output_limit(model: str) -> int:
    """The most output tokens one call to model can give, from litellm's model info (as
    input_window reads it); DEFAULT_OUTPUT_LIMIT when unknown. What a call without max_tokens
    reserves against a budget (handler.py)."""
    name = "openai/" + model.removeprefix("mock/") if model.startswith("mock/") else model
    models = _model_map()
    info = models.get(name) or models.get(name.split("/", 1)[-1]) or {}
    found = info.get("max_output_tokens") or info.get("max_tokens")
    return int(found) if isinstance(found, int) and found > 0 else DEFAULT_OUTPUT_LIMIT


@cache
def _model_map() -> dict[str, Any]:
    """litellm's bundled model map, found on disk; {} when it cannot be read."""
    spec = find_spec("litellm")  # locates the package without running it
    for directory in (spec.submodule_search_locations or []) if spec else []:
        try:
            with open(os.path.join(directory, "model_prices_and_context_window_backup.json")) as file:
                found = json.load(file)
        except (OSError, ValueError):
            continue
        return found if isinstance(found, dict) else {}
    return {}


def complete(
    request: ModelRequest,
    api_base: str | None = None,
    timeout: float = 600.0,
    mock: MockReply | None = None,
    on_text: Callable[[str], None] | None = None,
) -> ModelAnswer:
    """Send request through litellm, once (its litellm_arguments, and these transport settings);
    ProviderError when it fails (retries are the caller's: handler/retries.py), carrying the text
    a broken stream gave before it broke (`partial`). A streamed request hands each piece of text
    to on_text as it arrives, in the thread reading the stream (under the async transport, the
    shared loop's). Safe to call from any thread."""
    litellm = _litellm()
    options = request.litellm_arguments()
    options["timeout"] = timeout
    options["drop_params"] = True  # a setting the provider does not take is dropped, not an error
    options["max_retries"] = 0  # the OpenAI client's own retries would be hidden; the Handler retries
    if mock is not None:
        # litellm refuses an unknown provider, so mock/<name> answers as openai/<name>, no HTTP.
        options["model"] = "openai/" + request.model.removeprefix("mock/")
        options["mock_response"] = mock.content
        if mock.tool_calls:  # litellm's mock streams text alone: an answer with tool calls comes whole
            options["mock_tool_calls"] = _mock_tool_calls(mock.tool_calls)
            options.pop("stream", None)
            options.pop("stream_options", None)
    elif api_base:
        options["api_base"] = api_base
    stream = _Stream(litellm, options["messages"], on_text) if options.get("stream") else None
    quiet = _nobody_listens(litellm)
    started = time.perf_counter()
    try:
        if mock is None and transport() == "async":
            response = _background_loop().run(_acomplete(litellm, quiet, options, stream))
        elif quiet:
            response = contextvars.copy_context().run(_complete, litellm, quiet, options, stream)
        else:
            response = _complete(litellm, False, options, stream)
    except Exception as exc:
        error = translate_error(litellm, exc)
        error.partial = well_formed(stream.text) if stream is not None else ""
        raise error from None
    latency = (time.perf_counter() - started) * 1000
    answer = _answer(response, latency, request.model, is_mock=mock is not None)
    if mock is not None and stream is not None:
        # a mock's stream counts its text's tokens; its whole answer counts litellm's fixed numbers
        constants = litellm.constants
        prompt, completion = (
            constants.DEFAULT_MOCK_RESPONSE_PROMPT_TOKEN_COUNT,
            constants.DEFAULT_MOCK_RESPONSE_COMPLETION_TOKEN_COUNT,
        )
        answer = replace(answer, prompt_tokens=prompt, completion_tokens=completion)
    return answer


class _Stream:
    """A streamed answer read as it arrives: each piece of text handed to on_text, every chunk kept
    for litellm's stream_chunk_builder, the text so far kept (a broken stream's partial answer)."""

    def __init__(self, litellm: Any, messages: list[Any], on_text: Callable[[str], None] | None) -> None:
        self.litellm = litellm
        self.messages = messages
        self.on_text = on_text
        self.chunks: list[Any] = []
        self.pieces: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def read(self, chunks: Any) -> Any:
        """The response the stream's chunks make, read to the end."""
        for chunk in chunks:
            self._take(chunk)
        return self._built()

    async def aread(self, chunks: Any) -> Any:
        """read, for litellm's async stream."""
        async for chunk in chunks:
            self._take(chunk)
        return self._built()

    def _take(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        choices = getattr(chunk, "choices", None)
        delta = getattr(choices[0], "delta", None) if choices else None
        text = getattr(delta, "content", None)
        if text:
            self.pieces.append(text)
            if self.on_text is not None:
                self.on_text(text)

    def _built(self) -> Any:
        """One response of the chunks (None for a stream that gave none: an answer without choices)."""
        return self.litellm.stream_chunk_builder(self.chunks, messages=self.messages) if self.chunks else None


def unsupported_settings(model: str, keys: Any) -> list[str]:
    """The generation settings among keys that litellm says model's provider does not take
    (complete drops them: drop_params); [] for a mock model or when litellm cannot tell."""
    if model.startswith("mock/") or not keys:
        return []
    litellm = _litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
        supported = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:  # an unknown provider or model: litellm cannot tell, so nothing is said
        return []
    return [] if not supported else [key for key in keys if key not in supported]


@cache
def supports_response_schema(model: str) -> bool:
    """Whether litellm says model takes a JSON Schema as response_format; False for a mock model
    or one litellm cannot tell about (never raises). A model litellm's map lists is answered from
    the map on disk (what litellm reads; `sexp tasks render` and replays do not import litellm)."""
    if model.startswith("mock/"):
        return False
    models = _model_map()
    provider, _, bare = model.partition("/")
    info = models.get(model)
    if info is None and bare and (models.get(bare) or {}).get("litellm_provider") == provider:
        info = models.get(bare)
    if isinstance(info, dict):
        return bool(info.get("supports_response_schema"))
    try:
        return bool(_litellm().supports_response_schema(model=model))
    except Exception:  # litellm says False for what it does not know; never fail a call over it
        return False


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """What litellm would charge for a call of these sizes to model, in USD; 0 for a mock model or
    one litellm has no price for (its calls are counted at 0 too)."""
    if model.startswith("mock/") or model in _unpriced:
        return 0.0
    litellm = _litellm()
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # litellm raises for a model it cannot price: ask once per process
        _unpriced.add(model)
        return 0.0
    return float(prompt) + float(completion)


_unpriced: set[str] = set()


def transport() -> str:
    """How real calls travel in this process: `sync` (litellm.completion in the calling thread, over httpx;
    the default, cheapest in CPU for a single call) or `async` (litellm.acompletion on one shared event
    loop, over aiohttp), chosen by SEXP_LLM_TRANSPORT. Both meet pmap's goals (bench/pmap.py)."""
    return "async" if os.environ.get("SEXP_LLM_TRANSPORT", "").strip().lower() == "async" else "sync"


def _complete(litellm: Any, quiet: bool, options: dict[str, Any], stream: _Stream | None) -> Any:
    """litellm.completion (its stream read to the end), with its logging off for this call's
    context when nobody listens."""
    flag = _unlogged_flag() if quiet else None
    if flag is not None:
        flag.set(True)
    response = litellm.completion(**options)
    return response if stream is None else stream.read(response)


async def _acomplete(litellm: Any, quiet: bool, options: dict[str, Any], stream: _Stream | None) -> Any:
    """litellm.acompletion (its stream read to the end), with its logging off for this task's
    context when nobody listens."""
    flag = _unlogged_flag() if quiet else None
    if flag is not None:
        flag.set(True)
    response = await litellm.acompletion(**options)
    return response if stream is None else await stream.aread(response)


class _LoopThread:
    """An event loop in a daemon thread, on which callers in any thread await litellm's async path."""

    def __init__(self) -> None:
        import asyncio  # only the async transport needs it; replayed runs start without it

        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="sexp-llm-loop", daemon=True).start()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """The coroutine's result, awaited on the loop while the calling thread waits."""
        import asyncio

        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            while True:  # a timed wait: an interrupt raised in this thread (the REPL's Ctrl-C) is seen
                try:
                    return future.result(timeout=_INTERRUPT_POLL)
                except TimeoutError:
                    continue
        except BaseException:
            future.cancel()  # an interrupted caller leaves no request running behind it
            raise


_INTERRUPT_POLL = 0.05  # seconds: how soon a caller waiting on the loop sees an interrupt

# The one loop of this process (an HTTP session pool belongs to one loop); a forked child makes its own.
_loops: list[_LoopThread] = []
_loops_guard = threading.Lock()


def _background_loop() -> _LoopThread:
    with _loops_guard:
        if not _loops or _loops[0].pid != os.getpid():
            _loops[:] = [_LoopThread()]
        return _loops[0]


def _mock_tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Scripted {"name", "arguments"} calls in the OpenAI shape litellm's mock expects."""
    shaped = []
    for index, call in enumerate(calls, 1):
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        shaped.append(
            {
                "id": f"call_mock_{index}",
                "type": "function",
                "function": {"name": call.get("name", ""), "arguments": text},
            }
        )
    return shaped


def _answer(response: Any, latency_ms: float, model: str, is_mock: bool) -> ModelAnswer:
    """A ModelAnswer from a litellm ModelResponse; lone surrogates in its text replaced (U+FFFD).
    A response without choices (some filtering proxies send `"choices": []`) is an answer with no
    text and no finish reason: the Handler fails it as no answer, its usage still counted. Its
    model is the one the response names (a mock's: the mock model asked)."""
    choices = getattr(response, "choices", None)
    choice = choices[0] if choices else None
    message = choice.message if choice is not None else None
    calls = tuple(
        {
            "id": call.id or f"call_{i}",
            "name": well_formed(call.function.name or ""),
            "arguments": well_formed(call.function.arguments or ""),
        }
        for i, call in enumerate(getattr(message, "tool_calls", None) or [], 1)
    )
    usage = getattr(response, "usage", None)
    cost = 0.0
    answered = None if is_mock else getattr(response, "model", None)
    if not is_mock:
        # litellm prices every response as it builds it; asking again with completion_cost costs
        # milliseconds per call for models it has no price for (it formats a traceback each time).
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = float(hidden.get("response_cost") or 0.0)
    return ModelAnswer(
        text=well_formed(getattr(message, "content", None) or ""),
        tool_calls=calls,
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=round_cost(cost),
        latency_ms=round(latency_ms, 1),
        model=answered if isinstance(answered, str) and answered else model,
    )
