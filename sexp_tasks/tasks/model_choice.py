"""Which models a task call asks, and what earlier runs say of each template (for `match`)."""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..config.model_chain import model_chain
from ..errors import NoModelError
from ..runs.store import Store
from .template import TaskTemplate


def models_for(settings: Settings, template: TaskTemplate, call_models: tuple[str, ...]) -> tuple[str, ...]:
    """The call's model chain (SPEC §11.4), the first that names any, whole (chains are not
    merged): call-site model > --model, model= or :model (model_override) > the template's
    <model>s > SEXP_MODEL or sexp.toml's (model)."""
    override, default = settings.model_override, settings.model
    for models in (
        call_models,
        model_chain(override) if override else (),
        template.models,
        model_chain(default) if default else (),
    ):
        if models:
            return models
    raise NoModelError(
        f"task '{template.name}' has no model: give one with the call's (model \"...\"), --model,"
        " the template's <model>, SEXP_MODEL, or `model` in sexp.toml"
    )


def stored_scores(store_now: Store | None, store_path: str) -> dict[str, float]:
    """Mean recorded successScore per template: from the run's store, else from the store file
    when there is one (asking must not create a store)."""
    if store_now is not None:
        return store_now.success_scores()
    if not Path(store_path).is_file():
        return {}
    store = Store(store_path, create=False)
    try:
        return store.success_scores()
    finally:
        store.close()
