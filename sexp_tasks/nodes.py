"""AST nodes the reader builds. Symbols and keywords double as runtime values (code is data).

Spans never take part in equality, so tests compare trees without building positions.
Nodes are never mutated after construction. They are not `frozen=True` only because a frozen
dataclass's __init__ costs about twice as much, and the reader builds millions of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from .source import Span


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

    value: Any
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


Node = Union[Symbol, Keyword, Literal, FunctionCallNode, ListNode, DictNode]


def elements(node: Node) -> tuple[Node, ...] | None:
    """Return a list node's elements head included, or None when node is not a list."""
    if isinstance(node, FunctionCallNode):
        return (node.head, *node.args)
    if isinstance(node, ListNode):
        return node.items
    return None


def make_list(items: tuple[Node, ...], span: Span | None) -> FunctionCallNode | ListNode:
    """Build the node for a parenthesised list: a call when its head is a symbol."""
    if items and type(items[0]) is Symbol:
        head = items[0]
        arguments = tuple(ArgumentNode(item, getattr(item, "span", None)) for item in items[1:])
        return FunctionCallNode(head, arguments, span)
    return ListNode(items, span)
