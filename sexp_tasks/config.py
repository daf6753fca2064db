"""Settings: sexp.toml in the working directory, then the environment, then flags (later wins)."""

from __future__ import annotations

import math
import os
import pwd
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import UsageError
from .generation import GenerationError, check_generation, merge_generation
from .redact import mask_url, provider_key_set

DEFAULT_RECURSION_LIMIT = 10_000
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Settings:
    """Everything a run may be configured with."""

    model: str | None = None  # from sexp.toml or SEXP_MODEL: below a template's own <model>
    model_override: str | None = None  # from --model or the API's model=: above a template's <model>
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
    script_user: str | None = None  # the user scripts run as (sexp running as root), docs/security.md
    store: str = ".sexp/store.db"
    workspace: str = "."
    max_cost_usd: float | None = None
    max_depth: int = 5  # how deep subtasks may nest
    max_retries: int = 4  # how many times a rate-limited or failed model request is sent again
    request_timeout: float = 600.0  # seconds a model request may take
    # sexp.toml's [generation] table: settings sent with every call, below a template's and a call's
    generation: Mapping[str, Any] = field(default_factory=dict)
    mock_responses: str | None = None
    record: str | None = None  # a cassette to write every model call to
    replay: str | None = None  # a cassette to answer every model call from
    quiet: bool = False
    cache: bool = False  # answer a request from the store's answer cache, keep each paid answer there
    # The workspace file api_base came from ("./sexp.toml" or "./.env"; None when the user's own
    # environment or a flag gave it): a call that goes there warns once (api_base_warning).
    api_base_origin: str | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # Where each field's value came from (FLAG, ENVIRONMENT, DOTENV or TOML; several, joined by
    # ", ", for templates, which each adds to); a field not named here has its DEFAULT.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)


# Where a setting came from, as `sexp config` shows it (SPEC §10.3).
FLAG, ENVIRONMENT, DOTENV, TOML, DEFAULT = "flag", "environment", ".env", "sexp.toml", "default"
# The sources that are files of the workspace, as a warning names them.
_WORKSPACE_FILES = {TOML: "./sexp.toml", DOTENV: "./.env"}


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
    "script_user": (str,),
    "store": (str,),
    "workspace": (str,),
    "max_cost_usd": (float, int),
    "max_depth": (int,),
    "max_retries": (int,),
    "request_timeout": (float, int),
    "cache": (bool,),
    "generation": (dict,),
}

# The keys sexp.toml may set, in the order an unknown key's warning lists them.
TOML_KEYS = tuple(key for key in _TOML_TYPES if key in {f.name for f in fields(Settings)})

_ENVIRONMENT = {
    "SEXP_MODEL": "model",
    "SEXP_API_BASE": "api_base",
    "SEXP_MOCK_RESPONSES": "mock_responses",
}

# The flag each override comes from, to name it in errors.
_FLAGS = {
    "template_flags": "--templates",
    "mock_responses": "--mock-responses",
    "record": "--record",
    "replay": "--replay",
    "workspace": "--workspace",
    "max_cost_usd": "--max-cost",
    "script_user": "--script-user",
    "max_retries": "--max-retries",
    "request_timeout": "--request-timeout",
}


# The environment variables load_dotenv set, with their values: the ones whose source is DOTENV.
_from_dotenv: dict[str, str] = {}


def _finite(test: Callable[[float], bool]) -> Callable[[Any], bool]:
    return lambda value: math.isfinite(value) and test(value)


# What a setting may hold, and how to say so: the check and "must be ..." (SPEC §10.1).
_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "concurrency": (lambda n: n >= 1, "at least 1"),
    "max_turns": (lambda n: n >= 1, "at least 1"),
    "max_tool_calls_per_turn": (lambda n: n >= 1, "at least 1"),
    "recursion_limit": (lambda n: n >= 1, "at least 1"),
    "max_depth": (lambda n: n >= 0, "0 or more"),
    "max_retries": (lambda n: n >= 0, "0 or more"),
    "request_timeout": (_finite(lambda s: s > 0), "a positive number of seconds"),
    "script_timeout": (_finite(lambda s: s > 0), "a positive number of seconds"),
    "script_output_limit": (lambda n: n >= 0, "0 or more bytes"),
    "script_user": (lambda name: _is_user(name), "the name of a user of this machine"),
    "max_context_window_fraction": (_finite(lambda f: 0 < f <= 1), "a fraction above 0 and at most 1"),
    "max_cost_usd": (_finite(lambda usd: usd > 0), "a positive number of dollars"),
    "template_flags": (lambda dirs: all(Path(d).is_dir() for d in dirs), "a directory"),
    "workspace": (lambda path: Path(path).is_dir(), "a directory"),
    "mock_responses": (lambda path: Path(path).is_file(), "a file of replies"),
    "replay": (lambda path: Path(path).is_file(), "a cassette file"),
    "record": (lambda path: _writable_file_path(Path(path)), "a cassette file to write, not a directory"),
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
        if key not in os.environ:
            os.environ[key] = _from_dotenv[key] = value
    return warnings


def api_base_warning(settings: Settings) -> str | None:
    """The warning due before a model call goes to settings' api_base when it comes from a file
    of the workspace (a cloned repository may hold one) while a provider key is set: the key goes
    wherever api_base points. None when there is nothing to warn about."""
    if not settings.api_base or settings.api_base_origin is None or not provider_key_set():
        return None
    return (
        f"api_base {mask_url(settings.api_base)} comes from {settings.api_base_origin}; "
        "your provider key will be sent there"
    )


def load_settings(directory: Path, overrides: dict[str, Any]) -> Settings:
    """Settings from directory/sexp.toml, the environment, and flag overrides, with where each
    came from (Settings.sources)."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    toml_path = directory / "sexp.toml"
    if toml_path.is_file():
        values.update(_read_toml(toml_path, warnings))
        sources.update(dict.fromkeys(values, TOML))
    for variable, key in _ENVIRONMENT.items():
        if os.environ.get(variable):
            values[key] = check_setting(key, os.environ[variable], variable)
            sources[key] = environment_source(variable)
    if os.environ.get("SEXP_TEMPLATES"):
        values["templates"] = (*values.get("templates", ()), *os.environ["SEXP_TEMPLATES"].split(os.pathsep))
        sources["templates"] = _also(sources.get("templates"), environment_source("SEXP_TEMPLATES"))
    for key, value in overrides.items():
        if value is not None:
            checked = check_setting(key, value, _FLAGS.get(key, key))
            if key == "generation":  # an API's generation= adds to sexp.toml's table, key by key
                checked = merge_generation(values.get(key, {}), checked)
            values[key] = checked
            sources[key] = FLAG
    values["api_base_origin"] = _WORKSPACE_FILES.get(sources.get("api_base", DEFAULT))
    return replace(Settings(**values), warnings=tuple(warnings), sources=sources)


def environment_source(variable: str) -> str:
    """DOTENV for a variable that load_dotenv set (and that still holds that value), else ENVIRONMENT."""
    from_file = _from_dotenv.get(variable)
    return DOTENV if from_file is not None and os.environ.get(variable) == from_file else ENVIRONMENT


def _also(earlier: str | None, source: str) -> str:
    """The sources of a setting that adds to what earlier sources gave (templates)."""
    return source if earlier is None else f"{earlier}, {source}"


# What `sexp config` shows, in order: the sexp.toml keys, then the settings only flags and the
# environment give (SPEC §10.3).
SHOWN_SETTINGS = (*TOML_KEYS, "mock_responses", "record", "replay")


def settings_in_force(settings: Settings) -> list[tuple[str, Any, str]]:
    """(key, value, source) for each setting `sexp config` shows. `model` is --model's when given,
    and `templates` every directory added to the template library, in the order they load."""
    shown = []
    for key in SHOWN_SETTINGS:
        value, source = getattr(settings, key), settings.sources.get(key, DEFAULT)
        if key == "model" and settings.model_override is not None:
            value, source = settings.model_override, settings.sources.get("model_override", FLAG)
        if key == "templates" and settings.template_flags:
            value = (*value, *settings.template_flags)
            source = _also(settings.sources.get("templates"), settings.sources.get("template_flags", FLAG))
        shown.append((key, value, source))
    return shown


def provider_keys() -> list[tuple[str, str, str]]:
    """(name, value, source) of every provider key in the environment, as litellm reads them
    (`*_API_KEY`, `*_APIKEY`), by name. The value is for callers to mask, never to show."""
    names = sorted(name for name in os.environ if name.upper().endswith(("_API_KEY", "_APIKEY")))
    return [(name, os.environ[name], environment_source(name)) for name in names]


def check_setting(key: str, value: Any, label: str) -> Any:
    """value, when it is in the range setting key allows; else a UsageError naming label."""
    allowed = _RANGES.get(key)
    if allowed is not None and not allowed[0](value):
        shown = ", ".join(map(repr, value)) if isinstance(value, tuple) else repr(value)
        raise UsageError(f"{label} must be {allowed[1]} (got {shown})")
    return value


def check_type(key: str, value: Any, label: str) -> None:
    """A UsageError naming label when value has not the type sexp.toml key takes."""
    types = _TOML_TYPES[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise UsageError(f"{label} has the wrong type ({type(value).__name__})")


def _is_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except (KeyError, TypeError):
        return False
    return True


def _writable_file_path(path: Path) -> bool:
    """Whether a file could be written at path: not a directory, and below a directory (made if need be)."""
    if path.is_dir():
        return False
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent.is_dir()


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    import tomllib  # lazy: only a sexp.toml needs it (a start-up saving: cli/startup.py)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{path.name}: {err}") from None
    except UnicodeDecodeError as err:
        raise UsageError(f"{path.name}: not UTF-8 text (byte {err.start + 1})") from None
    except OSError as err:
        raise UsageError(f"{path.name}: cannot read it: {err.strerror or err}") from None
    _refuse_non_finite(data, path)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in TOML_KEYS:
            known = ", ".join(TOML_KEYS)
            warnings.append(f"{path.name}: unknown setting '{key}' ignored; known settings: {known}")
            continue
        check_type(key, value, f"{path.name}: '{key}'")
        if key == "generation":
            try:
                values[key] = check_generation(value, f"{path.name}: [generation]")
            except GenerationError as err:
                raise UsageError(str(err)) from None
            continue
        values[key] = tuple(str(v) for v in value) if isinstance(value, list) else value
        check_setting(key, values[key], f"{path.name}: '{key}'")
    return values


def _refuse_non_finite(data: dict[str, Any], path: Path) -> None:
    """A UsageError at the line of the first nan or inf a table of the file holds (TOML allows
    them; no setting takes one, and JSON cannot send one), naming its key."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        keys, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value) and len(keys) > 1:  # a top key's range says
            table, key = ".".join(keys[:-1]), keys[-1]
            named = f"[{table}] {key}" if table else f"'{key}'"
            line = _line_of(path, keys)
            where = f"{path.name}:{line}" if line else path.name
            raise UsageError(f"{where}: {named} must be a finite number (got {value})")
        if isinstance(value, dict):
            stack += [((*keys, str(k)), v) for k, v in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(keys, v) for v in reversed(value)]


def _line_of(path: Path, keys: tuple[str, ...]) -> int | None:
    """The line (from 1) where keys[-1] is set under the table keys[:-1] (a `[table]` header, or
    a dotted or inline form on one line), when it can be told; None otherwise."""
    table, key = ".".join(keys[:-1]), re.escape(keys[-1])
    setting = re.compile(rf"""^\s*(?:[\w.-]+\.)?["']?{key}["']?\s*=|[{{,]\s*["']?{key}["']?\s*=""")
    current = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1)
        elif (current in (table, "") or table.startswith(current + ".")) and setting.search(line):
            return number
    return None
