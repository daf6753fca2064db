"""AST nodes the reader builds. Symbols and keywords double as runtime values (code is data).

Spans never take part in equality, so tests compare trees without building positions.
Nodes are never mutated after construction. They are not `frozen=True` only because a frozen
dataclass's __init__ costs about twice as much, and the reader builds millions of nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from ..errors import Span

# What a literal in the source can be: a number, a string, true, false or nil.
Atom = bool | int | float | str | None


@dataclass(slots=True, unsafe_hash=True)
class Symbol:
    """A name; evaluates to its binding, quotes to itself."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True, unsafe_hash=True)
class Keyword:
    """`:name`: a self-evaluating value used for keyword arguments."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Literal:
    """A number, string, boolean or nil written in the source."""

    value: Atom
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class ArgumentNode:
    """One element of a call after its head."""

    value: Node
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class FunctionCallNode:
    """A list whose head is a symbol: a special form, a procedure call or a task call."""

    head: Symbol
    arguments: tuple[ArgumentNode, ...]
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        """The head symbol's name."""
        return self.head.name

    @property
    def args(self) -> tuple[Node, ...]:
        """The argument expressions, unwrapped."""
        return tuple(a.value for a in self.arguments)


@dataclass(slots=True)
class ListNode:
    """A list whose head is not a symbol, including the empty list."""

    items: tuple[Node, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class DictNode:
    """`{key value ...}`: a dict literal, the printer's form for dicts."""

    items: tuple[Node, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


Node = Symbol | Keyword | Literal | FunctionCallNode | ListNode | DictNode


def elements(node: Node) -> tuple[Node, ...] | None:
    """Return a list node's elements head included, or None when node is not a list."""
    if isinstance(node, FunctionCallNode):
        return (node.head, *node.args)
    if isinstance(node, ListNode):
        return node.items
    return None


def make_list(items: Sequence[Node], span: Span | None) -> FunctionCallNode | ListNode:
    """Build the node for a parenthesised list of items: a call when its head is a symbol."""
    if items and type(items[0]) is Symbol:
        # Built without calling the dataclass __init__s, which takes 40% longer: the reader
        # makes one of these per list read, and an ArgumentNode per element. _FAST_BUILT
        # below checks that the fields set here are still all the fields there are.
        arguments = []
        for item in items[1:]:
            argument = _new(ArgumentNode)
            argument.value = item
            argument.span = getattr(item, "span", None)
            arguments.append(argument)
        call = _new(FunctionCallNode)
        call.head = items[0]
        call.arguments = tuple(arguments)
        call.span = span
        return call
    return ListNode(tuple(items), span)


_new = object.__new__
_FAST_BUILT = {ArgumentNode: ["value", "span"], FunctionCallNode: ["head", "arguments", "span"]}
assert all([f.name for f in fields(cls)] == names for cls, names in _FAST_BUILT.items())
