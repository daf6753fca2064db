"""JSON Schemas, through jsonschema (and its referencing): a template's schema checked whole before
anything is sent, and answers checked against it.

A schema is checked once, when its task is first called or `sexp tasks validate` reads it: its
nesting is bounded, it must be a Draft 2020-12 schema, and every `$ref` in it must resolve inside
the schema itself (nothing is ever fetched) without a loop that never goes into the value. An
answer is then checked by a validator whose `pattern` keywords run through the interruptible
regex engine of the language's own regex primitives, and whose `uniqueItems` hashes the items.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from ..lang.primitives.text import pattern_search

# jsonschema recurses once per level of a schema; a schema nested deeper than this is refused
# when checked (a 20,000-deep one took a minute to check, then could not be used).
MAX_SCHEMA_DEPTH = 128
# The keywords whose subschemas apply to the same value as the schema holding them: a $ref cycle
# through these alone never ends, whatever the answer.
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas")


def schema_problem(schema: Any) -> str | None:
    """Why schema is not a JSON Schema answers can be checked against (nor sent as
    response_format): too deep, not a schema, a `$ref` that does not resolve inside it, or
    one that loops; None when it is one."""
    import jsonschema  # lazy (a start-up saving: cli/startup.py)

    if _deeper_than(schema, MAX_SCHEMA_DEPTH):
        return f"(root): it nests more than {MAX_SCHEMA_DEPTH} deep"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as err:
        return f"{'/'.join(map(str, err.absolute_path)) or '(root)'}: {err.message}"
    return _reference_problem(schema)


def violations(value: Any, schema: dict[str, Any]) -> list[str] | None:
    """Where value breaks schema (a checked one), each as `path: message`; None when it does not."""
    validator = _validator_class()(schema, registry=_registry(schema))
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    found = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]
    return found or None


def _deeper_than(schema: Any, limit: int) -> bool:
    """Whether schema nests objects and arrays more than limit deep (a walk, not a recursion)."""
    pending = [(schema, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            pending += [(child, depth + 1) for child in (node.values() if isinstance(node, dict) else node)]
    return False


def _registry(schema: Any) -> Any:
    """A registry holding schema alone (and the subschemas it names by $id): with no way to
    retrieve, a `$ref` to any other document is unresolvable, never fetched."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    resource = DRAFT202012.create_resource(schema)
    return Registry().with_resource(resource.id() or "", resource).crawl()


def _reference_problem(schema: Any) -> str | None:
    """The first `$ref` of schema that does not resolve inside it, or that leads back to where it
    is without going into the value; None when there is none."""
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    registry = _registry(schema)
    root = registry.resolver(base_uri=DRAFT202012.create_resource(schema).id() or "")
    targets: dict[int, tuple[str, str, Any]] = {}  # id(schema holding $ref) -> (where, ref, target)
    pending: list[tuple[Any, str, Any]] = [(schema, "", root)]
    while pending:
        node, where, resolver = pending.pop()
        if isinstance(node, list):
            pending += [(item, f"{where}/{i}", resolver) for i, item in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        if node is not schema and isinstance(node.get("$id"), str):
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                targets[id(node)] = (where, ref, resolver.lookup(ref).contents)
            except Unresolvable:
                elsewhere = "" if ref.startswith("#") else " (a schema's $ref may only point inside it)"
                return f"{where.lstrip('/') or '(root)'}: $ref {ref!r} cannot be resolved{elsewhere}"
        for key, child in node.items():
            if key not in ("enum", "const", "default", "examples"):  # data, not schemas
                pending.append((child, f"{where}/{key}", resolver))
    return _loop(targets)


def _loop(targets: dict[int, tuple[str, str, Any]]) -> str | None:
    """A `$ref` from which $refs and in-place keywords (allOf, not ...) lead back to it: checking
    any value against it would never end."""
    for start, (where, ref, target) in targets.items():
        seen: set[int] = set()
        pending = [target]
        while pending:
            node = pending.pop()
            if not isinstance(node, dict) or id(node) in seen:
                continue
            if id(node) == start:
                return f"{where.lstrip('/') or '(root)'}: $ref {ref!r} loops back to itself"
            seen.add(id(node))
            pending += _in_place(node)
            if id(node) in targets:
                pending.append(targets[id(node)][2])
    return None


def _in_place(node: dict[str, Any]) -> list[Any]:
    """The subschemas of node that apply to the value node itself applies to."""
    found: list[Any] = []
    for key in _IN_PLACE:
        value = node.get(key)
        if isinstance(value, list):
            found += value
        elif isinstance(value, dict):
            found += list(value.values()) if key == "dependentSchemas" else [value]
    return found


@cache
def _validator_class() -> Any:
    """Draft 2020-12, with pattern keywords run by pattern_search and a hashing uniqueItems."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    return jsonschema.validators.extend(base, keywords)


def _search(pattern: str, text: str) -> bool:
    try:
        return pattern_search(pattern, text)
    except ValueError:
        return False  # check_schema compiled it (as Python's re); the regex module refused it


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{_short(instance)} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if _search(pattern, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [key for key in instance if key not in properties and not any(_search(p, key) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        listed = ", ".join(repr(extra) for extra in sorted(extras))
        if patterns:
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """uniqueItems in linear time: each item's hashable key (jsonschema compares every pair)."""
    from jsonschema import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: dict[Any, int] = {}
    for index, item in enumerate(instance):
        earlier = seen.setdefault(_key(item), index)
        if earlier != index:
            yield ValidationError(f"has non-unique elements (items {earlier} and {index} are equal)")
            return


def _key(value: Any) -> Any:
    """A hashable key equal for JSON values JSON Schema calls equal (1 and 1.0; not 1 and true)."""
    if isinstance(value, dict):
        return ("object", frozenset((key, _key(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_key(item) for item in value))
    if isinstance(value, bool):
        return ("boolean", value)
    return ("number", value) if isinstance(value, int | float) else (type(value).__name__, value)


def _short(text: str) -> str:
    return repr(text) if len(text) <= 80 else repr(text[:77]) + "..."
