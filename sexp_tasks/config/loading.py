"""Loading settings: sexp.toml in the working directory, then the environment, then a command's
flags or the Python API's keywords (later wins; SPEC §10.1, §11.1). Every door reads the one
table (setting_table.py), and every value is checked here, once, named as its door names it:
`sexp.toml: 'max_turns'`, `SEXP_MOCK_RESPONSES`, `--max-cost`, `max_cost_usd`."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..redact import mask_url, provider_key_set
from .setting_table import API_SETTINGS, SETTING_ROWS, SETTINGS, SHOWN_SETTINGS, TOML_KEYS, Setting, Settings

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Where a setting came from, as `sexp config` shows it (SPEC §10.3).
FLAG, ENVIRONMENT, DOTENV, TOML, DEFAULT = "flag", "environment", ".env", "sexp.toml", "default"
# The sources that are files of the workspace, as a warning names them.
_WORKSPACE_FILES = {TOML: "./sexp.toml", DOTENV: "./.env"}

# The environment variables load_dotenv set, with their values: the ones whose source is DOTENV.
_from_dotenv: dict[str, str] = {}


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


def load_settings(directory: Path, given: Mapping[str, Any], *, from_api: bool = False) -> Settings:
    """Settings from directory/sexp.toml, the environment, then given (by setting name, None for
    not given): a command's flags, or with from_api the Python API's keywords, which are checked
    before sexp.toml is read. Each value's source is in Settings.sources; a bad value is a
    UsageError."""
    # The API's keywords are checked before sexp.toml is read, a command's flags after it: which
    # error comes first when both are bad, as the two doors always did.
    early = _accepted(given, from_api) if from_api else None
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    toml_path = directory / "sexp.toml"
    if toml_path.is_file():
        values.update(_read_toml(toml_path, warnings))
        sources.update(dict.fromkeys(values, TOML))
    for row in SETTINGS:
        if row.env is None or not os.environ.get(row.env):
            continue
        text = os.environ[row.env]
        if row.convert is not None:  # a model chain: its own separator, not the path list's
            value = row.convert(text, row.env)
        else:
            value = tuple(text.split(os.pathsep)) if list in row.types else text
        if row.ranked is None:
            _in_range(row, value, row.env)
        source = environment_source(row.env)
        if row.merge is not None and row.name in values:  # it adds to sexp.toml's
            value, source = row.merge(values[row.name], value), _also(sources[row.name], source)
        values[row.name], sources[row.name] = value, source
    loaded = replace(Settings(**values), warnings=tuple(warnings), sources=sources)
    return _ranked(loaded, early if early is not None else _accepted(given, False))


def override(settings: Settings, given: Mapping[str, Any]) -> Settings:
    """settings with given (by setting name) as a command's flags give them: checked, ranking as
    flags rank (`{"model": M}` beats a template's <model>, as --model does: the REPL's :model)."""
    return _ranked(settings, _accepted(given, False))


def _accepted(given: Mapping[str, Any], from_api: bool) -> dict[str, Any]:
    """The given values (None: not given), checked and as their settings hold them, by name. A
    flag's value is named by its flag, the API's by its keyword; an unknown name is refused with
    the known ones."""
    known = API_SETTINGS if from_api else tuple(SETTING_ROWS)
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UsageError(f"unknown setting '{unknown[0]}'; known settings: {', '.join(known)}")
    accepted: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        row = SETTING_ROWS[name]
        if list in row.types and row.convert is None:  # directories: one, or a list of them
            value = _listed(value)
        _of_type(row, value, f"'{name}'")
        if row.convert is not None:
            value = row.convert(value, name)
        _in_range(row, value, name if from_api or row.flag is None else row.flag)
        accepted[name] = value
    return accepted


def _ranked(settings: Settings, accepted: Mapping[str, Any]) -> Settings:
    """settings with the accepted values of flags or the API in place: a ranked setting's in its
    ranked field, a merged one's added to what sexp.toml and the environment gave."""
    values: dict[str, Any] = {}
    sources = dict(settings.sources)
    for name, value in accepted.items():
        row = SETTING_ROWS[name]
        target = row.ranked or name
        values[target] = value if row.merge is None else row.merge(getattr(settings, target), value)
        sources[target] = FLAG
    origin = _WORKSPACE_FILES.get(sources.get("api_base", DEFAULT))
    return replace(settings, **values, api_base_origin=origin, sources=sources)


def _listed(value: Any) -> Any:
    """A list of directories as a tuple of paths (a single path is one directory)."""
    if isinstance(value, (str, os.PathLike)):
        return (os.fspath(value),)
    return tuple(map(str, value)) if isinstance(value, (list, tuple)) else value


def _of_type(row: Setting, value: Any, label: str) -> None:
    """A UsageError naming label when value has not a type row's setting takes."""
    types = (*row.types, tuple) if list in row.types else row.types
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        hint = "; True or False" if row.types == (bool,) else ""
        raise UsageError(f"{label} has the wrong type ({type(value).__name__}){hint}")


def _in_range(row: Setting, value: Any, label: str) -> None:
    """A UsageError naming label when value is out of the range row's setting allows."""
    if row.check is not None and not row.check[0](value):
        shown = ", ".join(map(repr, value)) if isinstance(value, tuple) else repr(value)
        raise UsageError(f"{label} must be {row.check[1]} (got {shown})")


def environment_source(variable: str) -> str:
    """DOTENV for a variable that load_dotenv set (and that still holds that value), else ENVIRONMENT."""
    from_file = _from_dotenv.get(variable)
    return DOTENV if from_file is not None and os.environ.get(variable) == from_file else ENVIRONMENT


def _also(earlier: str | None, source: str) -> str:
    """The sources of a setting that adds to what earlier sources gave (templates)."""
    return source if earlier is None else f"{earlier}, {source}"


def settings_in_force(settings: Settings) -> list[tuple[str, Any, str]]:
    """(key, value, source) for each setting `sexp config` shows. A ranked setting shows the value
    that ranks (`model` is --model's when given); `templates` every directory added to the
    template library, in the order they load."""
    shown = []
    for name in SHOWN_SETTINGS:
        row = SETTING_ROWS[name]
        value, source = getattr(settings, name), settings.sources.get(name, DEFAULT)
        if row.ranked is not None:
            ranked, ranked_source = getattr(settings, row.ranked), settings.sources.get(row.ranked, FLAG)
            if row.merge is None and ranked is not None:
                value, source = ranked, ranked_source
            elif row.merge is not None and ranked:
                value, source = row.merge(value, ranked), _also(settings.sources.get(name), ranked_source)
        shown.append((name, value, source))
    return shown


def provider_keys() -> list[tuple[str, str, str]]:
    """(name, value, source) of every provider key in the environment, as litellm reads them
    (`*_API_KEY`, `*_APIKEY`), by name. The value is for callers to mask, never to show."""
    names = sorted(name for name in os.environ if name.upper().endswith(("_API_KEY", "_APIKEY")))
    return [(name, os.environ[name], environment_source(name)) for name in names]


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    """The settings path sets, checked, by key; an unknown key is a warning, and ignored."""
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
        row, label = SETTING_ROWS[key], f"{path.name}: '{key}'"
        _of_type(row, value, label)
        if row.convert is not None:  # a table: its keys named as [table] key
            value = row.convert(value, f"{path.name}: [{key}]")
        elif isinstance(value, list):
            value = tuple(str(v) for v in value)
        if row.ranked is None:
            _in_range(row, value, label)
        values[key] = value
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
