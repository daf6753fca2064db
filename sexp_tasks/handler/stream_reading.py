"""A streamed answer read as it arrives, and stopped at its limits (issue 21).

llm.py hands the reader litellm's stream; the chunks are read duck-typed (`choices[0].delta` with
its `content` and `tool_calls`), so this module needs no litellm. Each piece of text goes to
on_text as it arrives, every chunk is kept for the one response they build, and the text so far is
kept (a broken or stopped stream's partial answer).

A call with limits is watched as it is read (StreamWatch): its output (the text and the tool
calls' arguments) is counted in tokens, and its cost so far priced. The stream is stopped —
closed, which closes its HTTP connection — and the call fails (StreamStopped) when the output
passes the request's max_tokens (a server that ignores it), or the model's output limit when none
is set, or when its cost so far would take the run's spending over its budget. An unstreamed call
is not watched: its answer and usage arrive whole, and are counted after (handler/cost.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..results import TaskError
from .tokens import count_output

# Output is counted with the model's own tokenizer where tiktoken has it offline (OpenAI's), and
# a stream is stopped once the count passes its limit by MIN_SLACK tokens. Other models' output is
# counted with cl100k, which counts their tokens only roughly: within a tenth or two for Latin
# text, but up to ~3.5 times too many for Devanagari or Chinese (cl100k vs o200k, measured). A
# stream is stopped only when it is surely over: its rough count divided by ROUGH_LATIN, or by
# ROUGH_OTHER when a fifth of its characters or more are not ASCII. Late rather than wrong: a
# server honouring max_tokens is never stopped, and a runaway one is stopped all the same.
MIN_SLACK = 4
ROUGH_LATIN = 1.25
ROUGH_OTHER = 4.0


class StreamStopped(Exception):
    """A stream stopped at a limit: error (RESOURCE_EXHAUSTION `output` or `cost`), the text it
    gave, its output tokens as counted, and what it cost so far (USD)."""

    def __init__(self, error: TaskError, text: str, output_tokens: int, cost_usd: float) -> None:
        super().__init__(error.message)
        self.error = error
        self.text = text
        self.output_tokens = output_tokens
        self.cost_usd = cost_usd
        self.latency_ms = 0.0  # set by whoever timed the request


@dataclass(frozen=True)
class StreamLimits:
    """What one streamed call may take: max_output tokens (None: no limit) named by limit_name
    (`max_tokens`, or the model's output limit); cost(n), the call's cost with n output tokens;
    over_budget(cost), the budget's error for a call that would cost that much, None while it fits."""

    max_output: int | None
    limit_name: str
    cost: Callable[[int], float]
    over_budget: Callable[[float], TaskError | None]
    # The model's own token counter (tokens.model_counter), or None: counted roughly (cl100k)
    count: Callable[[str], int] | None = None


class StreamWatch:
    """Counts a stream's output as it arrives; StreamStopped once it is surely past one of its
    limits (see ROUGH_LATIN)."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        most = limits.max_output
        self.threshold = None if most is None else most + MIN_SLACK
        self.pieces: list[str] = []  # the output so far: text and tool-call arguments
        self.tokens = 0  # as counted: the model's count, or cl100k's rough one
        self.characters = 0
        self.non_ascii = 0

    def take(self, piece: str, text: str) -> None:
        """Count piece (text is the answer's text so far, for the error); StreamStopped when the
        output, or its cost, is surely past a limit."""
        self.pieces.append(piece)
        self.characters += len(piece)
        self.non_ascii += sum(1 for char in piece if ord(char) > 127)
        count = self.limits.count or count_output
        self.tokens += count(piece)  # pieces are counted apart: a count a little high
        if self.threshold is not None and self.surely() > self.threshold:
            self.tokens = count("".join(self.pieces))  # refined: the whole output at once
            if self.surely() > self.threshold:
                raise self._stopped(self._too_long(), text)
        refusal = self.limits.over_budget(self.limits.cost(self.surely()))
        if refusal is not None:
            raise self._stopped(refusal, text)

    def surely(self) -> int:
        """The fewest tokens the output can be: the count itself when it is the model's own."""
        if self.limits.count is not None:
            return self.tokens
        rough = ROUGH_OTHER if self.non_ascii * 5 >= self.characters else ROUGH_LATIN
        return int(self.tokens / rough)

    def _too_long(self) -> TaskError:
        most, name = self.limits.max_output, self.limits.limit_name
        message = f"the answer passed {name} ({most} tokens) at {self.tokens} tokens: its stream was stopped"
        metrics = {"output_tokens": self.tokens, "max_tokens": most}
        return TaskError("RESOURCE_EXHAUSTION", message, resource="output", metrics=metrics)

    def _stopped(self, error: TaskError, text: str) -> StreamStopped:
        return StreamStopped(error, text, self.tokens, self.limits.cost(self.tokens))


class StreamReader:
    """A streamed answer read as it arrives: each piece of text handed to on_text, every chunk kept
    for build (the chunks' one response), the text so far kept; watched when watch is given."""

    def __init__(
        self,
        build: Callable[[list[Any]], Any],
        on_text: Callable[[str], None] | None,
        watch: StreamWatch | None = None,
    ) -> None:
        self.build = build
        self.on_text = on_text
        self.watch = watch
        self.chunks: list[Any] = []
        self.pieces: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def read(self, chunks: Any) -> Any:
        """The response the stream's chunks make, read to the end; StreamStopped, the stream
        closed, when a limit stops it."""
        try:
            for chunk in chunks:
                self._take(chunk)
        except StreamStopped:
            close = getattr(chunks, "close", None)
            if callable(close):
                close()
            raise
        return self._built()

    async def aread(self, chunks: Any) -> Any:
        """read, for an async stream."""
        try:
            async for chunk in chunks:
                self._take(chunk)
        except StreamStopped:
            close = getattr(chunks, "aclose", None)
            if callable(close):
                await close()
            raise
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
        if self.watch is not None:
            for piece in [text or "", *_arguments(delta)]:
                if piece:
                    self.watch.take(piece, self.text)

    def _built(self) -> Any:
        """One response of the chunks (None for a stream that gave none: an answer without choices)."""
        return self.build(self.chunks) if self.chunks else None


def _arguments(delta: Any) -> list[str]:
    """The tool calls' name and argument pieces a chunk's delta carries."""
    found = []
    for call in getattr(delta, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        found += [getattr(function, "name", None) or "", getattr(function, "arguments", None) or ""]
    return found
