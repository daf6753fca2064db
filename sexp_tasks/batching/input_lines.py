"""A batch's input (SPEC §10.5): a JSONL file, one JSON object a line, whose keys bind globals
(row_names.py says which) and which is the global `row`.

The file is read twice, streaming, never held whole: once to check every line before any row
runs (a malformed line is an error naming it, `IN.jsonl:7: error: ...`, and nothing runs), and
once as rows run. Lines holding only whitespace are skipped; rows are numbered from 0 in input
order (`index`). JSON values are the language's values as they are (null is nil, arrays are
lists, objects are dicts), as a resumed run's recorded --set values are.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import BatchError, ReadError
from ..lang.values import parse_json_text
from ..syntax.nodes import Symbol
from ..syntax.reader import read

MAX_LINE_BYTES = 16 << 20  # the longest line an input may have (docs/batch.md)
MAX_DEPTH = 500  # how deep a line's arrays and objects may nest (docs/batch.md)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def check_input(path: Path) -> tuple[int, str, list[str]]:
    """Check every line of path: (the number of rows, a digest of the file's bytes, every key in
    the order first seen); a BatchError naming the first malformed line."""
    digest = hashlib.sha256()
    count = 0
    names: dict[str, bool] = {}  # the keys seen so far, checked once each
    for number, line in _lines(path, digest):
        row = _object(line, path, number)
        if row is None:
            continue
        for key in row:
            if key not in names:
                names[key] = _check_name(key, f"{path}:{number}")
        count += 1
    return count, digest.hexdigest(), list(names)


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a checked input file, in order."""
    for number, line in _lines(path, None):
        row = _object(line, path, number)
        if row is not None:
            yield row


def write_rows(rows: Iterable[Any], path: Path) -> None:
    """Rows given from Python (dicts with string keys) as a JSONL file, one a line; a BatchError
    for one that is not such a dict or holds what JSON cannot write."""
    with path.open("w", encoding="utf-8") as out:
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or not all(isinstance(key, str) for key in row):
                raise BatchError(f"row {index}: expected a dict with string keys, got {type(row).__name__}")
            try:
                out.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
            except (TypeError, ValueError) as err:
                raise BatchError(f"row {index}: cannot be written as JSON ({err})") from None


def _lines(path: Path, digest: Any) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line of path, its bytes added to digest when one is given."""
    try:
        with path.open("rb") as source:
            for number, raw in enumerate(iter(lambda: source.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:  # never held whole: `--data /dev/zero` has no line end
                    raise BatchError(
                        f"the line is longer than {MAX_LINE_BYTES >> 20} MiB, the longest a line may be",
                        f"{path}:{number}",
                    )
                if digest is not None:
                    digest.update(raw)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise BatchError("the line is not UTF-8 text", f"{path}:{number}") from None
                yield number, text.lstrip("\ufeff") if number == 1 else text
    except OSError as err:
        raise BatchError(f"cannot read '{path}': {err.strerror or err}") from None


def _object(line: str, path: Path, number: int) -> dict[str, Any] | None:
    """The line's JSON object; None for a blank line; a BatchError naming the line otherwise."""
    if not line.strip():
        return None
    where = f"{path}:{number}"
    if _too_deep(line):  # before parsing it: json's parser recurses once a level
        raise BatchError(f"the value is nested deeper than {MAX_DEPTH} levels", where)
    try:  # a lone surrogate (valid JSON, "\ud800") becomes U+FFFD: no store or output takes it
        value = parse_json_text(line, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError as err:
        raise BatchError(f"not JSON: {err.msg} at column {err.colno}", where) from None
    except ValueError as err:  # NaN, Infinity, 1e999, an integer of more digits than Python reads
        raise BatchError(f"not JSON: {err}", where) from None
    if not isinstance(value, dict):
        raise BatchError(f"expected a JSON object (its keys bind globals), got {_json_type(value)}", where)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text} is too large (a number must be finite)")
    return number


def _too_deep(line: str) -> bool:
    """Whether line's JSON nests arrays and objects more than MAX_DEPTH levels (strings skipped)."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:  # the common case, without a scan
        return False
    depth = 0
    for bracket in _BRACKETS.finditer(_STRING.sub('""', line)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _check_name(name: str, where: str) -> bool:
    """True when name is a symbol (a special form's too: row_names.py decides what is bound);
    else a BatchError."""
    try:
        forms = read(name, where)
    except ReadError:
        forms = []
    if len(forms) != 1 or not isinstance(forms[0], Symbol) or forms[0].name != name:
        raise BatchError(f"key '{name}' is not a name a program can use", where)
    return True
