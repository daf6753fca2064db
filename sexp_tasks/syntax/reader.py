"""The reader: text -> AST, with an LALR parser that Lark builds from grammar/sexp.lark.

Lark analyses the grammar and computes the LALR(1) tables (tables.py, cached on disk
so that a warm start does not even import Lark); this module drives those tables itself with
a lexer made from the grammar's own terminals. Lark's
general-purpose driver and tree builder cost several times as much per token, and reading
speed matters for large programs. The driver keeps its own stack, so deep nesting never
recurses in Python.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection
from typing import Any

from ..errors import ReadError
from ..resources import data_dir
from .nodes import DictNode, Keyword, Literal, Node, Symbol, make_list
from .source import Source, Span
from .tables import CHILD_ACTION, GrammarTables, PortableOp, Terminal, load_tables

MAX_NESTING = 100_000

_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?\Z")
# A surrogate pair written as two escapes is one character, as in JSON; it is matched whole.
_ESCAPE = re.compile(r"\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_BOM = "\ufeff"
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_NAMED_ATOMS: dict[str, Any] = {"true": True, "false": False, "nil": None}
_PREFIX_NAMES = {
    "QUOTE": "quote",
    "QUASIQUOTE": "quasiquote",
    "UNQUOTE": "unquote",
    "UNQUOTE_SPLICING": "unquote-splicing",
}
_CLOSERS = {"(": ")", "{": "}"}

# The lexer returns tokens as two parallel lists, terminal names and values, rather than a
# tuple per token: fewer objects for the garbage collector to track. A value is the node for
# atoms and strings, the head Symbol for quote marks, the Span for opening brackets, the
# character offset for closing brackets (only an error message ever needs their position), a
# ReadError for `_ERROR` and None for `$END`.
Tokens = tuple[list[str], list[Any]]
Action = Callable[[list[Any]], Any]
AtomClass = tuple[Callable[[Any, Span], Node], Any]


def atom_node(text: str, span: Span) -> Node:
    """Classify an atom: nil, a boolean, a number, a keyword, else a symbol."""
    make, value = _classify(text)
    return make(value, span)


def _classify(text: str) -> AtomClass:
    """Return the node class for an atom and the value to build it with."""
    if text in _NAMED_ATOMS:
        return Literal, _NAMED_ATOMS[text]
    first = text[0]
    if first.isdigit() or first in "+-.":
        if _INT.match(text):
            return Literal, _parse_int(text)
        if _FLOAT.match(text):
            return Literal, float(text)
    if first == ":" and len(text) > 1:
        return Keyword, text[1:]
    return Symbol, text


def _parse_int(text: str) -> int:
    """int(text), also past Python's limit on digits converted at once (integers have any size)."""
    try:
        return int(text)
    except ValueError:
        sign, digits = (-1, text[1:]) if text[0] == "-" else (1, text.lstrip("+"))
        value = 0
        for i in range(0, len(digits), 4000):
            chunk = digits[i : i + 4000]
            value = value * 10 ** len(chunk) + int(chunk)
        return sign * value


# Rule actions, named by the grammar's rule aliases. ------------------------------------


def _seq_add(children: list[Any]) -> list[Node]:
    children[0].append(children[1])
    return children[0]  # type: ignore[no-any-return]


def _list(children: list[Any]) -> Node:
    return make_list(children[1], children[0])


def _dict(children: list[Any]) -> Node:
    span = children[0]
    items = tuple(children[1])
    if len(items) % 2:
        raise ReadError("a dict literal needs an even number of forms (key value ...)", span)
    return DictNode(items, span)


def _prefixed(children: list[Any]) -> Node:
    head, expr = children
    return make_list((head, expr), head.span)


_ACTIONS: dict[str, Action] = {
    "start": lambda children: children[0],
    "seq_empty": lambda children: [],
    "seq_add": _seq_add,
    "list": _list,
    "dict": _dict,
    "prefixed": _prefixed,
}
# Actions that can raise run only once the next token is read, as an LALR parser does it,
# so that an error in that token (an unterminated string, say) is still the one reported.
_NEEDS_LOOKAHEAD = {"dict"}


class _Lexer:
    """Scans with one regex made of the grammar's terminals, building atom nodes as it goes."""

    def __init__(self, terminals: Collection[Terminal], ignore: Collection[str]) -> None:
        skipped = [t.regex for t in terminals if t.name in ignore]
        kept = sorted((t for t in terminals if t.name not in ignore), key=lambda t: -t.priority)
        # The ignored terminals (whitespace, comments) are matched as the tail of the token
        # before them rather than as tokens of their own: half as many matches to iterate.
        # The tokens are the same as with all terminals in one alternation, because no kept
        # terminal can start where an ignored one does.
        skip = "(?:" + "|".join(skipped) + ")*"
        # Each terminal's pattern is followed by an empty group named after it, which marks
        # the terminal that matched (match.lastgroup) and where its text ends. A group around
        # the pattern would do the same, but stops the regex engine from passing over the
        # alternatives that cannot match by a look at their first character.
        tokens = "|".join(f"{t.regex}(?P<{t.name}>)" for t in kept)
        self._skip = re.compile(skip)
        self._regex = re.compile(f"(?:{tokens}|.(?P<_BAD>)){skip}", re.S)

    def tokens(self, source: Source) -> Tokens:
        """Return the tokens of source's text, ending with `$END`, or with `_ERROR` at a lexical error.

        A lexical error becomes a token rather than an exception so that it is reported only
        if the parser gets that far: the first error in the text is the one the user sees.
        """
        text = source.text
        kinds: list[str] = []
        values: list[Any] = []
        add_kind, add_value = kinds.append, values.append
        cache: dict[str, AtomClass] = {}  # programs repeat their atoms; classify each once
        # Lines are counted lazily: only a token past the next newline moves the count on.
        line, line_start, next_newline = 1, 0, _find_newline(text, 0)
        depth = 0
        try:
            for match in self._regex.finditer(text, self._skip.match(text).end()):  # type: ignore[union-attr]
                kind = match.lastgroup
                start = match.start()
                if start > next_newline:
                    line += text.count("\n", next_newline, start)
                    line_start = text.rfind("\n", next_newline, start) + 1
                    next_newline = _find_newline(text, start)
                if kind == "ATOM":
                    atom = text[start : match.end(kind)]
                    known = cache.get(atom)
                    if known is None:
                        known = cache[atom] = _classify(atom)
                    value: Any = known[0](known[1], Span((source, line, start - line_start + 1)))
                elif kind == "RPAR" or kind == "RBRACE":
                    depth -= 1
                    value = start
                else:
                    value = span = Span((source, line, start - line_start + 1))
                    if kind == "LPAR" or kind == "LBRACE":
                        depth += 1
                        if depth > MAX_NESTING:
                            raise ReadError(f"lists nested more than {MAX_NESTING} deep", span)
                    elif kind == "STRING":
                        body = text[start + 1 : match.end(kind) - 1]
                        value = Literal(_unescape(body, span) if "\\" in body else body, span)
                    elif kind == "HASH_BOOL":
                        value = Literal(text[start : match.end(kind)] == "#t", span)
                    elif kind in _PREFIX_NAMES:
                        value = Symbol(_PREFIX_NAMES[kind], span)  # type: ignore[index]
                    elif text[start] == '"':
                        raise ReadError("unterminated string (no closing '\"')", span).unfinished()
                    else:
                        raise ReadError(f"unexpected character {text[start]!r}", span)
                add_kind(kind)  # type: ignore[arg-type]
                add_value(value)
        except ReadError as err:
            add_kind("_ERROR")
            add_value(err)
        else:
            add_kind("$END")
            add_value(None)
        return kinds, values


def _find_newline(text: str, start: int) -> int:
    """The offset of the next newline at or after start, or len(text) if there is none."""
    found = text.find("\n", start)
    return len(text) if found < 0 else found


# What the driver does with a symbol in a state; compiled from Lark's table (see _Parser).
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


def _materialize(op: PortableOp) -> Op:
    """A table operation with its code as the driver's own constant and its action as a function.

    The driver compares codes by identity, so codes read from the table cache are swapped for
    the module's constants here.
    """
    code = op[0]
    if code == _APPEND[0]:
        return _APPEND
    if code in (_SHIFT_REDUCE, _REDUCE):
        _, size, action, symbol = op
        return (_CODES[code], size, _child if action == CHILD_ACTION else _ACTIONS[action], symbol)
    return (_CODES[code], *op[1:])


class _Parser:
    """Drives the LALR(1) tables Lark computed, with shifts and reductions fused where possible
    (see tables.py for how the fused operations are derived)."""

    def __init__(self, tables: GrammarTables) -> None:
        self._start = tables.start
        self._end = tables.end
        self._ops: dict[int, dict[str, Op]] = {
            state: {symbol: _materialize(op) for symbol, op in row.items()}
            for state, row in tables.ops.items()
        }

    def parse(self, tokens: Tokens, source: Source) -> list[Node]:
        """Return the value of the start rule for the tokens."""
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
                    return values.pop()  # type: ignore[no-any-return]
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
                raise _unexpected(symbol, value, source)
            if op is _APPEND:
                values[-1].append(value)
                return state
            if code is _SHIFT or code is _OPEN:
                states.append(state)
                values.append(value)
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


def _unescape(body: str, span: Span) -> str:
    """Replace escape sequences; an unknown one is a syntax error at its backslash."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[code]
        if code[0] == "u" and len(code) == 11:  # a high and a low surrogate
            high, low = int(code[1:5], 16), int(code[7:], 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        if code[0] == "u" and len(code) == 5:
            if not 0xD800 <= int(code[1:], 16) <= 0xDFFF:
                return chr(int(code[1:], 16))
            raise ReadError(
                f"lone surrogate '\\{code}' in string (a \\uD800-\\uDBFF escape must be followed"
                " by a \\uDC00-\\uDFFF one)",
                _escape_span(body, match.start(), span),
            )
        shown = "\\u" if code == "u" else "\\" + code
        raise ReadError(
            f"unknown escape '{shown}' in string (expected \\n \\t \\r \\\" \\\\ or \\uXXXX)",
            _escape_span(body, match.start(), span),
        )

    return _ESCAPE.sub(replace, body)


def _escape_span(body: str, offset: int, span: Span) -> Span:
    """The span of the backslash at offset in the body of the string that starts at span."""
    before = body[:offset]
    line = span.line + before.count("\n")
    column = span.column + 1 + len(before) if line == span.line else len(before) - before.rfind("\n")
    return Span((span.source, line, column))


class Reader:
    """Reads program text into AST nodes."""

    def __init__(self) -> None:
        tables = load_tables(data_dir("grammar") / "sexp.lark", set(_ACTIONS), _NEEDS_LOOKAHEAD)
        self._lexer = _Lexer(tables.terminals, tables.ignore)
        self._parser = _Parser(tables)

    def read(self, text: str, origin: str = "<input>") -> list[Node]:
        """Return the top-level forms of `text`; raise ReadError with a position on bad syntax.

        A leading byte-order mark (editors on Windows write one) is not part of the program.
        """
        if text.startswith(_BOM):
            text = text[1:]
        source = Source(origin, text)
        return self._parser.parse(self._lexer.tokens(source), source)


_shared: Reader | None = None
_shared_lock = threading.Lock()


def read(text: str, origin: str = "<input>") -> list[Node]:
    """Read `text` with a Reader built once per process (building one takes milliseconds)."""
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                _shared = Reader()
    return _shared.read(text, origin)


def _unexpected(kind: str, value: Any, source: Source) -> ReadError:
    """The error for a token the grammar does not allow where it stands."""
    if kind == "_ERROR":
        return value  # type: ignore[no-any-return]
    if kind == "$END":
        return _unclosed(source)
    if kind in ("RPAR", "RBRACE"):
        char = ")" if kind == "RPAR" else "}"
        span = _span_at(source, value)
        before = source.text[:value]
        if before.rstrip()[-1:] in ("'", "`", ",", "@"):
            return ReadError(f"unexpected '{char}'; expected an expression after the quote", span)
        opener = _innermost_unclosed(before)
        if opener is None:
            return ReadError(f"unexpected '{char}' with no matching opening bracket", span)
        open_char, line, column = opener
        expected = _CLOSERS[open_char]
        return ReadError(
            f"unexpected '{char}'; expected '{expected}' to close '{open_char}' opened at {line}:{column}",
            span,
        )
    span = value if isinstance(value, Span) else value.span
    return ReadError("unexpected token; expected an expression", span)


def _span_at(source: Source, offset: int) -> Span:
    """The span of the character at offset in source's text."""
    line_start = source.text.rfind("\n", 0, offset) + 1
    return Span((source, source.text.count("\n", 0, offset) + 1, offset - line_start + 1))


def _unclosed(source: Source) -> ReadError:
    """The error for text that ends inside a list, naming where the list was opened."""
    opener = _innermost_unclosed(source.text)
    end_line = source.text.count("\n") + 1
    end_span = Span((source, end_line, len(source.line(end_line)) + 1))
    if opener is None:
        return ReadError(
            "unexpected end of input; expected an expression after the quote", end_span
        ).unfinished()
    char, line, column = opener
    return ReadError(
        f"unclosed '{char}' opened at {line}:{column}; expected '{_CLOSERS[char]}' before end of input",
        Span((source, line, column)),
    ).unfinished()


def _innermost_unclosed(text: str) -> tuple[str, int, int] | None:
    """Scan brackets outside strings and comments; return the last one left open."""
    stack: list[tuple[str, int, int]] = []
    line, line_start, i, n = 1, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    line, line_start = line + 1, i + 1
                i += 1
        elif c == ";":
            while i + 1 < n and text[i + 1] != "\n":
                i += 1
        elif c in "({":
            stack.append((c, line, i - line_start + 1))
        elif c in ")}" and stack:
            stack.pop()
        elif c == "\n":
            line, line_start = line + 1, i + 1
        i += 1
    return stack[-1] if stack else None
