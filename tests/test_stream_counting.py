"""A stream is stopped at a limit only when it is surely over it (review of issue 21): output in a
script other than Latin, which cl100k counts up to ~3.5 times too high for other tokenizers, is
not stopped within its max_tokens; a model whose own tokenizer tiktoken has offline (OpenAI's)
is counted exactly; a runaway stream is stopped all the same."""

from __future__ import annotations

import pytest

from sexp_tasks.handler.stream_reading import StreamLimits, StreamStopped, StreamWatch
from sexp_tasks.handler.tokens import count_output, model_counter

HINDI = "यह एक लंबा उत्तर है जो हिंदी में लिखा गया है और इसमें कई शब्द हैं। "


def watch(most: int, model: str | None = None) -> StreamWatch:
    counter = model_counter(model) if model else None
    return StreamWatch(StreamLimits(most, "max_tokens", lambda n: 0.0, lambda cost: None, counter))


def feed(watched: StreamWatch, text: str) -> None:
    for word in text.split(" "):
        watched.take(word + " ", "")


def test_openai_models_are_counted_by_their_own_tokenizer_offline() -> None:
    o200k = model_counter("openai/gpt-4o-mini")
    assert o200k is not None and model_counter("gpt-4o") is not None
    assert o200k(HINDI) < count_output(HINDI) / 2  # cl100k counts this text more than twice as high
    assert model_counter("anthropic/claude-3-5-sonnet-20240620") is None
    assert model_counter("openai/some-local-model") is None


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", None])
def test_non_latin_text_within_its_max_tokens_is_never_stopped(model: str | None) -> None:
    text = HINDI * 8
    real = model_counter("openai/gpt-4o-mini")(text)  # type: ignore[misc]
    assert count_output(text) > real * 2  # what made a stream within its limit stop before
    watched = watch(real, model)
    feed(watched, text)  # no StreamStopped


def test_a_runaway_non_latin_stream_is_stopped_all_the_same() -> None:
    watched = watch(50)
    with pytest.raises(StreamStopped):
        feed(watched, HINDI * 200)


def test_an_openai_model_s_stream_is_stopped_just_past_its_limit() -> None:
    watched = watch(40, "openai/gpt-4o-mini")
    with pytest.raises(StreamStopped) as stopped:
        feed(watched, "word " * 200)
    assert 40 < stopped.value.output_tokens <= 40 + 4 + 2
