"""Equality and type predicates."""

from __future__ import annotations

from ...syntax.nodes import Keyword, Symbol
from ..values import Procedure, Value
from . import CORE_PRIMITIVES


@CORE_PRIMITIVES.primitive("eq?", "equal?", signature="(eq? a b)")
def equal(a: Value, b: Value) -> bool:
    """Structural equality; symbols compare by name and (eq? 1 1.0) is true.

    `eq?` and `equal?` are the same test (as in the original dialect): lists and dicts are equal
    when their elements are; nil and the empty list are not equal.

    (equal? (list 1 (dict "a" 2)) (list 1 (dict "a" 2)))
    ;; => true
    (eq? 1 1.0)
    ;; => true
    (equal? nil '())
    ;; => false
    """
    return bool(a == b)


@CORE_PRIMITIVES.primitive("not", signature="(not x)")
def not_(x: Value) -> bool:
    """True for false values (false, nil, 0, "", empty list or dict).

    (not nil)
    ;; => true
    (not "x")
    ;; => false
    """
    return not x


@CORE_PRIMITIVES.primitive("null?", "nil?", signature="(null? x)")
def is_null(x: Value) -> bool:
    """True for nil and the empty list.

    `null?` and `nil?` are the same test.

    (null? '())
    ;; => true
    (nil? 0)
    ;; => false
    """
    return x is None or (isinstance(x, list) and not x)


@CORE_PRIMITIVES.primitive("number?", signature="(number? x)")
def is_number(x: Value) -> bool:
    """True for integers and floats (not booleans).

    (number? 1.5)
    ;; => true
    (number? true)
    ;; => false
    """
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@CORE_PRIMITIVES.primitive("integer?", signature="(integer? x)")
def is_integer(x: Value) -> bool:
    """True for integers (not booleans).

    (integer? 3)
    ;; => true
    (integer? 3.0)
    ;; => false
    """
    return isinstance(x, int) and not isinstance(x, bool)


@CORE_PRIMITIVES.primitive("string?", signature="(string? x)")
def is_string(x: Value) -> bool:
    """True for strings.

    (string? "x")
    ;; => true
    """
    return isinstance(x, str)


@CORE_PRIMITIVES.primitive("boolean?", signature="(boolean? x)")
def is_boolean(x: Value) -> bool:
    """True for true and false.

    (boolean? false)
    ;; => true
    (boolean? nil)
    ;; => false
    """
    return isinstance(x, bool)


@CORE_PRIMITIVES.primitive("symbol?", signature="(symbol? x)")
def is_symbol(x: Value) -> bool:
    """True for symbols.

    (symbol? 'x)
    ;; => true
    (symbol? "x")
    ;; => false
    """
    return isinstance(x, Symbol)


@CORE_PRIMITIVES.primitive("keyword?", signature="(keyword? x)")
def is_keyword(x: Value) -> bool:
    """True for keywords.

    (keyword? :limit)
    ;; => true
    """
    return isinstance(x, Keyword)


@CORE_PRIMITIVES.primitive("list?", signature="(list? x)")
def is_list(x: Value) -> bool:
    """True for lists, the empty one included (nil is not a list).

    (list? '())
    ;; => true
    (list? nil)
    ;; => false
    """
    return isinstance(x, list)


@CORE_PRIMITIVES.primitive("dict?", signature="(dict? x)")
def is_dict(x: Value) -> bool:
    r"""True for dicts.

    (dict? (json-parse "{\"a\": 1}"))
    ;; => true
    """
    return isinstance(x, dict)


@CORE_PRIMITIVES.primitive("procedure?", signature="(procedure? x)")
def is_procedure(x: Value) -> bool:
    """True for closures, primitives and tasks.

    (procedure? map)
    ;; => true
    (procedure? (lambda (x) x))
    ;; => true
    """
    return isinstance(x, Procedure)
