"""The reader's tables: Lark computes the LALR(1) parse table from grammar/sexp.lark, and this
module turns it into the fused operations the reader's driver runs, cached on disk.

This is the one module that imports Lark, and only when the cache is cold: a warm start reads
the tables from a small JSON file instead of importing Lark and analysing the grammar, which
costs more than the whole rest of start-up.

Operations (what the driver does with a symbol in a state), with actions named, not bound:
  ["append"]                              one more element of the sequence on top of the stack
  ["open", s1, s2]                        shift an opening bracket to s1, start a sequence, go to s2
  ["shift", s]                            shift to s
  ["shift-reduce", size, action, symbol]  shift, then reduce by the rule for symbol
  ["reduce", size, action, symbol]        reduce, then look at the token again
  ["accept"]                              the start symbol is complete
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

CACHE_FORMAT = 1
CHILD_ACTION = "_child"  # the action of a `?rule` with one child: the child stands for the rule
PortableOp = list[Any]


class Terminal(NamedTuple):
    """A terminal of the grammar: its name, its regex, and its priority."""

    name: str
    regex: str
    priority: int


@dataclass
class GrammarTables:
    """Everything the reader needs from the grammar."""

    terminals: list[Terminal]
    ignore: list[str]
    start: int
    end: int
    ops: dict[int, dict[str, PortableOp]]


def load_tables(
    grammar_path: Path, actions: Collection[str], needs_lookahead: Collection[str]
) -> GrammarTables:
    """The tables for the grammar, from the cache when it holds them, else computed (and cached)."""
    grammar = grammar_path.read_text(encoding="utf-8")
    key = f"{zlib.crc32(f'{CACHE_FORMAT}{sorted(needs_lookahead)}{grammar}'.encode()):08x}-{len(grammar)}"
    cache = _cache_dir() / f"grammar-{key}.json"
    try:
        return _decode(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no cache yet, or an unreadable one: compute the tables
    tables = _compile(grammar, set(actions), set(needs_lookahead))
    _write(cache, _encode(tables))
    return tables


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sexp-tasks"


def _write(path: Path, text: str) -> None:
    """Write the cache atomically; a cache that cannot be written is simply not used."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


def _encode(tables: GrammarTables) -> str:
    return json.dumps(
        {
            "terminals": [list(t) for t in tables.terminals],
            "ignore": tables.ignore,
            "start": tables.start,
            "end": tables.end,
            "ops": {str(state): row for state, row in tables.ops.items()},
        }
    )


def _decode(data: dict[str, Any]) -> GrammarTables:
    return GrammarTables(
        terminals=[Terminal(*t) for t in data["terminals"]],
        ignore=list(data["ignore"]),
        start=int(data["start"]),
        end=int(data["end"]),
        ops={int(state): row for state, row in data["ops"].items()},
    )


def _compile(grammar: str, actions: set[str], needs_lookahead: set[str]) -> GrammarTables:
    from lark import Lark  # lazy: importing it costs ~26 ms, paid only when the cache is cold

    lark = Lark(grammar, parser="lalr", lexer="basic", maybe_placeholders=False)
    compiler = _TableCompiler(lark, actions, needs_lookahead)
    return GrammarTables(
        terminals=[Terminal(t.name, t.pattern.to_regexp(), t.priority) for t in lark.terminals],
        ignore=list(lark.lexer_conf.ignore),
        start=compiler.start,
        end=compiler.end,
        ops=compiler.ops,
    )


class _TableCompiler:
    """Drives the LALR(1) tables Lark computed, with shifts and reductions fused where possible.

    An LR parser shifts each token and then reduces when the next token shows it should.
    Where a state reduces by one rule whatever comes next (a "default reduction"), the
    reduction can happen straight after the shift without changing which token an error is
    reported at. The constructor follows such chains through the table once, so that at run
    time an atom in a list costs one table lookup and one append instead of a shift, two
    reductions and two gotos.
    """

    def __init__(self, lark: Any, actions: set[str], needs_lookahead: set[str]) -> None:
        from lark.parsers.lalr_analysis import Shift  # lazy, as Lark in _compile

        self._shift = Shift
        self._actions = actions
        self._needs_lookahead = needs_lookahead
        parse_table = lark.parser.parser.parser.parse_table
        self._table: dict[int, dict[str, tuple[Any, Any]]] = parse_table.states
        self._terminals = {t.name for t in lark.terminals} | {"$END"}
        self.start = parse_table.start_states["start"]
        self.end = parse_table.end_states["start"]
        # Every state is entered by one grammar symbol; an append is only valid where that is `seq`.
        self._entered_by: dict[int, set[str]] = {}
        for row in self._table.values():
            for symbol, (action, arg) in row.items():
                if action is self._shift:
                    self._entered_by.setdefault(arg, set()).add(symbol)
        self.ops: dict[int, dict[str, PortableOp]] = {
            state: {symbol: self._compile(state, symbol) for symbol in row}
            for state, row in self._table.items()
        }

    def _default_reduction(self, state: int) -> Any:
        """The rule state reduces by whatever terminal comes next, or None if it may shift or differ."""
        actions = [entry for symbol, entry in self._table[state].items() if symbol in self._terminals]
        if not actions or any(action is self._shift or arg is not actions[0][1] for action, arg in actions):
            return None
        return actions[0][1]

    def _compile(self, state: int, symbol: str) -> PortableOp:
        """What to do with symbol in state: the table's shift or reduce, fused with default reductions."""
        action, arg = self._table[state][symbol]
        if action is not self._shift:
            return ["reduce", len(arg.expansion), self._action(arg), arg.origin.name]
        target = arg
        if target == self.end:
            return ["accept"]
        rule = self._default_reduction(target)
        if rule is None or rule.alias in self._needs_lookahead:
            return ["shift", target]  # the reduction waits for the next token, as in any LR parser
        size, origin = len(rule.expansion), rule.origin.name
        if size == 1 and rule.options.expand1 and not rule.alias:
            return self._compile(state, origin)  # `?rule` with one child: the child stands for it
        if size == 0 and rule.alias == "seq_empty":
            after = self._compile(target, origin)
            assert after[0] == "shift", f"unexpected table shape after {rule}"
            return ["open", target, after[1]]
        if rule.alias == "seq_add" and self._entered_by[state] == {origin}:
            # `seq: seq item` pops back to the state below `state`, whose goto on seq is `state`.
            return ["append"]
        if size < 2:
            return ["shift", target]  # parse() fuses only rules of two or more symbols; none is shorter
        return ["shift-reduce", size, self._action(rule), origin]

    def _action(self, rule: Any) -> str:
        """The name of the reader's action for rule."""
        if rule.options.expand1 and not rule.alias:
            return CHILD_ACTION
        name: str = rule.alias or rule.origin.name  # lark's grammar objects are untyped
        assert name in self._actions, f"no action for grammar rule {rule}"
        return name
