"""Control forms: quote, if, cond, when, unless, and, or, progn/begin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import FormError
from ...syntax.nodes import FunctionCallNode, ListNode, Symbol, elements
from ..codegen import constant
from ..quoting import datum
from ..values import Code, Frame, Value
from . import CORE_FORMS, walk_nothing

if TYPE_CHECKING:
    from ..check import Checker
    from ..compiler import Compiler
    from ..environment import Scope


@CORE_FORMS.special_form(
    "quote",
    check=walk_nothing,
    scope=True,
    signature="(quote x)",
    doc="""x itself, unevaluated: a symbol stays a symbol, a list stays a list of data.

    `'x` is read as `(quote x)`. Use it for symbols as data and for literal lists; a quoted list
    is not a call.

    '(1 two "three")
    ;; => (1 two "three")
    (symbol? 'x)
    ;; => true
    """,
)
def compile_quote(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [expr]:
            return constant(datum(expr))
    raise FormError("quote: expected (quote x)", form.span)


@CORE_FORMS.special_form(
    "if",
    signature="(if test then [else])",
    doc="""then when test is true, else otherwise (nil when there is no else).

    Only the branch chosen is evaluated. False values are false, nil, 0, 0.0, "", the empty list
    and the empty dict; everything else is true.

    (if (> 2 1) "yes" "no")
    ;; => "yes"
    (if "" "non-empty" "empty")
    ;; => "empty"
    """,
)
def compile_if(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    match form.args:
        case [test, then]:
            return c.compile_if(test, then, None, scope, tail, form.span)
        case [test, then, otherwise]:
            return c.compile_if(test, then, otherwise, scope, tail, form.span)
    raise FormError("if: expected (if test then [else])", form.span)


@CORE_FORMS.special_form(
    "when",
    signature="(when test body...)",
    doc="""Evaluate body when test is true; the last body value, or nil when test is false.

    (when (> 3 2) (print "bigger") 3)
    ;; => 3
    (when false 1)
    ;; => nil
    """,
)
@CORE_FORMS.special_form(
    "unless",
    signature="(unless test body...)",
    doc="""Evaluate body when test is false; the last body value, or nil when test is true.

    (unless (null? '(1)) "has elements")
    ;; => "has elements"
    (unless true 1)
    ;; => nil
    """,
)
def compile_when(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    args = form.args
    if not args:
        raise FormError(f"{form.name}: expected ({form.name} test body...)", form.span)
    test = c.compile(args[0], scope)
    body = c.compile_body(args[1:], scope, tail)
    if form.name == "when":
        return lambda env: body(env) if test(env) else None
    return lambda env: None if test(env) else body(env)


def check_cond(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """Each clause's test and body (an else clause's body)."""
    for clause in form.args:
        parts = elements(clause) or ()
        keep = parts[1:] if parts and isinstance(parts[0], Symbol) and parts[0].name == "else" else parts
        checker.walk(keep, local)


@CORE_FORMS.special_form(
    "cond",
    check=check_cond,
    signature="(cond (test expr...)... [(else expr...)])",
    doc="""The exprs of the first clause whose test is true; nil when none is.

    Clauses are tried in order; a clause with no exprs gives its test's value. An `else` clause,
    last, always applies.

    (define (sign n) (cond ((< n 0) "negative") ((= n 0) "zero") (else "positive")))
    (sign -5)
    ;; => "negative"
    (cond ((assoc (dict) "k" 1)))
    ;; => {"k" 1}
    """,
)
def compile_cond(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    clauses: list[tuple[Code, Code | None]] = []
    arguments = form.args
    for index, clause in enumerate(arguments):
        parts = elements(clause)
        if not parts or (isinstance(clause, ListNode) and not clause.items):
            raise FormError(
                "cond: each clause must be (test expr...) or (else expr...)", clause.span or form.span
            )
        head, body = parts[0], parts[1:]
        if isinstance(head, Symbol) and head.name == "else":
            if index != len(arguments) - 1:
                raise FormError("cond: else must be the last clause", clause.span or form.span)
            clauses.append((constant(True), c.compile_body(body, scope, tail)))
        else:
            test = c.compile(head, scope)
            clauses.append((test, c.compile_body(body, scope, tail) if body else None))

    def run(env: Frame) -> Value:
        for test, body in clauses:
            value = test(env)
            if value:
                return value if body is None else body(env)
        return None

    return run


@CORE_FORMS.special_form(
    "and",
    signature="(and e...)",
    doc="""The first false value among e..., else the last one; `(and)` is true.

    Evaluation stops at the first false value, so later expressions may rely on earlier ones.

    (and 1 "two" 3)
    ;; => 3
    (and (> 1 2) (error "not evaluated"))
    ;; => false
    """,
)
@CORE_FORMS.special_form(
    "or",
    signature="(or e...)",
    doc="""The first true value among e..., else the last one; `(or)` is false.

    Evaluation stops at the first true value: `(or x default)` gives a default for a missing x.

    (or nil (get (dict "a" 1) "a") 5)
    ;; => 1
    (or nil false)
    ;; => false
    """,
)
def compile_and_or(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    """Short-circuit: `and` stops at the first false value, `or` at the first true one."""
    args = form.args
    stops_when = form.name == "or"  # the truthiness that decides the answer
    if not args:
        return constant(not stops_when)  # (and) is true, (or) is false
    codes = [c.compile(a, scope, tail and i == len(args) - 1) for i, a in enumerate(args)]
    first, last = codes[:-1], codes[-1]

    def run(env: Frame) -> Value:
        for code in first:
            value = code(env)
            if bool(value) is stops_when:
                return value
        return last(env)

    return run


@CORE_FORMS.special_form(
    "progn",
    "begin",
    signature="(progn body...)",
    doc="""Evaluate body in order; the last value, nil for an empty body.

    `progn` and `begin` are the same form. Definitions inside it belong to the enclosing frame.

    (progn (define x 2) (* x 10))
    ;; => 20
    (progn)
    ;; => nil
    """,
)
def compile_progn(form: FunctionCallNode, scope: Scope | None, tail: bool, c: Compiler) -> Code:
    return c.compile_body(form.args, scope, tail)
