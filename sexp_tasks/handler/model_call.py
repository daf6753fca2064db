"""The model call of a task's conversation: one ModelRequest in, one ModelAnswer out (SPEC §10).

A turn's answer comes, in this order: from the cassette being replayed; from `ready_answer`
(an answer reused from an earlier run, or cached); or from the model, paid for. A paid call
reserves its cost against the run's budget first and settles it after; settings the provider does
not take are left out (said once); a refused response_format is sent again without it (a new
request: structured.send_with_schema_fallback); transient errors are retried (retries.Attempts).
A recorded run journals every turn (`record_turn`), whatever its answer's source.

A paid call is streamed when the services can open a text stream (`open_stream`: each request
sent opens one, gets each piece of text as it arrives, and is closed when the request ends); its
answer is journaled, kept, cached and recorded as an unstreamed one (the
fingerprint does not hold the stream flag), and a replay sends nothing, so streams nothing.

A failed call ends the conversation: `CallFailed`, with its TaskError and the text a broken stream
gave (`partial`); the Handler makes it a FAILED result with the partial answer it has. A stream
stopped at its limits (stream_reading.py: its max_tokens, the model's output limit, the run's
budget) fails so too, and what it gave is paid for: its tokens and cost settle the reservation
and count in the notes. An unstreamed call is not stopped: its answer and usage arrive whole.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from ..results import TaskError, round_cost
from ..run_context import run_context, within
from . import llm
from .contract import TEXT_RECEIVER, HandlerConfig, HandlerServices, OpenStream, Sent
from .cost import call_reservation
from .fallbacks import chain_failure, fallback_note, turn_notes
from .model_request import ModelAnswer, ModelRequest
from .partial_answers import broken_answer, stopped_answer, stream_limits
from .provider_errors import ProviderError, falls_back
from .replay import MockReply
from .retries import Attempts, Deadline, failure
from .stream_reading import StreamLimits, StreamStopped
from .structured import refusal_warning, send_with_schema_fallback


class CallFailed(Exception):
    """A model call that fails the task (the provider's error, or the budget's refusal); partial:
    the text of a streamed answer that broke midway ("" when none); provider: the provider's
    error it was, when it was one (a chain's next model may then be asked: fallbacks.py)."""

    def __init__(self, error: TaskError, partial: str = "", provider: ProviderError | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.partial = partial
        self.provider = provider

    @property
    def falls_back(self) -> bool:
        """Whether a model chain moves to its next model after this failure (SPEC §11.4)."""
        return self.provider is not None and falls_back(self.provider)


class ModelCaller:
    """Sends the model turns of one task call, and keeps what they used: their answers (tokens,
    cost, latency) and the retries they took.

    template and in_output_section say what a mock model's unscripted reply looks like; warnings
    is the conversation's list (a setting not sent, a refused response_format: each said once);
    deadline is the task call's time limit, when it has one; models the call's chain (fallbacks.py)."""

    def __init__(
        self,
        config: HandlerConfig,
        services: HandlerServices,
        template: str,
        in_output_section: bool,
        warnings: list[str],
        deadline: Deadline | None = None,
        models: tuple[str, ...] = (),
    ) -> None:
        self.config = config
        self.services = services
        self.template = template
        self.in_output_section = in_output_section
        self.warnings = warnings
        self.deadline = deadline
        # the chain from the model the conversation is with: a model that failed a turn is left
        self.models = models
        self.chained = len(models) > 1  # a retry then says which model it was (SPEC §11.4)
        self.answers: list[ModelAnswer] = []  # every turn's, from wherever it came
        self.retries: list[dict[str, Any]] = []  # each request sent again, with its turn (SPEC §11.1)
        self._paid = 0  # the requests sent for so far (_pay)
        self.fallbacks: list[dict[str, Any]] = []  # each model that failed a turn, the next then asked

    @property
    def model(self) -> str:
        """The model the conversation's next turn asks first."""
        return self.models[0]

    def call(self, request: ModelRequest, turn: int, prompt_tokens: int) -> Sent:
        """The answer to request, the conversation's turn number `turn` (its prompt `prompt_tokens`
        long), and the request as sent: without response_format when that was dropped, to the
        chain's model that answered. A turn of a recorded run is journaled (its every model's
        attempt one step: a resumed run asks none that failed again), with the fallbacks and
        retries it took, and on resume answered from the store, with them (SPEC §6)."""
        record = self.services.record_turn
        taken = (len(self.fallbacks), len(self.retries))
        kept: dict[str, Any] = {}  # the turn's fallbacks and retries: what the journal keeps
        walked: list[bool] = []
        step = run_context().step  # the task's: its chat spans' sexp.step, whatever the journal's turn

        def answer_it() -> Sent:
            walked.append(True)
            try:
                return self._walk(request, turn, prompt_tokens, step)
            finally:
                kept.update(turn_notes(self.fallbacks[taken[0] :], self.retries[taken[1] :]))

        paid_before = self._paid
        answer, sent = answer_it() if record is None else record(request, answer_it, kept)
        if not walked:  # from the journal: its span, and the fallbacks and retries it took then
            with self.services.tracer.chat(request.for_model(sent.model), turn) as span:
                span.answered(answer)
            self.fallbacks += kept.get("fallbacks", [])
            self.retries += kept.get("retries", [])
        if self._paid == paid_before:  # not sent for: replayed, reused, cached or from the journal
            self._hand_whole(answer)
        if sent.response_format is None and request.response_format is not None:
            self._warn(refusal_warning(sent.model))  # the conversation goes on without it (§10.2)
        if sent.model in self.models:  # the conversation stays with the model that answered
            self.models = self.models[self.models.index(sent.model) :]
        self.answers.append(answer)
        return answer, sent

    def _walk(self, request: ModelRequest, turn: int, prompt_tokens: int, step: str | None) -> Sent:
        """The answer of the chain's first model that gives one (fallbacks.py), with the request as
        sent; CallFailed when one fails so that no other may be asked, or the last fails."""
        chain = self.models if request.model in self.models[:1] else (request.model,)
        failed: list[dict[str, Any]] = []
        for number, model in enumerate(chain, 1):
            try:
                return self._attempt(request.for_model(model), turn, prompt_tokens, step)
            except CallFailed as failure:
                ran_out = number == len(chain)
                passed = self.deadline is not None and self.deadline.left() <= 0
                if not failure.falls_back or ran_out or passed:
                    if not failed:
                        raise
                    error = chain_failure(failed, model, failure.error, failure.falls_back)
                    raise CallFailed(error, failure.partial) from None
                failed.append(fallback_note(turn, model, failure.error))
                self.fallbacks.append(failed[-1])
        raise AssertionError("a model chain is never empty")

    def _attempt(self, request: ModelRequest, turn: int, prompt_tokens: int, step: str | None) -> Sent:
        """One model's answer to the turn (_answer) in a `chat` span of its own (SPEC §11.4): each
        model a chain asks has one, a failed one with its error, each with the retries it took;
        the span belongs to the task's step (`step`), as `sexp trace` shows the turn."""
        retried = len(self.retries)
        with within(replace(run_context(), step=step)):  # the span's attributes are taken here
            chat = self.services.tracer.chat(request, turn)
        with chat as span:
            try:
                answer, sent = self._answer(request, turn, prompt_tokens)
            except CallFailed as failed:
                span.note({"sexp.retries": len(self.retries) - retried or None})
                span.failed(failed.error)
                raise
            span.note({"sexp.retries": len(self.retries) - retried or None})
            span.answered(answer)
        return answer, sent

    def used(self) -> dict[str, Any]:
        """The notes' record of what the turns used: usage (tokens), cost_usd and latency_ms."""
        prompt = sum(answer.prompt_tokens for answer in self.answers)
        completion = sum(answer.completion_tokens for answer in self.answers)
        return {
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
            "cost_usd": round_cost(sum(answer.cost_usd for answer in self.answers)),
            "latency_ms": round(sum(answer.latency_ms for answer in self.answers), 1),
        }

    def _answer(self, request: ModelRequest, turn: int, prompt_tokens: int) -> Sent:
        """The answer from the cassette, ready (reused or cached), or paid for; with the request as sent."""
        services = self.services
        cassette = services.cassette
        if cassette is not None and cassette.replaying:
            retried: list[dict[str, Any]] = []  # the retries it was recorded with: noted as then
            try:
                replayed, sent = cassette.replay(request, retried)
            except ProviderError as err:  # recorded failing: a chain moves on as it did
                raise CallFailed(failure(err, request.model, len(retried)), provider=err) from None
            finally:
                self._note_retries(turn, request.model, retried)
            services.budget.spend(replayed)
            return replayed, sent
        ready = services.ready_answer(request) if services.ready_answer is not None else None
        retries: list[dict[str, Any]] = []  # the ones _pay took, for the cassette
        if ready is not None:
            services.budget.spend(ready)  # a call of the run that cost nothing now
            answer, sent = ready, request
        else:
            try:
                answer, sent = self._pay(request, turn, prompt_tokens, retries)
            except CallFailed as failed:
                if cassette is not None and failed.provider is not None:
                    cassette.record_failure(request, failed.provider, retries)
                raise
            if services.keep_answer is not None:
                services.keep_answer(request, answer)
        if cassette is not None:
            cassette.record(sent, answer, retries)
        return answer, sent

    def _hand_whole(self, answer: ModelAnswer) -> None:
        """An answer not sent for, given whole, as one piece, to the Session.stream the call runs in
        (none to a terminal's display: it shows answers arriving, and this one arrived at once)."""
        receiver = TEXT_RECEIVER.get()
        if receiver is not None and answer.text:
            stream = receiver(self._label())
            try:
                stream.write(answer.text)
            finally:
                stream.close()

    def _pay(
        self, request: ModelRequest, turn: int, prompt_tokens: int, retries: list[dict[str, Any]]
    ) -> Sent:
        """The model's answer, its cost reserved before and settled after, whatever happens;
        streamed when a text stream can be opened for it (_stream_opener). retries gets the
        retries it took (also noted)."""
        self._paid += 1
        if self._stream_opener() is not None:
            request = request.streamed()
        request = self._drop_unsupported(request)
        reserved = self._reserve(request, prompt_tokens)
        answer: ModelAnswer | None = None
        attempts = Attempts(self.config, self.deadline)
        try:  # from here on, the reservation is settled whatever happens (a mock script's error too)
            mock = None
            limits = None
            if request.model.startswith("mock/"):
                mock = self.services.mock.next(self.template, self.in_output_section)
            else:
                self.services.before_sending()  # the api_base warning, once (SPEC §10.1)
                budget = self.services.budget
                limits = stream_limits(request, prompt_tokens, reserved, budget) if request.stream else None
            send = partial(self._send, attempts, mock, limits)
            config = self.config
            answer, sent = send_with_schema_fallback(request, config.api_base, config.num_retries, send)
        except ProviderError as err:
            if err.partial and not request.model.startswith("mock/"):  # a broken stream's text was paid for
                answer = broken_answer(err.partial, request.model, prompt_tokens)
                self.answers.append(answer)
            raise CallFailed(failure(err, request.model, len(attempts.retries)), err.partial, err) from None
        except StreamStopped as stop:  # what it gave is paid for: counted, and settled below
            answer = stopped_answer(stop, request.model, prompt_tokens)
            self.answers.append(answer)
            raise CallFailed(stop.error, stop.text) from None
        finally:
            self.services.budget.settle(reserved, answer)  # the real cost replaces the estimate
            retries += attempts.retries
            self._note_retries(turn, request.model, attempts.retries)
        return answer, sent

    def _note_retries(self, turn: int, model: str, retries: list[dict[str, Any]]) -> None:
        """The notes' record of the retries a request to model took (a chain's say which model)."""
        named = {"model": model} if self.chained else {}
        self.retries += [{"turn": turn, **named, **retry} for retry in retries]

    def _send(
        self,
        attempts: Attempts,
        mock: MockReply | None,
        limits: StreamLimits | None,
        request: ModelRequest,
        num_retries: int,
    ) -> ModelAnswer:
        """llm.complete's answer, sent again up to num_retries times when that may help; a streamed
        request's every attempt writes to a text stream of its own, closed when the attempt ends."""
        opener = self._stream_opener() if request.stream else None

        def attempt(timeout: float) -> ModelAnswer:
            if opener is None:
                return llm.complete(request, self.config.api_base, timeout, mock=mock, limits=limits)
            stream = opener(self._label())
            try:
                return llm.complete(
                    request, self.config.api_base, timeout, mock=mock, on_text=stream.write, limits=limits
                )
            finally:
                stream.close()

        return attempts.send(attempt, num_retries, request.response_format is not None)

    def _label(self) -> str:
        """The label of this call's text: its template's name, and under pmap the element's place
        (`greet[2]`, `greet[0][1]` nested), so that concurrent calls of one task tell apart."""
        element = run_context().element
        return self.template + (element.path if element is not None else "")

    def _stream_opener(self) -> OpenStream | None:
        """What opens this call's text streams: the Session.stream it runs in, else the
        services' open_stream; None: the call is not streamed."""
        receiver = TEXT_RECEIVER.get()
        return receiver if receiver is not None else self.services.open_stream

    def _drop_unsupported(self, request: ModelRequest) -> ModelRequest:
        """request without what litellm says the provider does not take, said once (SPEC §10.2):
        a response_format goes (a new request); a generation setting is left out by litellm's
        drop_params (an `extra` one is sent as given)."""
        native = ["response_format"] if request.response_format is not None else []
        named = [key for key in request.generation if key != "extra"]
        dropped = llm.unsupported_settings(request.model, [*named, *native])
        if "response_format" in dropped:
            dropped.remove("response_format")
            self._warn(refusal_warning(request.model))
            request = request.without_response_format()
        if dropped:
            self._warn(f"{request.model} does not take {', '.join(dropped)}; not sent")
        return request

    def _reserve(self, request: ModelRequest, prompt_tokens: int) -> float:
        """Reserve the call's cost against the run's budget (cost.call_reservation), bounded by
        its max_tokens when set; CallFailed when the budget cannot hold it. What it reserved."""
        budget = self.services.budget
        limit = request.generation.get("max_tokens")
        estimate, bound = call_reservation(budget, request.model, prompt_tokens, limit)
        refusal = budget.reserve(estimate, bound)
        if refusal is not None:
            raise CallFailed(refusal)
        return max(estimate, bound)

    def _warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)
