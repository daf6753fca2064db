"""The one module that imports litellm: a ModelRequest in, a ModelAnswer or a ProviderError out.

A call to a provider direct_call.py covers (openai, anthropic, mistral) is built
by litellm's provider config and sent over one pool of kept-alive connections, without litellm.completion's
per-call machinery (about a third of its CPU); every other call, and every call under
SEXP_LLM_DIRECT=0, goes through litellm.completion (litellm.acompletion under the async transport).

A streamed request (`ModelRequest.stream`) is read chunk by chunk (stream_reading.py: each piece of
text handed to `on_text` as it arrives, the stream stopped at its limits), and its chunks built into
one response by litellm's stream_chunk_builder (the usage of its last chunk, tool calls
assembled): from there on it is the unstreamed path."""

from __future__ import annotations

import contextvars
import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import cache, partial
from typing import Any

from ..lang.deepstack import start_thread
from ..lang.values import well_formed
from ..results import round_cost
from . import direct_request
from .loop_thread import background_loop
from .model_info import model_map
from .model_request import ModelAnswer, ModelRequest
from .provider_errors import translate_error
from .replay import MockReply
from .responses import response_answer
from .stream_reading import StreamLimits, StreamReader, StreamStopped, StreamWatch

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
                start_thread(threading.Thread(target=_import_litellm, name="litellm-import", daemon=True))
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


def complete(
    request: ModelRequest,
    api_base: str | None = None,
    timeout: float = 600.0,
    mock: MockReply | None = None,
    on_text: Callable[[str], None] | None = None,
    limits: StreamLimits | None = None,
) -> ModelAnswer:
    """Send request through litellm, once (its litellm_arguments, and these transport settings);
    ProviderError when it fails (retries are the caller's: handler/retries.py), carrying the text
    a broken stream gave before it broke (`partial`). A streamed request hands each piece of text
    to on_text as it arrives, in the thread reading the stream (under the async transport, the
    shared loop's), and is stopped at its limits (StreamStopped). Safe to call from any thread.
    A mock reply that scripts a provider error raises it (nothing is imported or sent)."""
    scripted = mock.failure() if mock is not None else None
    if scripted is not None:
        raise scripted
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
            options["mock_tool_calls"] = mock.openai_tool_calls()
            options.pop("stream", None)
            options.pop("stream_options", None)
    elif api_base:
        options["api_base"] = api_base
    stream = None
    if options.get("stream"):
        build = partial(litellm.stream_chunk_builder, messages=options["messages"])
        stream = StreamReader(build, on_text, StreamWatch(limits) if limits is not None else None)
    quiet = _nobody_listens(litellm)
    direct = _direct_request(litellm, options) if mock is None and quiet and transport() == "sync" else None
    started = time.perf_counter()
    try:
        if direct is not None:
            from . import direct_call

            response = direct_call.send(litellm, direct, timeout, stream)
        elif mock is None and transport() == "async":
            response = background_loop().run(_acomplete(litellm, quiet, options, stream))
        elif quiet:
            response = contextvars.copy_context().run(_complete, litellm, quiet, options, stream)
        else:
            response = _complete(litellm, False, options, stream)
    except StreamStopped as stopped:  # a limit, not the provider: never retried
        stopped.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        raise
    except Exception as exc:
        error = translate_error(litellm, exc)
        error.partial = well_formed(stream.text) if stream is not None else ""
        raise error from None
    latency = (time.perf_counter() - started) * 1000
    answer = response_answer(response, latency, request.model, is_mock=mock is not None)
    if direct is not None:  # litellm.completion prices the response as it builds it; here, after
        answer = replace(answer, cost_usd=round_cost(_response_cost(litellm, response, request.model)))
    if mock is not None and stream is not None:
        # a mock's stream counts its text's tokens; its whole answer counts litellm's fixed numbers
        constants = litellm.constants
        prompt, completion = (
            constants.DEFAULT_MOCK_RESPONSE_PROMPT_TOKEN_COUNT,
            constants.DEFAULT_MOCK_RESPONSE_COMPLETION_TOKEN_COUNT,
        )
        answer = replace(answer, prompt_tokens=prompt, completion_tokens=completion)
    return answer


def _direct_request(litellm: Any, options: dict[str, Any]) -> Any:
    """The request the direct path (direct_call.py) sends for options, built by litellm's provider
    config (direct_request.py); None when litellm.completion sends it: SEXP_LLM_DIRECT=0, a
    provider or case the direct path does not cover, or one its request cannot be built for
    (litellm.completion then says what is wrong, in its own words)."""
    if not direct_request.enabled():
        return None
    try:
        return direct_request.prepare(litellm, options)
    except Exception:  # litellm.completion raises its own error for it, translated as ever
        return None


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
    info = _map_entry(model)
    if info is not None:
        return bool(info.get("supports_response_schema"))
    try:
        return bool(_litellm().supports_response_schema(model=model))
    except Exception:  # litellm says False for what it does not know; never fail a call over it
        return False


def _map_entry(model: str) -> dict[str, Any] | None:
    """The model's entry in litellm's map on disk (by its full name, or its bare one under its
    provider), None when the map does not list it."""
    models = model_map()
    provider, _, bare = model.partition("/")
    info = models.get(model)
    if info is None and bare and (models.get(bare) or {}).get("litellm_provider") == provider:
        info = models.get(bare)
    return info if isinstance(info, dict) else None


_CAPABILITIES = {"image": "supports_vision", "pdf": "supports_pdf_input"}


@cache
def takes_input(model: str, kind: str) -> bool | None:
    """Whether model takes `image`s or `pdf`s in a user message, as litellm says (supports_vision,
    supports_pdf_input); True for a mock/ model; None when litellm does not know the model (then
    nobody can tell: a local or new model often does). Read from the map on disk when it says."""
    if model.startswith("mock/"):
        return True
    key = _CAPABILITIES[kind]
    info = _map_entry(model)
    if info is not None and isinstance(info.get(key), bool):
        return bool(info[key])
    litellm = _litellm()
    try:
        litellm.get_model_info(model=model)
    except Exception:  # not in litellm's map: it cannot tell
        return None
    try:
        return bool(getattr(litellm, key)(model=model))
    except Exception:
        return None


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


def _response_cost(litellm: Any, response: Any, model: str) -> float:
    """What litellm charges for response, as litellm.completion would price it: from its whole
    usage (cached prompt tokens, reasoning tokens), not from its two token counts alone; 0 for a
    model litellm has no price for (asked once per process: its refusal formats a traceback)."""
    if model in _unpriced:
        return 0.0
    try:
        return float(litellm.completion_cost(completion_response=response, model=model))
    except Exception:
        _unpriced.add(model)
        return 0.0


def transport() -> str:
    """How real calls travel in this process: `sync` (in the calling thread: the direct
    path of direct_call.py where it covers the call, else litellm.completion; the default, cheapest
    in CPU) or `async` (litellm.acompletion on one shared event loop, over aiohttp), chosen by
    SEXP_LLM_TRANSPORT. Both meet pmap's goals (bench/pmap.py)."""
    return "async" if os.environ.get("SEXP_LLM_TRANSPORT", "").strip().lower() == "async" else "sync"


def _complete(litellm: Any, quiet: bool, options: dict[str, Any], stream: StreamReader | None) -> Any:
    """litellm.completion (its stream read to the end), with its logging off for this call's
    context when nobody listens."""
    flag = _unlogged_flag() if quiet else None
    if flag is not None:
        flag.set(True)
    response = litellm.completion(**options)
    return response if stream is None else stream.read(response)


async def _acomplete(litellm: Any, quiet: bool, options: dict[str, Any], stream: StreamReader | None) -> Any:
    """litellm.acompletion (its stream read to the end), with its logging off for this task's
    context when nobody listens."""
    flag = _unlogged_flag() if quiet else None
    if flag is not None:
        flag.set(True)
    response = await litellm.acompletion(**options)
    return response if stream is None else await stream.aread(response)
