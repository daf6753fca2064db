"""A docstring read for a tool's schema (SPEC §10.4): its first paragraph describes the tool, and
each parameter's text comes from its Args section (Google: `name (type): text`), its Parameters
section (NumPy: `name : type` over indented text) or `:param name: text` lines (Sphinx). A Python
function's (handler/tool_schema.py) and a procedure's of the program (tasks/procedure_tools.py)."""

from __future__ import annotations

import re

_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_OTHER_SECTIONS = {
    "returns", "return", "yields", "raises", "examples", "example", "notes", "note",
    "see also", "attributes", "warnings", "references",
}  # fmt: skip


def read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The docstring's first paragraph (its lines joined) and each documented parameter's text."""
    lines = doc.expandtabs().splitlines()
    first: list[str] = []
    for line in lines:
        if not line.strip() or _section(line) or line.strip().startswith(":"):
            break
        first.append(line.strip())
    return " ".join(first), _google(lines) | _numpy(lines) | _sphinx(lines)


def _section(line: str) -> str | None:
    """The section a heading line opens (`Args:`), in lower case; None for another line."""
    text = line.strip()
    if text.endswith(":") and text[:-1].lower() in _SECTIONS | _OTHER_SECTIONS:
        return text[:-1].lower()
    return None


def _google(lines: list[str]) -> dict[str, str]:
    """`Args:` then `name (type): text` entries, a longer indent continuing an entry."""
    found: dict[str, str] = {}
    inside, indent, current = False, 0, ""
    for line in lines:
        heading = _section(line)
        if heading is not None:
            inside, indent, current = heading in _SECTIONS, 0, ""
            continue
        if not inside or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        entry = re.match(r"\s*\**(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
        if entry and (indent == 0 or depth <= indent):
            indent, current = depth, entry.group(1)
            found[current] = entry.group(3).strip()
        elif current and depth > indent:
            found[current] = f"{found[current]} {line.strip()}".strip()
        else:
            inside = False  # the section ended
    return found


def _numpy(lines: list[str]) -> dict[str, str]:
    """`Parameters` over a dashed line, then `name : type` lines over indented text."""
    found: dict[str, str] = {}
    inside, current = False, ""
    for index, line in enumerate(lines):
        underline = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if line.strip() and set(line.strip()) == {"-"}:
            continue
        if underline and set(underline) == {"-"}:
            inside, current = line.strip().lower() in _SECTIONS, ""
            continue
        if not inside or not line.strip():
            continue
        if not line[0].isspace():
            current = re.split(r"\s*:", line.strip(), maxsplit=1)[0].strip().lstrip("*")
            found[current] = ""
        elif current:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return {name: text for name, text in found.items() if text}


def _sphinx(lines: list[str]) -> dict[str, str]:
    """`:param name: text` (or `:param type name: text`), continued by indented lines."""
    found: dict[str, str] = {}
    current = ""
    for line in lines:
        entry = re.match(r"\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$", line)
        if entry:
            current = entry.group(1)
            found[current] = entry.group(2).strip()
        elif current and line.strip() and line[0].isspace() and not line.strip().startswith(":"):
            found[current] = f"{found[current]} {line.strip()}"
        else:
            current = ""
    return found
