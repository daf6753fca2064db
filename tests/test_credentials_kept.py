"""redact.credentials keeps its answer while the environment is unchanged, and reads it again
when a key is set, changed or deleted (a batch row asks it several times per step)."""

from __future__ import annotations

import pytest

from sexp_tasks.redact import credentials, scrub


def test_a_key_set_later_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    before = credentials()
    assert "sk-fake-later-set-123456" not in before
    monkeypatch.setenv("LATER_API_KEY", "sk-fake-later-set-123456")
    assert "sk-fake-later-set-123456" in credentials()
    assert scrub("x sk-fake-later-set-123456 y", shaped=False) == "x *** y"


def test_a_changed_or_deleted_key_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHANGING_TOKEN", "first-value-0001")
    assert "first-value-0001" in credentials()
    monkeypatch.setenv("CHANGING_TOKEN", "second-value-0002")
    found = credentials()
    assert "second-value-0002" in found and "first-value-0001" not in found
    monkeypatch.delenv("CHANGING_TOKEN")
    assert "second-value-0002" not in credentials()


def test_the_answer_is_the_callers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OWN_SECRET_KEY", "own-value-000001")
    credentials().clear()  # a caller changing its list changes no later answer
    assert "own-value-000001" in credentials()
