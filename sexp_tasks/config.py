"""Settings: sexp.toml in the working directory, then the environment, then flags (later wins)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import UsageError

DEFAULT_RECURSION_LIMIT = 10_000
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Settings:
    """Everything a run may be configured with."""

    model: str | None = None  # from sexp.toml or SEXP_MODEL: below a template's own <model>
    model_override: str | None = None  # from --model: above a template's <model>
    api_base: str | None = None
    templates: tuple[str, ...] = ()  # from sexp.toml and SEXP_TEMPLATES
    template_flags: tuple[str, ...] = ()  # from --templates, loaded last
    concurrency: int = 8
    max_turns: int = 10
    max_tool_calls_per_turn: int = 16
    max_context_window_fraction: float = 0.8
    recursion_limit: int = DEFAULT_RECURSION_LIMIT
    script_timeout: float = 60.0
    script_output_limit: int = 1024 * 1024
    store: str = ".sexp/store.db"
    workspace: str = "."
    max_cost_usd: float | None = None
    max_depth: int = 5  # how deep subtasks may nest
    mock_responses: str | None = None
    record: str | None = None  # a cassette to write every model call to
    replay: str | None = None  # a cassette to answer every model call from
    quiet: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)


_TOML_TYPES: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "api_base": (str,),
    "templates": (list,),
    "concurrency": (int,),
    "max_turns": (int,),
    "max_tool_calls_per_turn": (int,),
    "max_context_window_fraction": (float, int),
    "recursion_limit": (int,),
    "script_timeout": (float, int),
    "script_output_limit": (int,),
    "store": (str,),
    "workspace": (str,),
    "max_cost_usd": (float, int),
    "max_depth": (int,),
}

_ENVIRONMENT = {
    "SEXP_MODEL": "model",
    "SEXP_API_BASE": "api_base",
    "SEXP_MOCK_RESPONSES": "mock_responses",
}


def load_dotenv(directory: Path) -> list[str]:
    """Read KEY=VALUE lines from directory/.env into the environment, never overriding it.

    Returns warnings for lines that cannot be environment variables; they are skipped.
    """
    path = directory / ".env"
    warnings: list[str] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return warnings
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue  # like other .env readers, ignore what is not an assignment
        key, _, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not _ENV_NAME.match(key) or "\0" in value:
            warnings.append(f".env:{number}: not a NAME=value line; skipped")
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        os.environ.setdefault(key, value)
    return warnings


def load_settings(directory: Path, overrides: dict[str, Any]) -> Settings:
    """Settings from directory/sexp.toml, the environment, and flag overrides."""
    values: dict[str, Any] = {}
    warnings: list[str] = []
    toml_path = directory / "sexp.toml"
    if toml_path.is_file():
        values.update(_read_toml(toml_path, warnings))
    for variable, key in _ENVIRONMENT.items():
        if os.environ.get(variable):
            values[key] = os.environ[variable]
    if os.environ.get("SEXP_TEMPLATES"):
        values["templates"] = (*values.get("templates", ()), *os.environ["SEXP_TEMPLATES"].split(os.pathsep))
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = Settings(**values)
    if settings.recursion_limit < 1:
        raise UsageError("recursion_limit must be at least 1")
    if settings.max_tool_calls_per_turn < 1:
        raise UsageError("max_tool_calls_per_turn must be at least 1")
    return replace(settings, warnings=tuple(warnings))


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{path.name}: {err}") from None
    known = {f.name for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _TOML_TYPES or key not in known:
            warnings.append(f"{path.name}: unknown setting '{key}' ignored")
            continue
        if not isinstance(value, _TOML_TYPES[key]) or isinstance(value, bool):
            raise UsageError(f"{path.name}: '{key}' has the wrong type ({type(value).__name__})")
        values[key] = tuple(str(v) for v in value) if isinstance(value, list) else value
    return values
