"""What the index keeps about one file's text: a short summary, its headings and salient identifiers.

Markdown and reStructuredText give headings; Python gives its docstring and def/class names (read
with `ast`); Lisp, XML templates, config files and C-like languages give their definitions or
sections by pattern. Every other text file still gets a summary from its first meaningful lines.

Files are untrusted text, so every pattern here runs in time linear in the text (SPEC §10.1): none
scans on from each of many starting points to the far end of the text (a `^\\s*` under re.M over
blank lines, a `[^>]*` or a lazy `.*?` whose end never comes), nor tries many ways to split one run
of characters (`(.+?)\\s*#*\\s*$`); what would need that is plain string code.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

SUMMARY_CHARS = 200
MAX_HEADINGS = 40
MAX_IDENTIFIERS = 25


@dataclass(frozen=True)
class Metadata:
    """The descriptive parts of one file's index entry."""

    summary: str
    headings: tuple[str, ...]
    identifiers: tuple[str, ...]


def describe(path: str, text: str) -> Metadata:
    """The summary, headings and identifiers of a file's text (its path picks the reader)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    reader = _READERS.get(suffix, _code)
    summary, headings = reader(text)
    return Metadata(
        _shorten(summary or _first_lines(text)),
        tuple(dict.fromkeys(h for h in headings if h))[:MAX_HEADINGS],
        salient_identifiers(text, lisp=suffix in _LISP),
    )


# Readers: text -> (summary or "", headings) -----------------------------------------------------


def _python(text: str) -> tuple[str, list[str]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _code(text)
    headings: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            headings.append(f"def {node.name}")
        elif isinstance(node, ast.ClassDef):
            headings.append(f"class {node.name}")
            headings += [
                f"def {node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_")
            ]
    docstring = ast.get_docstring(tree) or ""
    return _first_paragraph(docstring) or _leading_comment(text), headings


_ATX_OPEN = re.compile(r" {0,3}(#{1,6})(\s+)")
_UNDERLINE = re.compile(r"^(=+|-+|~+|\^+|\*+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markup(text: str) -> tuple[str, list[str]]:
    """Markdown (ATX and setext headings) and reStructuredText (underlined titles)."""
    headings: list[str] = []
    lines = text.splitlines()
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        title = _atx_title(line)
        if title is not None:
            headings.append(title)
        elif i and _UNDERLINE.match(line) and lines[i - 1].strip() and len(line.strip()) >= 3:
            previous = lines[i - 1].strip()
            if not _UNDERLINE.match(previous):
                headings.append(previous)
    return _first_prose_paragraph(lines), headings


def _atx_title(line: str) -> str | None:
    """The title of an ATX heading line (`## Title ##`), else None: the text after the opening
    hashes without the closing ones and the spaces around them (at least one character)."""
    opening = _ATX_OPEN.match(line)
    if opening is None:
        return None
    rest = line[opening.end() :]
    if not rest:  # only spaces after the hashes: the title is the last of them
        return line[-1] if len(opening.group(2)) > 1 else None
    return rest.rstrip().rstrip("#").rstrip() or rest[0]


_LISP_DEFINITION = re.compile(
    r"^[ \t]*\((?:define|defun|defmacro|defatom|defvar|defn|def)\s+\(?([^\s()]+)", re.M
)


def _lisp(text: str) -> tuple[str, list[str]]:
    return _leading_comment(text), [m.group(1) for m in _LISP_DEFINITION.finditer(text)]


_TASK_NAME = re.compile(r"<task\b[^<>]*\bname\s*=\s*[\"']([^\"']+)")
_NAME_ATTRIBUTE = re.compile(r"\bname\s*=\s*[\"']([^\"']+)")
_XML_ELEMENT = re.compile(r"<([A-Za-z_][\w.:-]*)")


def _xml(text: str) -> tuple[str, list[str]]:
    """A task template's description and name; else the first comment and the names declared."""
    described = _between(text, "<description>", "</description>")
    if described is None:
        described = _between(text, "<!--", "-->")
    names = _TASK_NAME.findall(text) or _NAME_ATTRIBUTE.findall(text) or _XML_ELEMENT.findall(text)
    return (described or "").strip(), list(dict.fromkeys(names))[:MAX_HEADINGS]


def _between(text: str, opening: str, closing: str) -> str | None:
    """The text between the first opening and the first closing after it; None without both."""
    start = text.find(opening)
    end = text.find(closing, start + len(opening)) if start >= 0 else -1
    return text[start + len(opening) : end] if end >= 0 else None


_SECTION = re.compile(r"\[+([^\[\]]+)\]+")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:", re.M)
_DESCRIPTION_KEY = re.compile(r"description[ \t]*[=:]")


def _config(text: str) -> tuple[str, list[str]]:
    """The first `description = ...` value, else the leading comment; the `[section]` names."""
    described = ""
    sections: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        section = _SECTION.fullmatch(line)
        key = _DESCRIPTION_KEY.match(line)
        if section:
            sections.append(section.group(1))
        elif key and not described:
            described = _unquoted(line[key.end() :].strip())
    return described or _leading_comment(text), sections


def _unquoted(value: str) -> str:
    """value without one quote at either end."""
    value = value[1:] if value.startswith(("'", '"')) else value
    return (value[:-1] if value.endswith(("'", '"')) else value).strip()


def _yaml(text: str) -> tuple[str, list[str]]:
    return _leading_comment(text), _TOP_KEY.findall(text)


_DEFINITION = re.compile(
    r"^[ \t]*(?:(?:export|pub(?:\(\w+\))?|public|private|protected|static|async|abstract)[ \t]+)*"
    r"(function|class|def|fn|func|struct|enum|trait|interface|impl|type|module|object|record)[ \t]+"
    r"\*?([A-Za-z_$][\w$]*)",
    re.M,
)


def _code(text: str) -> tuple[str, list[str]]:
    return _leading_comment(text), [f"{kind} {name}" for kind, name in _DEFINITION.findall(text)]


_C_LIKE = "js jsx ts tsx mjs cjs go rs java kt scala swift c h cc cpp hpp cs rb php lua sh"
_LISP = frozenset({"sexp", "lisp", "scm", "ss", "el", "clj", "cljs", "rkt", "lsp"})
_READERS = {
    "py": _python,
    "pyi": _python,
    "md": _markup,
    "markdown": _markup,
    "rst": _markup,
    "txt": _markup,
    "xml": _xml,
    "xsd": _xml,
    "html": _xml,
    "toml": _config,
    "ini": _config,
    "cfg": _config,
    "conf": _config,
    "yaml": _yaml,
    "yml": _yaml,
    **{suffix: _lisp for suffix in _LISP},
    **{suffix: _code for suffix in _C_LIKE.split()},
}


# Summaries ---------------------------------------------------------------------------------------

_COMMENT = re.compile(r"^\s*(?:#+|//+|;+|--+|/\*+|\*+/?|%+|!|'|\"\"\"|''')\s?")
_BOILERPLATE = re.compile(
    r"^(?:-\*-|vim?:|coding[:=]|copyright|\(c\)|spdx-|license|all rights|licensed under"
    r"|import |from \S+ import|#include|package |using |use |require)",
    re.I,
)
_MEANINGFUL = re.compile(r"[A-Za-z]{2}")


def _leading_comment(text: str) -> str:
    """The first comment block of a file, without its comment markers and boilerplate."""
    lines: list[str] = []
    for raw in text.splitlines()[:60]:
        if not raw.strip():
            if lines:
                break
            continue
        if raw.startswith("#!"):
            continue
        if not _COMMENT.match(raw):
            break
        line = _COMMENT.sub("", raw).strip().rstrip("*/").strip()
        if line and _MEANINGFUL.search(line) and not _BOILERPLATE.match(line):
            lines.append(line)
        if len(lines) >= 3:
            break
    return " ".join(lines)


def _first_lines(text: str) -> str:
    """The first two meaningful lines of any text (comment markers stripped)."""
    lines: list[str] = []
    for raw in text.splitlines()[:200]:
        if raw.startswith("#!"):
            continue
        line = _COMMENT.sub("", raw).strip()
        if line and _MEANINGFUL.search(line) and not _BOILERPLATE.match(line):
            lines.append(line)
            if len(lines) == 2:
                break
    return " ".join(lines)


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n", 1)[0].split())


def _first_prose_paragraph(lines: list[str]) -> str:
    """The first paragraph that is not a heading, a badge, HTML, a list of links or code."""
    paragraph: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _FENCE.match(line):
            fenced = not fenced
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        skip = (
            fenced
            or not stripped
            or _atx_title(line) is not None
            or _UNDERLINE.match(stripped) is not None
            or (_UNDERLINE.match(following.strip()) is not None and len(following.strip()) >= 3)
            or stripped.startswith(("<", "[![", "![", "..", ":", "|"))
        )
        if skip:
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    return " ".join(paragraph)


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= SUMMARY_CHARS:
        return text
    cut = text[: SUMMARY_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[SUMMARY_CHARS // 2 :] else cut) + "…"


# Identifiers ----------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LISP_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-?!*]*[A-Za-z0-9_?!*]|[A-Za-z_]")
# Words every program uses: keywords, builtins and English glue say nothing about a file.
_COMMON = frozenset(
    """
    and are not the for with from this that then else elif when unless while return returns
    import export def class self cls none true false null nil undefined function const let var
    new public private protected static void int str string bool float double char long list dict
    set get len print range type object lambda yield async await try except finally raise
    catch throw pass break continue default case switch struct enum impl pub use mod crate
    define progn begin quote args kwargs value values key keys item items name text data
    has can will was were been being have into out all any only each one two but its
    annotations future typing optional union callable iterator sequence mapping isinstance
    exception baseexception valueerror typeerror keyerror indexerror oserror attributeerror
    runtimeerror notimplementederror
    """.split()
)


def salient_identifiers(text: str, lisp: bool = False) -> tuple[str, ...]:
    """The names that say most about a text: frequent, long and compound ones, common words left out."""
    pattern = _LISP_IDENTIFIER if lisp else _IDENTIFIER
    counts = Counter(pattern.findall(text[:200_000]))
    scored = []
    for name, count in counts.items():
        if len(name) < 3 or name.lower() in _COMMON or name.isupper() and len(name) < 4:
            continue
        compound = "_" in name.strip("_") or "-" in name or re.search(r"[a-z][A-Z]", name) is not None
        scored.append((count * (2 if compound else 1) * min(len(name), 12), name))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return tuple(name for _, name in scored[:MAX_IDENTIFIERS])
