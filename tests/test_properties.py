"""Properties of the language on generated data: printing round-trips, arithmetic agrees with Python,
let is lambda, let* is nested let, tail recursion sums, equal? is Python's ==."""

from __future__ import annotations

import io
import math
import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.lang.deepstack import run_with_deep_stack
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.lang.quoting import datum
from sexp_tasks.runtime import Runtime
from sexp_tasks.syntax.nodes import Keyword, Symbol
from sexp_tasks.syntax.numerals import parse_number
from sexp_tasks.syntax.reader import read

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """One runtime for every example of a module (the properties define nothing that clashes)."""
    workspace = tmp_path_factory.mktemp("properties")
    return Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())


def evaluate(rt: Runtime, text: str) -> Any:
    return run_with_deep_stack(lambda: rt.run_source(text, "<property>"))


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (True is not 1, 1.0 is not 1, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# Generated values ------------------------------------------------------------------------------

SYMBOL_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+*/<>=!?:.%&^~$éß"


def _is_plain_symbol(name: str) -> bool:
    return not name.startswith(":") and name not in ("true", "false", "nil") and parse_number(name) is None


symbols = st.text(SYMBOL_CHARS, min_size=1, max_size=12).filter(_is_plain_symbol).map(Symbol)
keywords = st.text(SYMBOL_CHARS, min_size=1, max_size=12).map(Keyword)
strings = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from("\\\"\n\t\r\x00\x01\x1f\x7f é☃😀{}()';"), max_size=30),
)
atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**60), max_value=10**60),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
    symbols,
    keywords,
)
values = st.recursive(
    atoms,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(strings, children, max_size=4),
    ),
    max_leaves=25,
)


@FAST
@given(values)
def test_reading_what_the_printer_wrote_gives_an_equal_value(value: Any) -> None:
    text = to_repr(value)
    forms = read(text, "<printed>")
    assert len(forms) == 1
    assert same(datum(forms[0]), value), text


@FAST
@given(values)
def test_quoting_what_the_printer_wrote_evaluates_to_an_equal_value(rt: Runtime, value: Any) -> None:
    assert same(evaluate(rt, "'" + to_repr(value)), value)


@FAST
@given(strings)
def test_strings_evaluate_to_themselves_when_printed(rt: Runtime, text: str) -> None:
    assert evaluate(rt, to_repr(text)) == text


# Arithmetic and comparison agree with Python -------------------------------------------------------

numbers = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)


def _python_min(*xs: Any) -> Any:
    return min(xs)


def _python_max(*xs: Any) -> Any:
    return max(xs)


def _python_chain(op: Callable[[Any, Any], bool]) -> Callable[..., bool]:
    return lambda *xs: all(op(a, b) for a, b in zip(xs, xs[1:]))


def _python_sub(*xs: Any) -> Any:
    if len(xs) == 1:
        return -xs[0]
    result = xs[0]
    for x in xs[1:]:
        result -= x
    return result


def _python_add(*xs: Any) -> Any:
    result = 0
    for x in xs:
        result += x
    return result


def _python_mul(*xs: Any) -> Any:
    result = 1
    for x in xs:
        result *= x
    return result


def _python_div(*xs: Any) -> Any:
    if len(xs) == 1:
        return 1 / xs[0]
    result = xs[0]
    for x in xs[1:]:
        result /= x
    return result


VARIADIC: dict[str, Callable[..., Any]] = {
    "+": _python_add,
    "-": _python_sub,
    "*": _python_mul,
    "/": _python_div,
    "min": _python_min,
    "max": _python_max,
    "=": _python_chain(operator.eq),
    "<": _python_chain(operator.lt),
    ">": _python_chain(operator.gt),
    "<=": _python_chain(operator.le),
    ">=": _python_chain(operator.ge),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {"//": operator.floordiv, "mod": operator.mod}


def _agrees(rt: Runtime, source: str, python: Callable[[], Any]) -> None:
    try:
        expected = python()
    except ZeroDivisionError:
        return  # division by zero: the golden tests check the error
    except (OverflowError, ValueError):
        with pytest.raises(SexpError):
            evaluate(rt, source)
        return
    assert same(evaluate(rt, source), expected), source


@FAST
@given(st.sampled_from(sorted(VARIADIC)), st.lists(numbers, min_size=1, max_size=4))
def test_variadic_arithmetic_and_comparison_agree_with_python(
    rt: Runtime, name: str, args: list[Any]
) -> None:
    source = f"({name} {' '.join(to_repr(a) for a in args)})"
    _agrees(rt, source, lambda: VARIADIC[name](*args))


@FAST
@given(st.sampled_from(sorted(BINARY)), numbers, numbers)
def test_floor_division_and_mod_agree_with_python(rt: Runtime, name: str, a: Any, b: Any) -> None:
    _agrees(rt, f"({name} {to_repr(a)} {to_repr(b)})", lambda: BINARY[name](a, b))


@FAST
@given(numbers)
def test_abs_and_round_agree_with_python(rt: Runtime, x: Any) -> None:
    _agrees(rt, f"(abs {to_repr(x)})", lambda: abs(x))
    _agrees(rt, f"(round {to_repr(x)})", lambda: round(x))


@FAST
@given(numbers, st.integers(min_value=-5, max_value=8))
def test_round_to_digits_agrees_with_python(rt: Runtime, x: Any, digits: int) -> None:
    _agrees(rt, f"(round {to_repr(x)} {digits})", lambda: round(x, digits))


@FAST
@given(st.integers(), st.integers())
def test_integer_arithmetic_is_exact(rt: Runtime, a: int, b: int) -> None:
    assert evaluate(rt, f"(list (+ {a} {b}) (- {a} {b}) (* {a} {b}))") == [a + b, a - b, a * b]


# let, let*, lambda ----------------------------------------------------------------------------------

NAMES = ["a", "b", "c", "x", "y"]
OUTER = {"a": 3, "b": -7, "c": 11}  # global values the binding expressions may read


@st.composite
def expressions(draw: st.DrawFn, names: list[str], depth: int = 2) -> str:
    """Arithmetic over integer literals and the given names."""
    if depth == 0 or draw(st.booleans()):
        if names and draw(st.booleans()):
            return draw(st.sampled_from(names))
        return str(draw(st.integers(min_value=-20, max_value=20)))
    op = draw(st.sampled_from(["+", "-", "*", "max", "min"]))
    parts = draw(st.lists(expressions(names, depth - 1), min_size=1, max_size=3))
    return f"({op} {' '.join(parts)})"


def _define_outer(rt: Runtime) -> None:
    evaluate(rt, " ".join(f"(define {name} {value})" for name, value in OUTER.items()))


@FAST
@given(st.data())
def test_let_is_an_immediately_applied_lambda(rt: Runtime, data: st.DataObject) -> None:
    _define_outer(rt)
    bound = data.draw(st.lists(st.sampled_from(NAMES), min_size=0, max_size=4, unique=True))
    inits = [data.draw(expressions(list(OUTER))) for _ in bound]
    body = data.draw(expressions(list(OUTER) + bound, depth=3))
    let = f"(let ({' '.join(f'({n} {e})' for n, e in zip(bound, inits))}) {body})"
    applied = f"((lambda ({' '.join(bound)}) {body}) {' '.join(inits)})"
    assert same(evaluate(rt, let), evaluate(rt, applied)), (let, applied)


@FAST
@given(st.data())
def test_let_star_is_nested_let(rt: Runtime, data: st.DataObject) -> None:
    _define_outer(rt)
    names = data.draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4))  # repeats allowed
    pairs = []
    visible = list(OUTER)
    for name in names:
        pairs.append((name, data.draw(expressions(visible))))
        visible = [*visible, name]
    body = data.draw(expressions(visible, depth=3))
    star = f"(let* ({' '.join(f'({n} {e})' for n, e in pairs)}) {body})"
    nested = body
    for name, expr in reversed(pairs):
        nested = f"(let (({name} {expr})) {nested})"
    assert same(evaluate(rt, star), evaluate(rt, nested)), (star, nested)


@FAST
@given(st.lists(st.integers(min_value=-(10**20), max_value=10**20), max_size=300))
def test_a_tail_recursive_sum_equals_pythons_sum(rt: Runtime, xs: list[int]) -> None:
    evaluate(
        rt,
        "(define (tail-sum xs i acc) (if (= i (length xs)) acc (tail-sum xs (+ i 1) (+ acc (nth xs i)))))",
    )
    assert evaluate(rt, f"(tail-sum '{to_repr(xs)} 0 0)") == sum(xs)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=20_000, max_value=60_000))
def test_tail_recursion_deeper_than_the_recursion_limit_sums_a_range(rt: Runtime, n: int) -> None:
    evaluate(rt, "(define (range-sum n acc) (if (= n 0) acc (range-sum (- n 1) (+ acc n))))")
    assert evaluate(rt, f"(range-sum {n} 0)") == n * (n + 1) // 2


# equal? is Python's == --------------------------------------------------------------------------------


@FAST
@given(values, values)
def test_equal_agrees_with_python_equality(rt: Runtime, a: Any, b: Any) -> None:
    text_a, text_b = to_repr(a), to_repr(b)
    assert evaluate(rt, f"(equal? '{text_a} '{text_b})") is (a == b)
    assert evaluate(rt, f"(eq? '{text_a} '{text_b})") is (a == b)


@FAST
@given(values)
def test_every_value_is_equal_to_itself_and_its_copy(rt: Runtime, value: Any) -> None:
    assume(not (isinstance(value, float) and math.isnan(value)))
    text = to_repr(value)
    assert evaluate(rt, f"(equal? '{text} '{text})") is True
