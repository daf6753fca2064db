"""The model call's reuse and cache hooks (HandlerServices.ready_answer and keep_answer, SPEC §11.2)
are there only when a run asks for them: with neither `--reuse` nor the cache, both are None, so
an unrecorded program computes no request fingerprint it does not need."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

import sexp_tasks
from sexp_tasks.config import Settings
from sexp_tasks.handler.model_request import ModelRequest
from sexp_tasks.runtime import Runtime


def runtime(workspace: Path, **settings: Any) -> Runtime:
    given = Settings(workspace=str(workspace), store=str(workspace / "store.db"), **settings)
    return Runtime(given, out=io.StringIO(), err=io.StringIO(), load_templates=False)


def test_without_reuse_or_cache_there_are_no_hooks(tmp_path: Path) -> None:
    services = runtime(tmp_path).tasks.services()
    assert (services.ready_answer, services.keep_answer) == (None, None)


def test_the_cache_setting_gives_both_hooks(tmp_path: Path) -> None:
    services = runtime(tmp_path, cache=True).tasks.services()
    assert services.ready_answer is not None and services.keep_answer is not None
    assert not (tmp_path / "store.db").exists()  # the cache opens its store when first asked


def test_an_unrecorded_call_computes_no_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(self: ModelRequest) -> str:
        raise AssertionError("a fingerprint nobody needs")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ModelRequest, "fingerprint", refused)
    program = '(defatom t (instructions "Say hi.")) (task-content (t))'
    assert sexp_tasks.run(program, model="mock/demo", quiet=True) == "mock response 1 for t"
