"""The reader: text -> AST, with an LALR parser that Lark builds from grammar/sexp.lark.

Lark analyses the grammar and computes the LALR(1) tables (cached on disk); this module
drives those tables itself with a lexer made from the grammar's own terminals. Lark's
general-purpose driver and tree builder cost about three times as much per token, and
reading speed matters for large programs. The driver keeps its own stack, so deep nesting
never recurses in Python.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from lark import Lark
from lark.parsers.lalr_analysis import Shift

from .errors import ReadError
from .nodes import DictNode, FunctionCallNode, Keyword, Literal, Node, Symbol, make_list
from .resources import data_dir
from .source import Source, Span

MAX_NESTING = 100_000

_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?\Z")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_NAMED_ATOMS: dict[str, Any] = {"true": True, "false": False, "nil": None}
_PREFIX_NAMES = {
    "QUOTE": "quote",
    "QUASIQUOTE": "quasiquote",
    "UNQUOTE": "unquote",
    "UNQUOTE_SPLICING": "unquote-splicing",
}
_CLOSERS = {"(": ")", "{": "}"}

# A token is (terminal name, value): a node for atoms and strings, a Span for punctuation.
Token = tuple[str, Any]
Action = Callable[[list[Any]], Any]


def atom_node(text: str, span: Span) -> Node:
    """Classify an atom: nil, a boolean, a number, a keyword, else a symbol."""
    if text in _NAMED_ATOMS:
        return Literal(_NAMED_ATOMS[text], span)
    first = text[0]
    if first.isdigit() or first in "+-.":
        if _INT.match(text):
            return Literal(int(text), span)
        if _FLOAT.match(text):
            return Literal(float(text), span)
    if first == ":" and len(text) > 1:
        return Keyword(text[1:], span)
    return Symbol(text, span)


# Rule actions, named by the grammar's rule aliases. ------------------------------------


def _seq_add_token(children: list[Any]) -> list[Node]:
    children[0].append(children[1][1])
    return children[0]  # type: ignore[no-any-return]


def _seq_add(children: list[Any]) -> list[Node]:
    children[0].append(children[1])
    return children[0]  # type: ignore[no-any-return]


def _list(children: list[Any]) -> Node:
    return make_list(tuple(children[1]), children[0][1])


def _dict(children: list[Any]) -> Node:
    span = children[0][1]
    items = tuple(children[1])
    if len(items) % 2:
        raise ReadError("a dict literal needs an even number of forms (key value ...)", span)
    return DictNode(items, span)


def _prefixed(children: list[Any]) -> FunctionCallNode:
    (kind, span), expr = children
    node = make_list((Symbol(_PREFIX_NAMES[kind], span), expr), span)
    assert isinstance(node, FunctionCallNode)
    return node


_ACTIONS: dict[str, Action] = {
    "start": lambda children: children[0],
    "seq_empty": lambda children: [],
    "seq_add_token": _seq_add_token,
    "seq_add": _seq_add,
    "token": lambda children: children[0][1],
    "list": _list,
    "dict": _dict,
    "prefixed": _prefixed,
}


class _Lexer:
    """Scans with one regex made of the grammar's terminals, building atom nodes as it goes."""

    def __init__(self, terminals: list[Any]) -> None:
        ordered = sorted(terminals, key=lambda t: -t.priority)
        pattern = "|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in ordered)
        self._regex = re.compile(pattern + r"|(?P<_BAD>.)", re.S)

    def tokens(self, source: Source) -> Iterator[Token]:
        """Yield the tokens of source's text; raise ReadError at a character no terminal matches."""
        text = source.text
        line, line_start, depth = 1, 0, 0
        for match in self._regex.finditer(text):
            kind = match.lastgroup
            start = match.start()
            if kind == "WHITESPACE":
                value = match.group()
                if "\n" in value:
                    line += value.count("\n")
                    line_start = start + value.rfind("\n") + 1
                continue
            span = Span((source, line, start - line_start + 1))
            if kind == "ATOM":
                yield kind, atom_node(match.group(), span)
            elif kind == "STRING":
                value = match.group()
                body = value[1:-1]
                yield kind, Literal(_unescape(body, span) if "\\" in body else body, span)
                if "\n" in value:
                    line += value.count("\n")
                    line_start = start + value.rfind("\n") + 1
            elif kind == "COMMENT":
                continue
            elif kind == "HASH_BOOL":
                yield kind, Literal(match.group() == "#t", span)
            elif kind == "_BAD":
                if match.group() == '"':
                    raise ReadError("unterminated string (no closing '\"')", span)
                raise ReadError(f"unexpected character {match.group()!r}", span)
            else:
                if kind == "LPAR" or kind == "LBRACE":
                    depth += 1
                    if depth > MAX_NESTING:
                        raise ReadError(f"lists nested more than {MAX_NESTING} deep", span)
                elif kind == "RPAR" or kind == "RBRACE":
                    depth -= 1
                yield kind, span  # type: ignore[misc]


class _Parser:
    """Drives the LALR(1) tables Lark computed: shift, or reduce with the rule's action."""

    def __init__(self, lark: Lark) -> None:
        parse_table = lark.parser.parser.parser.parse_table
        self._start = parse_table.start_states["start"]
        self._end = parse_table.end_states["start"]
        self._table: dict[int, dict[str, tuple[bool, Any]]] = {
            state: {
                terminal: (True, arg) if action is Shift else (False, self._reduction(arg))
                for terminal, (action, arg) in actions.items()
            }
            for state, actions in parse_table.states.items()
        }

    @staticmethod
    def _reduction(rule: Any) -> tuple[int, str, Action]:
        action = _ACTIONS.get(rule.alias or rule.origin.name)
        if rule.options.expand1 and not rule.alias:  # `?rule`: a single child stands for it
            inner = action
            action = (lambda children: children[0]) if inner is None else (
                lambda children: children[0] if len(children) == 1 else inner(children)  # type: ignore[misc]
            )
        assert action is not None, f"no action for grammar rule {rule}"
        return len(rule.expansion), rule.origin.name, action

    def parse(self, tokens: Iterator[Token], source: Source) -> list[Node]:
        """Return the value of the start rule for the token stream."""
        table = self._table
        state = self._start
        states: list[int] = []  # the states below `state`
        values: list[Any] = []
        for token in chain(tokens, _END):
            kind = token[0]
            while True:
                try:
                    shift, arg = table[state][kind]
                except KeyError:
                    raise _unexpected(token, source) from None
                if shift:
                    states.append(state)
                    values.append(token)
                    state = arg
                    break
                size, origin, action = arg
                if size == 2 and action is _seq_add_token:  # the commonest reduction, in place
                    values[-2].append(values.pop()[1])
                    states.pop()
                    state = table[states[-1]][origin][1]
                    continue
                if size:
                    children = values[-size:]
                    del values[-size:]
                    state = states[-size]
                    del states[-size:]
                else:
                    children = []
                value = action(children)
                if kind == "$END" and not states:
                    return value  # type: ignore[no-any-return]
                states.append(state)
                values.append(value)
                state = table[state][origin][1]
        raise AssertionError("the parser ran past the end of input")


_END: tuple[Token] = (("$END", None),)


def _unescape(body: str, span: Span) -> str:
    """Replace escape sequences; an unknown one is a syntax error at its backslash."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[code]
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        before = body[: match.start()]
        line = span.line + before.count("\n")
        column = span.column + 1 + len(before) if line == span.line else len(before) - before.rfind("\n")
        shown = "\\u" if code == "u" else "\\" + code
        raise ReadError(
            f"unknown escape '{shown}' in string (expected \\n \\t \\r \\\" \\\\ or \\uXXXX)",
            Span((span.source, line, column)),
        )

    return _ESCAPE.sub(replace, body)


class Reader:
    """Reads program text into AST nodes."""

    def __init__(self) -> None:
        grammar = (data_dir("grammar") / "sexp.lark").read_text()
        lark = Lark(grammar, parser="lalr", lexer="basic", cache=True, maybe_placeholders=False)
        self._lexer = _Lexer(lark.terminals)
        self._parser = _Parser(lark)

    def read(self, text: str, origin: str = "<input>") -> list[Node]:
        """Return the top-level forms of `text`; raise ReadError with a position on bad syntax."""
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


def _unexpected(token: Token, source: Source) -> ReadError:
    """The error for a token the grammar does not allow where it stands."""
    kind, value = token
    if kind == "$END":
        return _unclosed(source)
    span: Span = value if isinstance(value, Span) else value.span
    if kind in ("RPAR", "RBRACE"):
        char = ")" if kind == "RPAR" else "}"
        before = source.text[: _offset(source, span)]
        if before.rstrip()[-1:] in ("'", "`", ",", "@"):
            return ReadError(f"unexpected '{char}'; expected an expression after the quote", span)
        opener = _innermost_unclosed(before)
        if opener is None:
            return ReadError(f"unexpected '{char}' with no matching opening bracket", span)
        open_char, line, column = opener
        return ReadError(
            f"unexpected '{char}'; expected '{_CLOSERS[open_char]}' to close '{open_char}' opened at {line}:{column}",
            span,
        )
    return ReadError("unexpected token; expected an expression", span)


def _offset(source: Source, span: Span) -> int:
    """The character offset of span in its source text."""
    lines = source.text.split("\n")[: span.line - 1]
    return sum(len(line) + 1 for line in lines) + span.column - 1


def _unclosed(source: Source) -> ReadError:
    """The error for text that ends inside a list, naming where the list was opened."""
    opener = _innermost_unclosed(source.text)
    end_line = source.text.count("\n") + 1
    end_span = Span((source, end_line, len(source.line(end_line)) + 1))
    if opener is None:
        return ReadError("unexpected end of input; expected an expression after the quote", end_span)
    char, line, column = opener
    return ReadError(
        f"unclosed '{char}' opened at {line}:{column}; expected '{_CLOSERS[char]}' before end of input",
        Span((source, line, column)),
    )


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
