"""`--set NAME=VALUE` and `--set-str NAME=VALUE`: the names and values given on the command line
(`sexp run`, `eval`, `batch`, `tasks render`)."""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from ..errors import ReadError, UsageError
from ..lang.quoting import datum
from ..lang.values import Value, parse_json_text
from ..syntax.nodes import FunctionCallNode, Literal, Symbol


def parse_bindings(
    assignments: list[str], literal: bool, special_forms: Container[str] = ()
) -> list[tuple[str, Value]]:
    """NAME=VALUE pairs from --set (read as a literal when it is one) or --set-str; no NAME may
    be one of special_forms (the runtime's, for names a program binds)."""
    flag = "--set" if literal else "--set-str"
    pairs = []
    for assignment in assignments:
        name, equals, raw = assignment.partition("=")
        if not equals or not name.strip():
            raise UsageError(f"{flag} expects NAME=VALUE, got '{assignment}'")
        value = literal_value(raw) if literal else raw
        pairs.append((_global_name(name.strip(), flag, special_forms), value))
    return pairs


def _global_name(name: str, flag: str, special_forms: Container[str]) -> str:
    """name, when a program could bind it: a symbol that is not one of special_forms."""
    from ..syntax.reader import read  # lazy: --help starts without it (cli/startup.py)

    if name in special_forms:
        raise UsageError(f"{flag}: '{name}' is a special form; it cannot be set")
    try:
        forms = read(name, flag)
    except ReadError:
        forms = []
    if len(forms) != 1 or not isinstance(forms[0], Symbol) or forms[0].name != name:
        raise UsageError(f"{flag}: '{name}' is not a name a program can use")
    return name


def literal_value(raw: str) -> Value:
    """The value of raw when it reads as one literal (number, string, boolean, nil, quoted datum)
    or is a JSON object or array (a dict or a list: what an `object` or `array` input takes)."""
    from ..syntax.reader import read  # lazy: --help starts without it (cli/startup.py)

    structured = _json_structure(raw)
    if structured is not None:
        return structured
    try:
        forms = read(raw, "--set")
    except ReadError:
        return raw
    if len(forms) == 1:
        form = forms[0]
        if isinstance(form, Literal):
            return form.value
        if isinstance(form, FunctionCallNode) and form.name == "quote" and len(form.arguments) == 1:
            return datum(form.args[0])
    return raw


def _json_structure(raw: str) -> Value:
    """raw's value when it is a JSON object or array (null, NaN and Infinity are not), else None."""
    if raw.strip()[:1] not in ("{", "["):
        return None
    try:
        value: Value = parse_json_text(raw, parse_constant=_not_json)
    except ValueError:  # JSONDecodeError too: not JSON, so a literal or a string
        return None
    return value if isinstance(value, (dict, list)) else None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
