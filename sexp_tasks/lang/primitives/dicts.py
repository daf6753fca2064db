"""Dicts and fields: dict get get-field assoc keys values has-key?."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import TypeError_, ValueError_
from ...syntax.nodes import Keyword, Symbol
from ..printer import to_repr
from ..quoting import dict_key
from ..values import Value, type_name
from . import CORE_PRIMITIVES


def _as_dict(name: str, value: Value) -> dict[str, Value]:
    if isinstance(value, dict):
        return value
    raise TypeError_(f"{name}: expected a dict, got {to_repr(value)} ({type_name(value)})")


def _field_name(value: Value) -> str:
    return (
        value.name
        if isinstance(value, (Symbol, Keyword))
        else value
        if isinstance(value, str)
        else to_repr(value)
    )


@CORE_PRIMITIVES.primitive("dict", signature="(dict [key value]...)")
def make_dict(*items: Value) -> dict[str, Value]:
    """(dict k1 v1 k2 v2 ...): keyword and symbol keys become their names."""
    if len(items) % 2:
        raise ValueError_(f"dict: expected key value pairs, got an odd number of arguments ({len(items)})")
    return {dict_key(items[i]): items[i + 1] for i in range(0, len(items), 2)}


@CORE_PRIMITIVES.primitive("get", signature="(get d k [default])")
def get(container: Value, key: Value, default: Value = None) -> Value:
    """(get d k [default]) for dicts; (get xs i [default]) for lists."""
    if isinstance(container, dict):
        return container.get(dict_key(key), default)
    if isinstance(container, list) and type(key) is int:
        return container[key] if -len(container) <= key < len(container) else default
    if container is None:
        return default
    raise TypeError_(f"get: expected a dict or list, got {to_repr(container)} ({type_name(container)})")


@CORE_PRIMITIVES.primitive("get-field", signature="(get-field x field)")
def get_field(container: Value, field: Value) -> Value:
    """A dict key, an association list entry, or a result's field; nil when missing."""
    name = _field_name(field)
    if isinstance(container, dict):
        return container.get(name)
    if isinstance(container, list):
        for entry in container:
            if isinstance(entry, list) and len(entry) >= 2 and _field_name(entry[0]) == name:
                return entry[1]
        return None
    read_field: Callable[[str], Value] | None = getattr(container, "get_field", None)  # an ExtensionValue's
    if read_field is not None:
        return read_field(name)
    return None


@CORE_PRIMITIVES.primitive("assoc", signature="(assoc d k v)")
def assoc(container: Value, key: Value, value: Value) -> dict[str, Value]:
    """A new dict: container with key set to value."""
    result = dict(_as_dict("assoc", container)) if container is not None else {}
    result[dict_key(key)] = value
    return result


@CORE_PRIMITIVES.primitive("keys", signature="(keys d)")
def keys(container: Value) -> list[str]:
    """A dict's keys, in insertion order."""
    return list(_as_dict("keys", container))


@CORE_PRIMITIVES.primitive("values", signature="(values d)")
def values(container: Value) -> list[Value]:
    """A dict's values, in insertion order."""
    return list(_as_dict("values", container).values())


@CORE_PRIMITIVES.primitive("has-key?", signature="(has-key? d k)")
def has_key(container: Value, key: Value) -> bool:
    """Whether the dict holds key."""
    return dict_key(key) in _as_dict("has-key?", container)
