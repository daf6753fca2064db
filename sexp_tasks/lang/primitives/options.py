"""The one keyword option a primitive may take after its arguments (`:concurrency n`, `:limit n`)."""

from __future__ import annotations

from enum import Enum

from ...errors import TypeError_, ValueError_
from ...syntax.nodes import Keyword
from ..printer import to_repr
from ..values import Value


class Absent(Enum):
    """What keyword_option gives when the option was not given."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT


def keyword_option(primitive: str, key: str, options: tuple[Value, ...]) -> Value | Absent:
    """The value given as `:key value` among options (the last one wins), or ABSENT."""
    value: Value | Absent = ABSENT
    rest = list(options)
    while rest:
        given = rest.pop(0)
        if not isinstance(given, Keyword) or given.name != key:
            raise TypeError_(
                f"{primitive}: unexpected argument {to_repr(given)}; the only option is :{key} n"
            )
        if not rest:
            raise TypeError_(f"{primitive}: :{key} needs a value")
        value = rest.pop(0)
    return value


def positive_integer(primitive: str, source: str, n: Value) -> int:
    """n, when it is a positive integer; else a VALUE_ERROR naming where it came from."""
    if type(n) is not int or n < 1:
        raise ValueError_(f"{primitive}: {source} must be a positive integer, got {to_repr(n)}")
    return n
