"""Small code builders shared by the compiler and the special forms."""

from __future__ import annotations

from ..errors import NameError_
from ..syntax.nodes import Symbol
from .values import UNBOUND, Code, Frame, Unbound, Value


def constant(value: Value) -> Code:
    """Code that always gives value."""
    return lambda env: value


def frame_at(env: Frame, depth: int) -> Frame:
    """The frame `depth` links up the chain."""
    for _ in range(depth):
        env = env[0]
    return env


def checked_reference(depth: int, slot: int, node: Symbol) -> Code:
    """A read of a slot that `define` fills later: reading it before then is an error."""
    name, span = node.name, node.span

    def reference(env: Frame) -> Value:
        value: Value | Unbound = frame_at(env, depth)[slot]
        if value is UNBOUND:
            raise NameError_(f"'{name}' is used before its definition has run", span)
        return value

    return reference


def sequence(codes: list[Code]) -> Code:
    """Run codes in order and give the last value (nil for none)."""
    if not codes:
        return lambda env: None
    if len(codes) == 1:
        return codes[0]
    if len(codes) == 2:
        first, second = codes

        def run2(env: Frame) -> Value:
            first(env)
            return second(env)

        return run2
    if len(codes) == 3:
        c1, c2, c3 = codes

        def run3(env: Frame) -> Value:
            c1(env)
            c2(env)
            return c3(env)

        return run3
    body, last = codes[:-1], codes[-1]

    def run(env: Frame) -> Value:
        for code in body:
            code(env)
        return last(env)

    return run
