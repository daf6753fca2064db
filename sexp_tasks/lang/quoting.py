"""Quoted data: turning AST nodes into the values `quote` returns."""

from __future__ import annotations

from ..errors import TypeError_
from ..syntax.nodes import DictNode, FunctionCallNode, Keyword, ListNode, Literal, Node, Symbol
from .printer import to_repr
from .values import Value


def datum(node: Node) -> Value:
    """The value a quoted node stands for: lists become lists, symbols stay symbols."""
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, (Symbol, Keyword)):
        return node
    if isinstance(node, FunctionCallNode):
        return [node.head, *(datum(a.value) for a in node.arguments)]
    if isinstance(node, ListNode):
        return [datum(item) for item in node.items]
    if isinstance(node, DictNode):
        items = node.items
        return {dict_key(datum(items[i])): datum(items[i + 1]) for i in range(0, len(items), 2)}
    raise TypeError(f"not a node: {node!r}")


def dict_key(key: Value) -> str:
    """Dict keys are strings: keywords and symbols give their names, numbers their text."""
    if isinstance(key, str):
        return key
    if isinstance(key, (Symbol, Keyword)):
        return key.name
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return repr(key)
    raise TypeError_(f"dict keys must be strings, keywords or symbols, got {to_repr(key)}")
