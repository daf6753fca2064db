"""The models' own tokenizers load from the copies litellm ships, whatever the environment says
when they are first asked for, and never from the network (a test's environment, put back
between tests, made tiktoken fetch o200k_base in CI)."""

from __future__ import annotations

import pytest

from sexp_tasks.handler import tokens


def test_a_model_s_encoding_loads_offline_after_the_environment_was_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens.count_output("warm")  # cl100k loaded (it once set TIKTOKEN_CACHE_DIR for good)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tokens.model_counter.cache_clear()

    def no_network(*args: object, **kwargs: object) -> object:
        raise AssertionError("tiktoken went to the network")

    monkeypatch.setattr("tiktoken.load.read_file", no_network)
    counter = tokens.model_counter("openai/gpt-4o-mini")
    assert counter is not None and counter("hello world") == 2


def test_an_encoding_litellm_does_not_ship_is_none_not_a_download(monkeypatch: pytest.MonkeyPatch) -> None:
    assert tokens._offline("no_such_base") is None
