"""Arithmetic and comparison: + - * / // mod abs min max round = < > <= >= (booleans count as 0/1)."""

from __future__ import annotations

import math
from typing import Any

from ...errors import TypeError_, ValueError_
from ..printer import to_repr
from ..values import type_name
from . import primitive

_NUMBER = (int, float)


def _check(name: str, args: tuple[Any, ...]) -> None:
    """Raise a clear error for the first argument that is not a number."""
    for arg in args:
        if not isinstance(arg, _NUMBER):
            raise TypeError_(f"{name}: expected numbers, got {to_repr(arg)} ({type_name(arg)})")


@primitive("+", signature="(+ x...)")
def add(*args: Any) -> Any:
    """Sum of the arguments; 0 for none."""
    if len(args) == 2:
        a, b = args
        if type(a) is int and type(b) is int:
            return a + b
    _check("+", args)
    total = 0
    for arg in args:
        total += arg
    return total


@primitive("-", signature="(- x y...)")
def subtract(first: Any, *rest: Any) -> Any:
    """Negate one argument, or subtract the rest from the first."""
    if len(rest) == 1:
        b = rest[0]
        if type(first) is int and type(b) is int:
            return first - b
    _check("-", (first, *rest))
    if not rest:
        return -first
    for arg in rest:
        first -= arg
    return first


@primitive("*", signature="(* x...)")
def multiply(*args: Any) -> Any:
    """Product of the arguments; 1 for none."""
    _check("*", args)
    product = 1
    for arg in args:
        product *= arg
    return product


@primitive("/", signature="(/ x y...)")
def divide(first: Any, *rest: Any) -> Any:
    """True division; (/ x) is 1/x."""
    _check("/", (first, *rest))
    if not rest:
        rest, first = (first,), 1
    try:
        for arg in rest:
            first /= arg
    except ZeroDivisionError:
        raise ValueError_("/: division by zero") from None
    return first


@primitive("//", signature="(// a b)")
def floor_divide(a: Any, b: Any) -> Any:
    """Floor division, as Python's //."""
    _check("//", (a, b))
    if b == 0:
        raise ValueError_("//: division by zero")
    return a // b


@primitive("mod", signature="(mod a b)")
def modulo(a: Any, b: Any) -> Any:
    """Remainder with the sign of the divisor, as Python's %."""
    _check("mod", (a, b))
    if b == 0:
        raise ValueError_("mod: division by zero")
    return a % b


@primitive("abs", signature="(abs x)")
def absolute(x: Any) -> Any:
    """Absolute value."""
    _check("abs", (x,))
    return abs(x)


@primitive("min", signature="(min x y...)")
def minimum(first: Any, *rest: Any) -> Any:
    """Smallest argument."""
    _check("min", (first, *rest))
    return min(first, *rest) if rest else first


@primitive("max", signature="(max x y...)")
def maximum(first: Any, *rest: Any) -> Any:
    """Largest argument."""
    _check("max", (first, *rest))
    return max(first, *rest) if rest else first


@primitive("round", signature="(round x [digits])")
def round_number(x: Any, digits: Any = None) -> Any:
    """Round as Python does (halves to even); (round x n) keeps n digits."""
    _check("round", (x,) if digits is None else (x, digits))
    if digits is not None and not isinstance(digits, int):  # a count of digits (booleans count)
        raise TypeError_(f"round: cannot be applied to ({type_name(x)}, {type_name(digits)})")
    if isinstance(x, float) and not math.isfinite(x) and digits is None:
        raise ValueError_(f"round: cannot round {to_repr(x)}")
    return round(x) if digits is None else round(x, digits)


def _compare(name: str, args: tuple[Any, ...], holds: Any) -> bool:
    for a, b in zip(args, args[1:]):
        try:
            if not holds(a, b):
                return False
        except TypeError:
            raise TypeError_(
                f"{name}: cannot compare {to_repr(a)} ({type_name(a)}) with {to_repr(b)} ({type_name(b)})"
            ) from None
    return True


def _ordered(name: str, args: tuple[Any, ...]) -> None:
    for arg in args:
        if not isinstance(arg, (int, float, str)):
            raise TypeError_(f"{name}: expected numbers or strings, got {to_repr(arg)} ({type_name(arg)})")


@primitive("=", signature="(= x y...)")
def equal_numbers(first: Any, *rest: Any) -> bool:
    """Whether all arguments are equal (1 and 1.0 are)."""
    return all(first == other for other in rest)


@primitive("<", signature="(< x y...)")
def less(first: Any, *rest: Any) -> bool:
    """Whether the arguments strictly increase."""
    if len(rest) == 1:
        b = rest[0]
        if type(first) is int and type(b) is int:
            return first < b
    _ordered("<", (first, *rest))
    return _compare("<", (first, *rest), lambda a, b: a < b)


@primitive(">", signature="(> x y...)")
def greater(first: Any, *rest: Any) -> bool:
    """Whether the arguments strictly decrease."""
    _ordered(">", (first, *rest))
    return _compare(">", (first, *rest), lambda a, b: a > b)


@primitive("<=", signature="(<= x y...)")
def less_equal(first: Any, *rest: Any) -> bool:
    """Whether the arguments never decrease."""
    _ordered("<=", (first, *rest))
    return _compare("<=", (first, *rest), lambda a, b: a <= b)


@primitive(">=", signature="(>= x y...)")
def greater_equal(first: Any, *rest: Any) -> bool:
    """Whether the arguments never increase."""
    _ordered(">=", (first, *rest))
    return _compare(">=", (first, *rest), lambda a, b: a >= b)
