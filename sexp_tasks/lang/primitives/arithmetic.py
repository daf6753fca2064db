"""Arithmetic and comparison: + - * / // mod abs min max round = < > <= >= (booleans count as 0/1)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeGuard

from ...errors import TypeError_, ValueError_
from ..printer import to_repr
from ..values import Value, type_name
from . import CORE_PRIMITIVES

_NUMBER = (int, float)
Number = int | float  # booleans count too: bool is an int


def _numbers(args: tuple[Value, ...]) -> TypeGuard[tuple[Number, ...]]:
    """Whether every argument is a number."""
    for arg in args:
        if not isinstance(arg, _NUMBER):
            return False
    return True


def _not_numbers(name: str, args: tuple[Value, ...]) -> TypeError_:
    """The error for the first argument that is not a number."""
    arg = next(arg for arg in args if not isinstance(arg, _NUMBER))
    return TypeError_(f"{name}: expected numbers, got {to_repr(arg)} ({type_name(arg)})")


@CORE_PRIMITIVES.primitive("+", signature="(+ x...)")
def add(*args: Value) -> Value:
    """Sum of the arguments; 0 for none.

    Integers stay exact however large; a float among them makes the sum a float. true and false
    count as 1 and 0, as in Python.

    (+ 1 2 3)
    ;; => 6
    (+ 1 2.5)
    ;; => 3.5
    """
    if len(args) == 2:
        a, b = args
        if type(a) is int and type(b) is int:
            return a + b
    if not _numbers(args):
        raise _not_numbers("+", args)
    total: Number = 0
    for arg in args:
        total += arg
    return total


@CORE_PRIMITIVES.primitive("-", signature="(- x y...)")
def subtract(first: Value, *rest: Value) -> Value:
    """Negate one argument, or subtract the rest from the first.

    (- 10 3 2)
    ;; => 5
    (- 4)
    ;; => -4
    """
    if len(rest) == 1:
        b = rest[0]
        if type(first) is int and type(b) is int:
            return first - b
    if not (isinstance(first, _NUMBER) and _numbers(rest)):
        raise _not_numbers("-", (first, *rest))
    if not rest:
        return -first
    for arg in rest:
        first -= arg
    return first


@CORE_PRIMITIVES.primitive("*", signature="(* x...)")
def multiply(*args: Value) -> Value:
    """Product of the arguments; 1 for none.

    (* 2 3 4)
    ;; => 24
    """
    if not _numbers(args):
        raise _not_numbers("*", args)
    product: Number = 1
    for arg in args:
        product *= arg
    return product


@CORE_PRIMITIVES.primitive("/", signature="(/ x y...)")
def divide(first: Value, *rest: Value) -> Value:
    """True division; (/ x) is 1/x.

    The result is a float even for integers that divide evenly (use `//` for floor division);
    dividing by zero is an error.

    (/ 7 2)
    ;; => 3.5
    (/ 4)
    ;; => 0.25
    """
    if not (isinstance(first, _NUMBER) and _numbers(rest)):
        raise _not_numbers("/", (first, *rest))
    quotient: Number = first
    if not rest:
        rest, quotient = (first,), 1
    try:
        for arg in rest:
            quotient /= arg
    except ZeroDivisionError:
        raise ValueError_("/: division by zero") from None
    return quotient


@CORE_PRIMITIVES.primitive("//", signature="(// a b)")
def floor_divide(a: Value, b: Value) -> Value:
    """Floor division, as Python's //.

    (// 7 2)
    ;; => 3
    (// -7 2)
    ;; => -4
    """
    if not (isinstance(a, _NUMBER) and isinstance(b, _NUMBER)):
        raise _not_numbers("//", (a, b))
    if b == 0:
        raise ValueError_("//: division by zero")
    return a // b


@CORE_PRIMITIVES.primitive("mod", signature="(mod a b)")
def modulo(a: Value, b: Value) -> Value:
    """Remainder with the sign of the divisor, as Python's %.

    (mod 7 3)
    ;; => 1
    (mod -7 3)
    ;; => 2
    """
    if not (isinstance(a, _NUMBER) and isinstance(b, _NUMBER)):
        raise _not_numbers("mod", (a, b))
    if b == 0:
        raise ValueError_("mod: division by zero")
    return a % b


@CORE_PRIMITIVES.primitive("abs", signature="(abs x)")
def absolute(x: Value) -> Value:
    """Absolute value.

    (abs -3.5)
    ;; => 3.5
    """
    if not isinstance(x, _NUMBER):
        raise _not_numbers("abs", (x,))
    return abs(x)


@CORE_PRIMITIVES.primitive("min", signature="(min x y...)")
def minimum(first: Value, *rest: Value) -> Value:
    """Smallest argument.

    (min 3 1 2)
    ;; => 1
    """
    if not (isinstance(first, _NUMBER) and _numbers(rest)):
        raise _not_numbers("min", (first, *rest))
    return min(first, *rest) if rest else first


@CORE_PRIMITIVES.primitive("max", signature="(max x y...)")
def maximum(first: Value, *rest: Value) -> Value:
    """Largest argument.

    (max 3 1 2)
    ;; => 3
    """
    if not (isinstance(first, _NUMBER) and _numbers(rest)):
        raise _not_numbers("max", (first, *rest))
    return max(first, *rest) if rest else first


@CORE_PRIMITIVES.primitive("round", signature="(round x [digits])")
def round_number(x: Value, digits: Value = None) -> Value:
    """Round as Python does (halves to even); (round x n) keeps n digits.

    Without digits the result is an integer.

    (round 2.5)
    ;; => 2
    (round 3.14159 2)
    ;; => 3.14
    """
    if not (isinstance(x, _NUMBER) and (digits is None or isinstance(digits, _NUMBER))):
        raise _not_numbers("round", (x,) if digits is None else (x, digits))
    if digits is not None and not isinstance(digits, int):  # a count of digits (booleans count)
        raise TypeError_(f"round: cannot be applied to ({type_name(x)}, {type_name(digits)})")
    if isinstance(x, float) and not math.isfinite(x) and digits is None:
        raise ValueError_(f"round: cannot round {to_repr(x)}")
    return round(x) if digits is None else round(x, digits)


def _compare(name: str, args: tuple[Value, ...], holds: Callable[[Any, Any], bool]) -> bool:
    # holds compares any two values, as Python does: a TypeError says they do not compare.
    for a, b in zip(args, args[1:]):
        try:
            if not holds(a, b):
                return False
        except TypeError:
            raise TypeError_(
                f"{name}: cannot compare {to_repr(a)} ({type_name(a)}) with {to_repr(b)} ({type_name(b)})"
            ) from None
    return True


def _ordered(name: str, args: tuple[Value, ...]) -> None:
    for arg in args:
        if not isinstance(arg, (int, float, str)):
            raise TypeError_(f"{name}: expected numbers or strings, got {to_repr(arg)} ({type_name(arg)})")


@CORE_PRIMITIVES.primitive("=", signature="(= x y...)")
def equal_numbers(first: Value, *rest: Value) -> bool:
    """Whether all arguments are equal (1 and 1.0 are).

    (= 1 1.0 1)
    ;; => true
    (= "a" "b")
    ;; => false
    """
    return all(first == other for other in rest)


@CORE_PRIMITIVES.primitive("<", signature="(< x y...)")
def less(first: Value, *rest: Value) -> bool:
    """Whether the arguments strictly increase.

    Numbers compare with numbers and strings with strings.

    (< 1 2 3)
    ;; => true
    (< "apple" "banana")
    ;; => true
    """
    if len(rest) == 1:
        b = rest[0]
        if type(first) is int and type(b) is int:
            return first < b
    _ordered("<", (first, *rest))
    return _compare("<", (first, *rest), lambda a, b: a < b)


@CORE_PRIMITIVES.primitive(">", signature="(> x y...)")
def greater(first: Value, *rest: Value) -> bool:
    """Whether the arguments strictly decrease.

    (> 3 2 2)
    ;; => false
    """
    _ordered(">", (first, *rest))
    return _compare(">", (first, *rest), lambda a, b: a > b)


@CORE_PRIMITIVES.primitive("<=", signature="(<= x y...)")
def less_equal(first: Value, *rest: Value) -> bool:
    """Whether the arguments never decrease.

    (<= 1 2 2)
    ;; => true
    """
    _ordered("<=", (first, *rest))
    return _compare("<=", (first, *rest), lambda a, b: a <= b)


@CORE_PRIMITIVES.primitive(">=", signature="(>= x y...)")
def greater_equal(first: Value, *rest: Value) -> bool:
    """Whether the arguments never increase.

    (>= 3 3 1)
    ;; => true
    """
    _ordered(">=", (first, *rest))
    return _compare(">=", (first, *rest), lambda a, b: a >= b)
