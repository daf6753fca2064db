"""Lists: construction, access, and the higher-order procedures map, filter, reduce, for-each, apply.

nil behaves as the empty list wherever a list is read: (length nil) is 0, (cons x nil) is (x).
"""

from __future__ import annotations

from collections.abc import Callable
from types import EllipsisType
from typing import Any

from ...errors import TypeError_, ValueError_
from ..calls import Closure, apply_procedure, invoke
from ..operator_calls import OperatorCalls
from ..printer import to_repr
from ..values import Value, passed_arguments, type_name
from . import CORE_PRIMITIVES


def as_list(name: str, value: Value, position: str = "") -> list[Value]:
    """The list value stands for (nil is empty); a TypeError naming the primitive otherwise."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    where = f" as {position} argument" if position else ""
    raise TypeError_(f"{name}: expected a list{where}, got {to_repr(value)} ({type_name(value)})")


def _index(name: str, value: Value) -> int:
    if type(value) is not int:
        raise TypeError_(f"{name}: expected an integer index, got {to_repr(value)} ({type_name(value)})")
    return value


@CORE_PRIMITIVES.primitive("list", signature="(list x...)")
def make_list(*items: Value) -> list[Value]:
    """A list of the arguments.

    (list 1 "two" 'three)
    ;; => (1 "two" three)
    """
    return list(items)


@CORE_PRIMITIVES.primitive("cons", signature="(cons x xs)")
def cons(item: Value, rest: Value) -> list[Value]:
    """A new list: item followed by the elements of rest.

    (cons 0 (list 1 2))
    ;; => (0 1 2)
    (cons 1 nil)
    ;; => (1)
    """
    return [item, *as_list("cons", rest, "second")]


@CORE_PRIMITIVES.primitive("first", signature="(first xs)")
def first(seq: Value) -> Value:
    """The first element; nil for nil or ().

    (first (list "a" "b"))
    ;; => "a"
    (first '())
    ;; => nil
    """
    return _first("first", seq)


@CORE_PRIMITIVES.primitive("car", signature="(car xs)")
def car(seq: Value) -> Value:
    """The first element; nil for nil or ().

    The traditional name of `first`.

    (car (list 1 2))
    ;; => 1
    """
    return _first("car", seq)


@CORE_PRIMITIVES.primitive("rest", signature="(rest xs)")
def rest(seq: Value) -> list[Value]:
    """Every element but the first; () for nil or ().

    (rest (list 1 2 3))
    ;; => (2 3)
    """
    return as_list("rest", seq)[1:]


@CORE_PRIMITIVES.primitive("cdr", signature="(cdr xs)")
def cdr(seq: Value) -> list[Value]:
    """Every element but the first; () for nil or ().

    The traditional name of `rest`.

    (cdr (list 1 2 3))
    ;; => (2 3)
    """
    return as_list("cdr", seq)[1:]


def _first(name: str, seq: Value) -> Value:
    items = as_list(name, seq)
    return items[0] if items else None


@CORE_PRIMITIVES.primitive("nth", signature="(nth xs i)")
def nth(seq: Value, index: Value) -> Value:
    """Element `index` (from 0) of a list or string; an error when out of range.

    Use `get` for a default instead of an error.

    (nth (list "a" "b" "c") 1)
    ;; => "b"
    (nth "hello" 0)
    ;; => "h"
    """
    i = _index("nth", index)
    items = seq if isinstance(seq, str) else as_list("nth", seq)
    if not 0 <= i < len(items):
        raise ValueError_(f"nth: index {i} out of range for a {type_name(seq)} of length {len(items)}")
    return items[i]


@CORE_PRIMITIVES.primitive("length", signature="(length x)")
def length(seq: Value) -> int:
    """Length of a string, list or dict; 0 for nil.

    (length "hello")
    ;; => 5
    (length (dict "a" 1))
    ;; => 1
    """
    if seq is None:
        return 0
    if isinstance(seq, (str, list, dict)):
        return len(seq)
    raise TypeError_(f"length: expected a string, list or dict, got {to_repr(seq)} ({type_name(seq)})")


@CORE_PRIMITIVES.primitive("append", signature="(append xs...)")
def append(*seqs: Value) -> list[Value]:
    """One list of the elements of every argument, in order.

    (append (list 1 2) (list 3) '())
    ;; => (1 2 3)
    """
    result: list[Value] = []
    for seq in seqs:
        result.extend(as_list("append", seq))
    return result


@CORE_PRIMITIVES.primitive("reverse", signature="(reverse xs)")
def reverse(seq: Value) -> Value:
    """The elements (or characters) in reverse order.

    (reverse (list 1 2 3))
    ;; => (3 2 1)
    (reverse "abc")
    ;; => "cba"
    """
    if isinstance(seq, str):
        return seq[::-1]
    return as_list("reverse", seq)[::-1]


@CORE_PRIMITIVES.primitive("range", signature=("(range n)", "(range a b [step])"))
def range_(start: Value, stop: Value | EllipsisType = ..., step: Value = 1) -> list[int]:
    """(range n) is 0..n-1; (range a b [step]) as Python's range.

    (range 4)
    ;; => (0 1 2 3)
    (range 10 0 -3)
    ;; => (10 7 4 1)
    """
    if stop is ...:
        return list(range(_range_bound(start)))
    low, high, by = _range_bound(start), _range_bound(stop), _range_bound(step)
    if by == 0:
        raise ValueError_("range: step must not be zero")
    return list(range(low, high, by))


def _range_bound(value: Value) -> int:
    if type(value) is not int:
        raise TypeError_(f"range: expected integers, got {to_repr(value)} ({type_name(value)})")
    return value


@CORE_PRIMITIVES.primitive("map", signature="(map f xs ys...)")
def map_(depth: int, fn: Value, seq: Value, *more: Value) -> list[Value]:
    """(f x) for each element; with several lists, (f x y ...) up to the shortest.

    f may be a procedure or a task (a task gets only as many arguments as it declares inputs).
    The calls run one after the other; `pmap` runs them at once.

    (map inc (list 1 2 3))
    ;; => (2 3 4)
    (map + (list 1 2) (list 10 20 30))
    ;; => (11 22)
    """
    items = as_list("map", seq, "second")
    if more:
        lists = [items, *(as_list("map", s) for s in more)]
        return [apply_procedure(fn, passed_arguments(fn, list(args)), depth) for args in zip(*lists)]
    if type(fn) is Closure:
        callee_depth = depth + 1
        return [invoke(fn, [x], callee_depth) for x in items]
    return [apply_procedure(fn, passed_arguments(fn, [x]), depth) for x in items]


@CORE_PRIMITIVES.primitive("filter", signature="(filter pred xs)")
def filter_(depth: int, pred: Value, seq: Value) -> list[Value]:
    """The elements for which (pred x) is true.

    (filter odd? (range 6))
    ;; => (1 3 5)
    """
    items = as_list("filter", seq, "second")
    if type(pred) is Closure:
        callee_depth = depth + 1
        return [x for x in items if invoke(pred, [x], callee_depth)]
    return [x for x in items if apply_procedure(pred, passed_arguments(pred, [x]), depth)]


@CORE_PRIMITIVES.primitive("reduce", signature=("(reduce f init xs)", "(reduce f xs)"))
def reduce_(
    operator_calls: OperatorCalls, depth: int, fn: Value, init_or_seq: Value, seq: Value | EllipsisType = ...
) -> Value:
    """(reduce f init xs) or (reduce f xs): fold left, calling (f acc x).

    acc starts as init (or the first element) and becomes each call's value; init is the value
    for an empty list (without init, an empty list is an error).

    (reduce + 0 (list 1 2 3))
    ;; => 6
    (reduce (lambda (acc x) (string-append acc "," x)) (list "a" "b" "c"))
    ;; => "a,b,c"
    """
    if seq is ...:
        items = as_list("reduce", init_or_seq)
        if not items:
            raise ValueError_("reduce: empty list and no initial value")
        acc, items = items[0], items[1:]
    else:
        acc, items = init_or_seq, as_list("reduce", seq, "third")
    if type(fn) is Closure:
        callee_depth = depth + 1
        for x in items:
            acc = invoke(fn, [acc, x], callee_depth)
        return acc
    with operator_calls.of("reduce"):  # a task reducing gets the reduce defaults (§3.5), when installed
        for x in items:
            acc = apply_procedure(fn, passed_arguments(fn, [acc, x]), depth)
    return acc


@CORE_PRIMITIVES.primitive("for-each", signature="(for-each f xs)")
def for_each(depth: int, fn: Value, seq: Value) -> None:
    """Call (f x) for each element for its effect; nil.

    (define seen '())
    (for-each (lambda (x) (set! seen (cons x seen))) (list 1 2 3))
    seen
    ;; => (3 2 1)
    """
    for x in as_list("for-each", seq, "second"):
        apply_procedure(fn, passed_arguments(fn, [x]), depth)


@CORE_PRIMITIVES.primitive("apply", signature="(apply f [arg... xs])")
def apply_(depth: int, fn: Value, *args: Value) -> Value:
    """(apply f xs) or (apply f a b xs): call f with the spread arguments.

    The last argument is a list whose elements become the last arguments.

    (apply + (list 1 2 3))
    ;; => 6
    (apply max 10 (list 3 42))
    ;; => 42
    """
    if not args:
        return apply_procedure(fn, [], depth)
    return apply_procedure(fn, [*args[:-1], *as_list("apply", args[-1], "last")], depth)


@CORE_PRIMITIVES.primitive("sort", signature="(sort xs [key-fn])")
def sort(depth: int, seq: Value, key: Value = None) -> list[Value]:
    """Elements in ascending order (stable); (sort xs key-fn) orders by (key-fn x).

    Numbers sort with numbers and strings with strings; mixing them is an error.

    (sort (list 3 1 2))
    ;; => (1 2 3)
    (sort (list "pear" "fig" "apple") length)
    ;; => ("fig" "pear" "apple")
    """
    items = as_list("sort", seq)
    keys = items if key is None else [apply_procedure(key, [x], depth) for x in items]
    key_of: Callable[[int], Any] = keys.__getitem__  # values order themselves, or TypeError below
    try:
        order = sorted(range(len(items)), key=key_of)
    except TypeError:
        kinds = sorted({type_name(k) for k in keys})
        raise TypeError_(f"sort: cannot order values of different kinds ({', '.join(kinds)})") from None
    return [items[i] for i in order]
