"""The one request of a model turn and its one fingerprint (handler/model_request.py)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sexp_tasks.handler.model_request import ModelAnswer, ModelRequest

MESSAGES = [{"role": "system", "content": "be brief é"}, {"role": "user", "content": "hi \ud800 there"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
SCHEMA = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}

# The keys the code before this module wrote (main at 9e304f8), for the same three requests:
# a cassette's (model, messages, tools) and a journaled turn's. Old stores and cassettes hold them.
LEGACY = [
    (
        (None, {}, None),
        "d56b142028470b6b681ee26b718a6f5af5be365f9c9c3f944beb524ee0c2e93a",
        "d70410c4c30a6da29b3329cbd33e5c1c",
    ),
    (
        (TOOLS, {"temperature": 0.2, "max_tokens": None}, None),
        "64570846040b9e0d35dfbe2c7f1e1c0d46b0784a2ecba80a4155e6cbd46e6f77",
        "d649279067ef939ecb8e80f5d15c8f25",
    ),
    (
        (None, {}, SCHEMA),
        "d56b142028470b6b681ee26b718a6f5af5be365f9c9c3f944beb524ee0c2e93a",
        "0755bde5c6ab84baf25e938ff70d3e25",
    ),
]


@pytest.mark.parametrize(("parts", "cassette_key", "turn_key"), LEGACY)
def test_legacy_keys_are_the_ones_earlier_versions_wrote(parts, cassette_key, turn_key):
    request = ModelRequest.build("openai/gpt-4o-mini", MESSAGES, *parts)
    assert request.legacy_cassette_key() == cassette_key
    assert request.legacy_turn_key() == turn_key


def test_a_lone_surrogate_is_sent_as_the_replacement_character():
    request = ModelRequest.build("m", MESSAGES)
    assert request.messages[1]["content"] == "hi \ufffd there"


def test_the_request_is_a_copy_the_caller_cannot_change():
    messages = copy.deepcopy(MESSAGES)
    request = ModelRequest.build("m", messages)
    before = request.fingerprint()
    messages.append({"role": "user", "content": "later"})
    messages[0]["content"] = "changed"
    assert len(request.messages) == 2
    assert ModelRequest.build("m", MESSAGES).fingerprint() == before


def test_a_record_reads_back_as_the_same_request():
    request = ModelRequest.build("m", MESSAGES, TOOLS, {"temperature": 0.5, "extra": {"top_k": 3}}, SCHEMA)
    again = ModelRequest.from_record(request.as_record())
    assert again == request
    assert again.fingerprint() == request.fingerprint()


def test_streaming_does_not_change_the_fingerprint_and_dropping_the_format_does():
    request = ModelRequest.build("m", MESSAGES, response_format=SCHEMA)
    assert request.streamed().fingerprint() == request.fingerprint()
    assert request.streamed().litellm_arguments()["stream"] is True
    plain = request.without_response_format()
    assert plain.response_format is None and request.response_format == SCHEMA
    assert plain.fingerprint() != request.fingerprint()


def test_litellm_arguments_send_extra_settings_as_given():
    request = ModelRequest.build("m", MESSAGES, TOOLS, {"temperature": 0.1, "extra": {"top_k": 4}}, SCHEMA)
    arguments = request.litellm_arguments()
    assert arguments["temperature"] == 0.1 and arguments["top_k"] == 4
    assert arguments["allowed_openai_params"] == ["top_k"]
    assert arguments["tools"] == TOOLS and arguments["response_format"] == SCHEMA
    assert "stream" not in arguments
    bare = ModelRequest.build("m", MESSAGES).litellm_arguments()
    assert set(bare) == {"model", "messages"}


texts = st.text(max_size=20)
settings = st.dictionaries(st.sampled_from(["temperature", "top_p", "max_tokens", "seed"]), st.integers(0, 9))


@given(
    model=texts,
    content=texts,
    generation=settings,
    tool=st.none() | texts,
    schema=st.none() | texts,
    which=st.sampled_from(["model", "content", "generation", "tool", "schema"]),
)
def test_a_fingerprint_changes_with_any_part_of_the_request(model, content, generation, tool, schema, which):
    def build(model, content, generation, tool, schema):
        tools = [] if tool is None else [{"type": "function", "function": {"name": tool}}]
        format_ = None if schema is None else {"type": "json_schema", "json_schema": {"name": schema}}
        return ModelRequest.build(model, [{"role": "user", "content": content}], tools, generation, format_)

    parts = {"model": model, "content": content, "generation": generation, "tool": tool, "schema": schema}
    before = build(**parts)
    changed = dict(parts)
    if which == "generation":
        changed["generation"] = {**generation, "temperature": generation.get("temperature", 0) + 1}
    elif which in ("tool", "schema"):
        changed[which] = (parts[which] or "") + "x"
    else:
        changed[which] = parts[which] + "x"
    assert build(**changed).fingerprint() != before.fingerprint()
    assert build(**parts).fingerprint() == before.fingerprint()


def test_an_answer_reads_what_earlier_versions_kept():
    old = {
        "content": "hello",
        "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{}"}],
        "finish_reason": "length",
        "prompt_tokens": 3,
        "completion_tokens": 4,
        "cost_usd": 0.5,
        "latency_ms": 12.0,
    }
    answer = ModelAnswer.from_record(old)
    assert answer.text == "hello" and answer.finish_reason == "length" and answer.tokens == 7
    assert answer.source == "paid" and answer.model is None
    assert ModelAnswer.from_record(answer.as_record()) == answer
    reused = answer.answered_from("reused")
    assert (reused.source, reused.cost_usd, reused.latency_ms, reused.text) == ("reused", 0.0, 0.0, "hello")
    assert answer.cost_usd == 0.5
