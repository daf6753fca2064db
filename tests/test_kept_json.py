"""What the store keeps of a value (runs/store.py kept_json): the exact JSON, but for any
credential the environment holds, masked as *** wherever a string holds it. The quick path (no
secret shows in the JSON text: nothing to walk) must keep exactly what walking every string does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sexp_tasks.runs.store import kept_json

SECRETS = ["sk-fake-kept-1234", "ключ-fake-ü", 'tok"en\\fake']


def walked(value: Any, secrets: list[str], ensure_ascii: bool) -> str:
    """The reference: every string walked and masked, then dumped."""

    def masked(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return masked(item)
        if isinstance(item, dict):
            return {walk(key): walk(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner) for inner in item]
        return item

    return json.dumps(walk(value), ensure_ascii=ensure_ascii)


texts = st.one_of(
    st.text(max_size=12), st.sampled_from(SECRETS).map(lambda s: f"a {s} b"), st.sampled_from(SECRETS)
)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)


@contextmanager
def secrets_in_environment() -> Iterator[None]:
    """The secrets as keys in the environment (set inside each test: conftest clears keys before
    every test)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", SECRETS[0])
        patch.setenv("ANTHROPIC_API_KEY", SECRETS[1])
        patch.setenv("MISTRAL_API_KEY", SECRETS[2])
        yield


@settings(max_examples=300, deadline=None)
@given(value=values, ensure_ascii=st.booleans())
def test_kept_json_masks_exactly_what_walking_every_string_does(value: Any, ensure_ascii: bool) -> None:
    with secrets_in_environment():
        assert kept_json(value, ensure_ascii) == walked(value, SECRETS, ensure_ascii)


def test_a_secret_is_never_kept() -> None:
    with secrets_in_environment():
        kept = kept_json({"reply": f"the key is {SECRETS[1]}", SECRETS[2]: [SECRETS[0]]}, ensure_ascii=True)
    assert json.loads(kept) == {"reply": "the key is ***", "***": ["***"]}
    assert not any(secret in json.loads(kept)["reply"] for secret in SECRETS)
