"""Lambda lists: `(req... &optional opt-or-(opt default)... &rest r &key key-or-(key default)...)`.

Parsing checks the shape; `LambdaList.finish` builds the function that turns a call's
arguments into a frame, specialised for the common all-required case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ArityError, FormError, Span
from ..syntax.nodes import FunctionCallNode, Keyword, ListNode, Node, Symbol, elements
from .calls import Closure, expected_count
from .environment import FIRST_SLOT
from .printer import to_repr
from .quoting import datum
from .values import UNBOUND, Code, Frame, Unbound, Value

_MARKERS = ("&optional", "&rest", "&key")


@dataclass
class ParsedParams:
    """The parameter names of a lambda list, by kind, with default expressions."""

    required: list[str] = field(default_factory=list)
    optional: list[tuple[str, Node | None]] = field(default_factory=list)
    rest: str | None = None
    keys: list[tuple[str, Node | None]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        """Every parameter name, in slot order."""
        rest = [self.rest] if self.rest else []
        return [*self.required, *(n for n, _ in self.optional), *rest, *(n for n, _ in self.keys)]


def parse_params(node: Node, form: str, span: Span | None) -> ParsedParams:
    """Check and split a lambda list node; FormError on a malformed one."""
    items = elements(node)
    if items is None:
        if isinstance(node, ListNode) and not node.items:
            items = ()
        else:
            raise FormError(f"{form}: expected a parameter list such as (x y), got {_show(node)}", span)
    params = ParsedParams()
    mode = "required"
    seen: set[str] = set()
    for item in items:
        if isinstance(item, Symbol) and item.name in _MARKERS:
            order = ["required", *_MARKERS]
            if order.index(item.name) <= order.index(mode):
                raise FormError(f"{form}: '{item.name}' out of order (expected {' '.join(_MARKERS)})", span)
            mode = item.name
            continue
        name, default = _param(item, mode, form, span)
        if name in seen:
            raise FormError(f"{form}: parameter '{name}' appears twice", span)
        seen.add(name)
        if mode == "required":
            params.required.append(name)
        elif mode == "&optional":
            params.optional.append((name, default))
        elif mode == "&rest":
            if params.rest is not None:
                raise FormError(f"{form}: &rest takes exactly one name", span)
            params.rest = name
        else:
            params.keys.append((name, default))
    if mode == "&rest" and params.rest is None:
        raise FormError(f"{form}: &rest needs a name after it", span)
    return params


def _param(item: Node, mode: str, form: str, span: Span | None) -> tuple[str, Node | None]:
    if isinstance(item, Symbol):
        return item.name, None
    parts = elements(item)
    if mode in ("&optional", "&key") and isinstance(item, FunctionCallNode) and parts and len(parts) == 2:
        return item.head.name, parts[1]
    expected = "a name or (name default)" if mode in ("&optional", "&key") else "a parameter name"
    raise FormError(f"{form}: expected {expected}, got {_show(item)}", span)


def _show(node: Node) -> str:
    return to_repr(datum(node))


Binder = Callable[[Closure, list[Value], int], Frame]


class LambdaList:
    """Binds arguments to a closure's frame slots; built once per lambda expression."""

    __slots__ = ("name", "params", "defaults", "limit", "bind", "frame_size", "count", "padding", "doc")

    def __init__(self, name: str, params: ParsedParams, limit: int) -> None:
        self.name = name
        self.params = params
        self.limit = limit
        self.defaults: dict[str, Code | None] = {}
        self.frame_size = len(params.names)
        self.bind: Binder = self._unfinished
        # For all-required lambda lists, call sites build the frame: [env, depth, *args, *padding].
        self.count = -1
        self.padding: tuple[Unbound, ...] = ()
        self.doc: str | None = None  # the docstring: a string the body starts with, other forms after it

    def _unfinished(self, closure: Closure, args: list[Value], depth: int) -> Frame:
        raise AssertionError("LambdaList used before finish()")

    def finish(self, frame_size: int) -> None:
        """Fix the frame size (parameters plus the body's local definitions) and build `bind`."""
        self.frame_size = frame_size
        p = self.params
        if not p.optional and p.rest is None and not p.keys:
            self.count = len(p.required)
            self.padding = (UNBOUND,) * (frame_size - len(p.required))
            self.bind = self._simple_binder(len(p.required), frame_size - len(p.required))
        else:
            self.bind = self._general_bind

    def _simple_binder(self, count: int, extra: int) -> Binder:
        name = self.name
        padding = [UNBOUND] * extra

        def bind(closure: Closure, args: list[Value], depth: int) -> Frame:
            if len(args) != count:
                raise ArityError(f"{name}: {expected_count(count, count)}, got {len(args)}")
            return [closure.env, depth, *args, *padding]

        return bind

    def _general_bind(self, closure: Closure, args: list[Value], depth: int) -> Frame:
        p = self.params
        frame: Frame = [closure.env, depth] + [UNBOUND] * self.frame_size
        n, i, slot = len(args), 0, FIRST_SLOT
        if n < len(p.required):
            raise ArityError(f"{self.name}: {self._expected()}, got {n}")
        for _ in p.required:
            frame[slot] = args[i]
            i, slot = i + 1, slot + 1
        key_names = {k for k, _ in p.keys}
        for opt_name, _ in p.optional:
            given = i < n and not (isinstance(arg := args[i], Keyword) and arg.name in key_names)
            frame[slot] = args[i] if given else self._default(opt_name, frame)
            i += given
            slot += 1
        remaining = args[i:]
        if p.rest is not None:
            frame[slot] = list(remaining)
            slot += 1
        if p.keys:
            self._bind_keys(frame, slot, remaining)
        elif remaining and p.rest is None:
            raise ArityError(f"{self.name}: {self._expected()}, got {n}")
        return frame

    def _bind_keys(self, frame: Frame, first_slot: int, remaining: list[Value]) -> None:
        p = self.params
        given: dict[str, Value] = {}
        for j in range(0, len(remaining), 2):
            key = remaining[j]
            if not isinstance(key, Keyword):
                if p.rest is not None:
                    continue
                raise ArityError(f"{self.name}: expected a keyword argument, got {to_repr(key)}")
            if key.name not in {k for k, _ in p.keys}:
                allowed = " ".join(":" + k for k, _ in p.keys)
                raise ArityError(
                    f"{self.name}: unknown keyword argument :{key.name} (expected one of {allowed})"
                )
            if j + 1 >= len(remaining):
                raise ArityError(f"{self.name}: keyword argument :{key.name} has no value")
            given[key.name] = remaining[j + 1]
        for offset, (key_name, _) in enumerate(p.keys):
            slot = first_slot + offset
            frame[slot] = given[key_name] if key_name in given else self._default(key_name, frame)

    def _default(self, name: str, frame: Frame) -> Value:
        code = self.defaults.get(name)
        return None if code is None else code(frame)

    def _expected(self) -> str:
        p = self.params
        low = len(p.required)
        high = None if (p.rest is not None or p.keys) else low + len(p.optional)
        return expected_count(low, high)
