"""The reader: text -> AST, with an LALR parser that Lark builds from grammar/sexp.lark.

Lark analyses the grammar and computes the LALR(1) tables (tables.py, cached on disk
so that a warm start does not even import Lark); lalr_driver.py drives those tables itself
with the lexer here, made from the grammar's own terminals, and the rule actions here, which
build the nodes. Lark's general-purpose driver and tree builder cost several times as much per
token, and reading speed matters for large programs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection
from typing import Any

from ..errors import ReadError, Source, Span
from ..resources import data_dir
from .lalr_driver import Action, LalrDriver, Tokens
from .nodes import Atom, DictNode, Keyword, Literal, Node, Symbol, make_list
from .numerals import parse_number
from .tables import Terminal, load_tables

MAX_NESTING = 100_000

# A surrogate pair written as two escapes is one character, as in JSON; it is matched whole.
_ESCAPE = re.compile(r"\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_BOM = "\ufeff"
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_NAMED_ATOMS: dict[str, Atom] = {"true": True, "false": False, "nil": None}
_PREFIX_NAMES = {
    "QUOTE": "quote",
    "QUASIQUOTE": "quasiquote",
    "UNQUOTE": "unquote",
    "UNQUOTE_SPLICING": "unquote-splicing",
}
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
        number = parse_number(text)
        if number is not None:
            return Literal, number
    if first == ":" and len(text) > 1:
        return Keyword, text[1:]
    return Symbol, text


# Rule actions, named by the grammar's rule aliases. ------------------------------------


def _seq_add(children: list[Any]) -> list[Node]:
    children[0].append(children[1])
    return children[0]  # type: ignore[no-any-return]  # the sequence so far: a list of nodes


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
            skipped = self._skip.match(text)
            assert skipped is not None  # the skip pattern matches anywhere, if only the empty string
            for match in self._regex.finditer(text, skipped.end()):
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
                        value = Symbol(_PREFIX_NAMES[kind], span)
                    elif text[start] == '"':
                        unterminated = ReadError("unterminated string (no closing '\"')", span)
                        raise unterminated.unfinished(in_string=True)
                    else:
                        raise ReadError(f"unexpected character {text[start]!r}", span)
                add_kind(kind)
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
        self._parser = LalrDriver(tables, _ACTIONS)

    def read(self, text: str, origin: str = "<input>") -> list[Node]:
        """Return the top-level forms of `text`; raise ReadError with a position on bad syntax.

        A leading byte-order mark (editors on Windows write one) is not part of the program.
        """
        if text.startswith(_BOM):
            text = text[1:]
        source = Source(origin, text)
        forms: list[Node] = self._parser.parse(self._lexer.tokens(source), source)  # the start rule's value
        return forms


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
