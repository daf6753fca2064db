"""The settings table: every setting with its default, what it takes and its front doors, declared
once, on its Settings field (`setting(...)`). SETTINGS lists the rows; loading.py reads sexp.toml,
the environment, flags and the API's keywords through them, cli/setting_options.py declares the
flags and api/embed.py takes the keywords (SPEC §10.1, §11.1).

Adding a setting is one field: `cache: bool = setting(False, (bool,), "--cache", help="...")` makes
it a sexp.toml key, a flag of run, eval, batch, config and the REPL, and an API keyword, each
checked as the others are, and a line of `sexp config`.
"""

from __future__ import annotations

import math
import os
import pwd
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..generation import GenerationError, check_generation, merge_generation
from ..lang.deepstack import DEFAULT_RECURSION_LIMIT  # the core's own default (lang knows no config)
from .mcp_servers import McpServer, mcp_servers
from .model_chain import model_setting

# What a setting may hold, and how to say so: a test and the words after "must be" (SPEC §10.1).
Range = tuple[Callable[[Any], bool], str]


@dataclass(frozen=True)
class Setting:
    """One row of the table: a setting and its front doors. Its name (the Settings field it
    fills) is also its sexp.toml key and its API keyword."""

    types: tuple[type, ...]  # what sexp.toml and the API may give (a bool only where bool is listed)
    flag: str | None = None  # its command-line option (argparse reads its operand as types[0])
    metavar: str | None = None  # the flag's operand, as --help shows it
    help: str = ""  # the flag's help text
    # What the setting is, where that is not what its flag does (a `--no-X` flag turns it off):
    # help(sexp_tasks.run) shows it; "" shows help.
    about: str = ""
    common: bool = True  # add_setting_options declares the flag (False: each command its own, as -q)
    env: str | None = None  # its environment variable (a list's items joined by os.pathsep)
    toml: bool = True  # a key of sexp.toml
    api: bool = True  # a keyword of Session, run, run_file and batch
    shown: bool = True  # a line of `sexp config`
    check: Range | None = None
    # The Settings field a flag and the API fill when their value ranks above a template's own:
    # `--model` and `model=` beat a template's <model>, sexp.toml's and SEXP_MODEL's lose to it.
    # The check applies to those values alone (sexp.toml's template directories may be missing).
    ranked: str | None = None
    # How a later door's value adds to an earlier one (SEXP_TEMPLATES to sexp.toml's templates,
    # the API's generation= to sexp.toml's [generation]); None: it replaces it.
    merge: Callable[[Any, Any], Any] | None = None
    # The value as the setting holds it (a table checked key by key), or a UsageError naming it
    # by the second argument.
    convert: Callable[[Any, str], Any] | None = None
    # What a bool setting's flag gives: True (`--cache`), or False for the `--no-X` flag of a
    # setting that is on by default (`--no-stream`); `setting` derives it from the default.
    flag_value: Any = True
    name: str = ""  # its Settings field's (SETTINGS sets it)

    @property
    def dest(self) -> str:
        """The flag's argparse destination (`--max-cost`: max_cost)."""
        return (self.flag or "").lstrip("-").replace("-", "_")


def setting(default: Any, types: tuple[type, ...], flag: str | None = None, **row: Any) -> Any:
    """A Settings field with its row of the table: default (a callable makes each default, as
    dict), then Setting's fields. A bool setting's flag turns it from its default: `--X` sets a
    setting off by default, `--no-X` unsets one on by default."""
    made = {"default_factory": default} if callable(default) else {"default": default}
    if types == (bool,) and flag is not None:
        row["flag_value"] = not default
        assert flag.startswith("--no-") == (default is True), f"{flag}: a --no- flag turns off what is on"
    return field(**made, metadata={"setting": Setting(types, flag, **row)})


def _finite(test: Callable[[float], bool]) -> Callable[[Any], bool]:
    return lambda value: math.isfinite(value) and test(value)


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


def _generation(value: Any, where: str) -> dict[str, Any]:
    """A generation table as sent, checked key by key by generation.py's one checker."""
    try:
        return check_generation(value, where)
    except GenerationError as err:
        raise UsageError(str(err)) from None


def _added(earlier: tuple[str, ...], later: tuple[str, ...]) -> tuple[str, ...]:
    return (*earlier, *later)


_AT_LEAST_1: Range = (lambda n: n >= 1, "at least 1")
_NONE_OR_MORE: Range = (lambda n: n >= 0, "0 or more")
_SECONDS: Range = (_finite(lambda s: s > 0), "a positive number of seconds")
_DIRECTORY: Range = (lambda path: Path(path).is_dir(), "a directory")
_NUMBER = (float, int)
_PATH = (str, os.PathLike)


@dataclass(frozen=True)
class Settings:
    """Everything a run may be configured with; a field made by `setting` is a row of SETTINGS."""

    # from sexp.toml or SEXP_MODEL: below a template's own <model>. A chain (SPEC §11.4) is held
    # joined by commas, as --model and SEXP_MODEL take it (config/model_chain.py)
    model: str | None = setting(
        None,
        (str, list),
        "--model",
        env="SEXP_MODEL",
        ranked="model_override",
        convert=model_setting,
        help="the model of every task call that names none itself (it overrides a template's <model>);"
        " A,B: a fallback chain",
    )
    model_override: str | None = None  # from --model, model= or the REPL's :model: above a template's
    api_base: str | None = setting(None, (str,), env="SEXP_API_BASE")
    templates: tuple[str, ...] = setting(  # from sexp.toml and SEXP_TEMPLATES
        (),
        (list,),
        "--templates",
        metavar="DIR",
        help="load task templates from DIR",
        env="SEXP_TEMPLATES",
        ranked="template_flags",
        merge=_added,
        check=(lambda dirs: all(Path(d).is_dir() for d in dirs), "a directory"),
    )
    template_flags: tuple[str, ...] = ()  # from --templates and templates=, loaded last
    concurrency: int = setting(8, (int,), check=_AT_LEAST_1)
    max_turns: int = setting(10, (int,), check=_AT_LEAST_1)
    max_tool_calls_per_turn: int = setting(16, (int,), check=_AT_LEAST_1)
    max_context_window_fraction: float = setting(
        0.8, _NUMBER, check=(_finite(lambda f: 0 < f <= 1), "a fraction above 0 and at most 1")
    )
    recursion_limit: int = setting(DEFAULT_RECURSION_LIMIT, (int,), check=_AT_LEAST_1)
    script_timeout: float = setting(60.0, _NUMBER, check=_SECONDS)
    script_output_limit: int = setting(1024 * 1024, (int,), check=(lambda n: n >= 0, "0 or more bytes"))
    script_user: str | None = setting(  # the user scripts run as (sexp running as root), docs/security.md
        None,
        (str,),
        "--script-user",
        metavar="USER",
        help="run scripts as USER (sexp running as root; see docs/security.md)",
        check=(lambda name: _is_user(name), "the name of a user of this machine"),
    )
    store: str = setting(
        ".sexp/store.db", (str,), "--store", metavar="PATH", help="the run store (default .sexp/store.db)"
    )
    workspace: str = setting(
        ".",
        (str,),
        "--workspace",
        metavar="DIR",
        help="the directory files are confined to",
        check=_DIRECTORY,
    )
    max_cost_usd: float | None = setting(
        None,
        _NUMBER,
        "--max-cost",
        metavar="USD",
        help="stop model calls once this much is spent",
        check=(_finite(lambda usd: usd > 0), "a positive number of dollars"),
    )
    max_depth: int = setting(5, (int,), check=_NONE_OR_MORE)  # how deep subtasks may nest
    max_retries: int = setting(  # how many times a rate-limited or failed model request is sent again
        4,
        (int,),
        "--max-retries",
        metavar="N",
        help="send a rate-limited or failed model request again at most N times (default 4)",
        check=_NONE_OR_MORE,
    )
    request_timeout: float = setting(
        600.0,
        _NUMBER,
        "--request-timeout",
        metavar="SECONDS",
        help="seconds a model request may take (default 600)",
        check=_SECONDS,
    )
    cache: bool = setting(
        False,
        (bool,),
        "--cache",
        help="answer a request asked before from the store's answer cache; keep each paid answer",
    )
    stream: bool = setting(
        True,
        (bool,),
        "--no-stream",
        help="do not show model answers on a terminal as they arrive, nor ask for streamed answers",
        about="sexp run, eval and the REPL show model answers on a terminal as they arrive (not a Session)",
    )
    otel: bool = setting(  # OTEL_EXPORTER_OTLP_ENDPOINT being set turns it on too (runs/telemetry.py)
        False,
        (bool,),
        "--otel",
        help="export spans of the run, its task calls, model turns, tools and scripts over OTLP"
        " (see docs/observability.md)",
    )
    otel_content: bool = setting(  # prompts, answers, tool arguments and results: scrubbed of keys
        False, (bool,), help="with otel: put the messages sent and the answers in the spans"
    )
    # sexp.toml's [generation] table: settings sent with every call, below a template's and a call's
    generation: Mapping[str, Any] = setting(dict, (dict,), convert=_generation, merge=merge_generation)
    # sexp.toml's [mcp.NAME] tables: MCP servers whose tools templates offer (SPEC §11.4); not shown
    # by `sexp config` (a header or env value may hold a token)
    mcp: Mapping[str, McpServer] = setting(dict, (dict,), convert=mcp_servers, shown=False)
    mock_responses: str | None = setting(
        None,
        _PATH,
        "--mock-responses",
        metavar="FILE",
        help="replies for mock/ models (a JSON list, or lists by template name)",
        env="SEXP_MOCK_RESPONSES",
        toml=False,
        check=(lambda path: Path(path).is_file(), "a file of replies"),
    )
    record: str | None = setting(  # a cassette to write every model call to
        None,
        _PATH,
        "--record",
        metavar="FILE",
        help="record every model call to a cassette",
        toml=False,
        check=(lambda path: _writable_file_path(Path(path)), "a cassette file to write, not a directory"),
    )
    replay: str | None = setting(  # a cassette to answer every model call from
        None,
        _PATH,
        "--replay",
        metavar="FILE",
        help="answer every model call from a cassette",
        toml=False,
        check=(lambda path: Path(path).is_file(), "a cassette file"),
    )
    quiet: bool = setting(False, (bool,), "--quiet", common=False, toml=False, shown=False)
    # The workspace file api_base came from ("./sexp.toml" or "./.env"; None when the user's own
    # environment or a flag gave it): a call that goes there warns once (api_base_warning).
    api_base_origin: str | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # Where each field's value came from (FLAG, ENVIRONMENT, DOTENV or TOML; several, joined by
    # ", ", for templates, which each adds to); a field not named here has its DEFAULT.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)


# The table, a row per setting, in the order sexp.toml's keys are listed and `sexp config` shows them.
SETTINGS: tuple[Setting, ...] = tuple(
    replace(f.metadata["setting"], name=f.name) for f in fields(Settings) if "setting" in f.metadata
)
SETTING_ROWS = {row.name: row for row in SETTINGS}
# The keys sexp.toml may set, in the order an unknown key's warning lists them.
TOML_KEYS = tuple(row.name for row in SETTINGS if row.toml)
# What `sexp config` shows, in order: the sexp.toml keys, then the settings only flags, the
# environment and the API give (SPEC §10.3).
SHOWN_SETTINGS = tuple(row.name for row in SETTINGS if row.shown)
# The keywords of Session, run, run_file and batch, in the order an unknown one's error lists them.
API_SETTINGS = tuple(row.name for row in SETTINGS if row.api)
