"""A model chain (SPEC §11.4): the models a task call tries in order, the next one when the one
before failed with a provider error after its retries. Wherever a model is named (a template's
<model>, defatom's `(model ...)`, a call's `model`, `--model`, `SEXP_MODEL`, sexp.toml, the API's
`model=`) a comma separates the models of a chain, and a list names them one by one."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UsageError


class ModelChainError(ValueError):
    """A model chain naming an empty model (`"a,,b"`, `""`, `[]`), or a name that is not text."""


def model_chain(names: str | Iterable[object]) -> tuple[str, ...]:
    """The models names gives, in order: a text split at its commas, or each of a list's texts
    so split; ModelChainError for an empty name, a chain of none, or a name that is not text."""
    given = [names] if isinstance(names, str) else list(names)
    chain: list[str] = []
    for name in given:
        if not isinstance(name, str):
            raise ModelChainError(f"a model is named by a string, not {type(name).__name__}")
        parts = [part.strip() for part in name.split(",")]
        if not all(parts):
            raise ModelChainError(f"an empty model name in {name!r} (models are separated by commas)")
        chain += parts
    if not chain:
        raise ModelChainError("no model named (an empty list)")
    return tuple(chain)


def model_setting(value: object, where: str) -> str:
    """The `model` setting as Settings holds it: one model, or a chain joined by commas (a list
    from sexp.toml or the API joined); a UsageError naming where when it names an empty model."""
    try:
        chain = model_chain(value if isinstance(value, (str, list, tuple)) else [value])
    except ModelChainError as err:
        raise UsageError(f"{where}: {err}") from None
    return ",".join(chain)
