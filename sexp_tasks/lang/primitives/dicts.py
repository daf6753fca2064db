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
    """(dict k1 v1 k2 v2 ...): keyword and symbol keys become their names.

    Dict keys are strings; a dict prints as `{"k" v ...}` and keeps the order its keys were added in.

    (dict :name "Ada" "born" 1815)
    ;; => {"name" "Ada" "born" 1815}
    """
    if len(items) % 2:
        raise ValueError_(f"dict: expected key value pairs, got an odd number of arguments ({len(items)})")
    return {dict_key(items[i]): items[i + 1] for i in range(0, len(items), 2)}


@CORE_PRIMITIVES.primitive("get", signature="(get d k [default])")
def get(container: Value, key: Value, default: Value = None) -> Value:
    """(get d k [default]) for dicts; (get xs i [default]) for lists.

    default (nil when not given) when the key or index is missing; a negative index counts from
    the end.

    (get (dict "a" 1) "a")
    ;; => 1
    (get (dict "a" 1) "b" 0)
    ;; => 0
    (get (list 10 20 30) -1)
    ;; => 30
    """
    if isinstance(container, dict):
        return container.get(dict_key(key), default)
    if isinstance(container, list) and type(key) is int:
        return container[key] if -len(container) <= key < len(container) else default
    if container is None:
        return default
    raise TypeError_(f"get: expected a dict or list, got {to_repr(container)} ({type_name(container)})")


@CORE_PRIMITIVES.primitive("get-field", signature="(get-field x field)")
def get_field(container: Value, field: Value) -> Value:
    """A dict key, an association list entry, or a result's field; nil when missing.

    For a TaskResult: `status`, `content`, `notes`, `parsedContent`, `error` (and for scripts
    `stdout`, `stderr`, `exitCode`), then the keys of its parsed content. An association list is a
    list of `(key value)` lists.

    (get-field (dict "score" 9) "score")
    ;; => 9
    (get-field '((name "Ada") (born 1815)) "born")
    ;; => 1815
    (get-field (system:run_script (command "true")) "exitCode")
    ;; => 0
    """
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
    """A new dict: container with key set to value.

    The dict given is not changed.

    (define d (dict "a" 1))
    (assoc d "b" 2)
    ;; => {"a" 1 "b" 2}
    d
    ;; => {"a" 1}
    """
    result = dict(_as_dict("assoc", container)) if container is not None else {}
    result[dict_key(key)] = value
    return result


@CORE_PRIMITIVES.primitive("keys", signature="(keys d)")
def keys(container: Value) -> list[str]:
    """A dict's keys, in insertion order.

    (keys (dict "a" 1 "b" 2))
    ;; => ("a" "b")
    """
    return list(_as_dict("keys", container))


@CORE_PRIMITIVES.primitive("values", signature="(values d)")
def values(container: Value) -> list[Value]:
    """A dict's values, in insertion order.

    (values (dict "a" 1 "b" 2))
    ;; => (1 2)
    """
    return list(_as_dict("values", container).values())


@CORE_PRIMITIVES.primitive("has-key?", signature="(has-key? d k)")
def has_key(container: Value, key: Value) -> bool:
    """Whether the dict holds key.

    (has-key? (dict "a" nil) "a")
    ;; => true
    """
    return dict_key(key) in _as_dict("has-key?", container)
