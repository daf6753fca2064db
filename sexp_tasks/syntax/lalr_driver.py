"""The reader's parser: drives the LALR(1) tables Lark computed (tables.py), with shifts and
reductions fused where possible, on its own stack so that deep nesting never recurses in Python.

It knows no node: what each grammar rule builds is an action the reader hands in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import Source
from .syntax_errors import unexpected_token
from .tables import CHILD_ACTION, GrammarTables, PortableOp

# The lexer returns tokens as two parallel lists, terminal names and values, rather than a
# tuple per token: fewer objects for the garbage collector to track. A value is the node for
# atoms and strings, the head Symbol for quote marks, the Span for opening brackets, the
# character offset for closing brackets (only an error message ever needs their position), a
# ReadError for `_ERROR` and None for `$END`.
Tokens = tuple[list[str], list[Any]]
Action = Callable[[list[Any]], Any]  # a rule's children -> the rule's value

# What the driver does with a symbol in a state; compiled from Lark's table (see LalrDriver).
_APPEND = ("append",)  # the symbol is one more element of the sequence on top of the stack
_OPEN = "open"  # (_OPEN, s1, s2): shift an opening bracket to s1, start an empty sequence, go to s2
_SHIFT = "shift"  # (_SHIFT, s): shift to s
_SHIFT_REDUCE = "shift-reduce"  # (_SHIFT_REDUCE, size, action, rule): shift, then reduce by rule
_REDUCE = "reduce"  # (_REDUCE, size, action, rule): reduce by rule, then look at the token again
_ACCEPT = "accept"  # (_ACCEPT,): the start symbol is complete
_NO_OP = (None,)  # no action: a syntax error
Op = tuple[Any, ...]
_CODES = {code: code for code in (_OPEN, _SHIFT, _SHIFT_REDUCE, _REDUCE, _ACCEPT)}


def _child(children: list[Any]) -> Any:
    """The action of a `?rule` with one child: the child stands for the rule."""
    return children[0]


def _materialize(op: PortableOp, actions: Mapping[str, Action]) -> Op:
    """A table operation with its code as the driver's own constant and its action as a function.

    The driver compares codes by identity, so codes read from the table cache are swapped for
    the module's constants here.
    """
    code = op[0]
    if code == _APPEND[0]:
        return _APPEND
    if code in (_SHIFT_REDUCE, _REDUCE):
        _, size, action, symbol = op
        return (_CODES[code], size, _child if action == CHILD_ACTION else actions[action], symbol)
    return (_CODES[code], *op[1:])


class LalrDriver:
    """Drives the LALR(1) tables Lark computed, with shifts and reductions fused where possible
    (see tables.py for how the fused operations are derived)."""

    def __init__(self, tables: GrammarTables, actions: Mapping[str, Action]) -> None:
        self._start = tables.start
        self._end = tables.end
        self._ops: dict[int, dict[str, Op]] = {
            state: {symbol: _materialize(op, actions) for symbol, op in row.items()}
            for state, row in tables.ops.items()
        }

    def parse(self, tokens: Tokens, source: Source) -> Any:
        """Return the value of the start rule for the tokens; ReadError at the first bad one."""
        ops = self._ops
        state = self._start
        states: list[int] = []  # the states below `state`
        values: list[Any] = []  # the value of each symbol on the stack
        # The three commonest cases are spelled out here; _step does everything, slower.
        for kind, value in zip(*tokens, strict=True):
            op = ops[state].get(kind, _NO_OP)
            if op is _APPEND:  # an atom or string inside a list
                values[-1].append(value)
                continue
            code = op[0]
            if code is _OPEN:  # an opening bracket
                states.append(state)
                states.append(op[1])
                values.append(value)
                values.append([])
                state = op[2]
            elif code is _SHIFT_REDUCE:  # a closing bracket: build the list, then add it to the one around it
                _, size, action, symbol = op
                # Shift and reduce in one go: the token is the last of the rule's `size` children.
                children = values[1 - size :]
                children.append(value)
                del values[1 - size :]
                state = states[1 - size]
                del states[1 - size :]
                value = action(children)
                op = ops[state][symbol]
                if op is _APPEND:
                    values[-1].append(value)
                else:
                    state = self._step(state, symbol, value, states, values, source)
            else:
                state = self._step(state, kind, value, states, values, source)
                if state == self._end:
                    return values.pop()
        raise AssertionError("the parser ran past the end of input")

    def _step(
        self, state: int, symbol: str, value: Any, states: list[int], values: list[Any], source: Source
    ) -> int:
        """Consume symbol in state, doing every reduction that needs no lookahead; return the new state."""
        ops = self._ops
        while True:
            op = ops[state].get(symbol, _NO_OP)
            code = op[0]
            if code is None:
                raise unexpected_token(symbol, value, source)
            if op is _APPEND:
                values[-1].append(value)
                return state
            if code is _SHIFT or code is _OPEN:
                states.append(state)
                values.append(value)
                # An op is a row of the tables, (code, state...): its states are ints. Not read into
                # annotated locals, since this runs once per token.
                if code is _SHIFT:
                    return op[1]  # type: ignore[no-any-return]
                states.append(op[1])
                values.append([])
                return op[2]  # type: ignore[no-any-return]
            if code is _ACCEPT:
                values.append(value)
                return self._end
            if code is _SHIFT_REDUCE:
                states.append(state)
                values.append(value)
                state, symbol, value = _reduce(op, state, states, values)
                continue
            # _REDUCE: reduce on this lookahead and take the goto (a nonterminal is never a
            # lookahead, so this recurses once), then look at the lookahead again.
            state = self._step(*_reduce(op, state, states, values), states, values, source)
            if state == self._end:
                return state


def _reduce(op: Op, state: int, states: list[int], values: list[Any]) -> tuple[int, str, Any]:
    """Pop op's rule off the stack; return the exposed state, the rule's symbol and its value."""
    _, size, action, origin = op
    if size:
        children = values[-size:]
        del values[-size:]
        state = states[-size]
        del states[-size:]
    else:
        children = []
    return state, origin, action(children)
