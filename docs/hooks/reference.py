"""The generated parts of the documentation site (an mkdocs hook, named in mkdocs.yml).

A page holding the line `<!-- generated: language -->` gets, in its place, the language reference
built from `Runtime(Settings(), load_templates=False).docs()` — the same text `sexp doc NAME`,
`(help NAME)` and the REPL's `:doc NAME` print, so the site and the tool cannot disagree. A page
holding `<!-- generated: cli -->` gets the command-line reference, built by walking the argument
parser of `sexp` (`sexp_tasks.cli.main.build_parser()`), so a new command or option appears on
its own. Nothing here is written to docs/: the pages are generated at every build.

When the checkout lacks what a page is generated from, the build stops with an error saying
what is missing (never a page with a hole in it). tests/test_docs.py runs these generators
without mkdocs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the checkout: the package documented is the one here

# kind (as Doc.kind names it) -> the section's title, in the order the page shows them
KINDS = {
    "special form": "Special forms",
    "primitive": "Primitives",
    "procedure": "Library procedures",
    "template": "Task templates",
}
DOC_FIELDS = ("name", "kind", "signatures", "text", "example")
USAGE_WIDTH = 100  # columns argparse wraps usage lines at, whatever terminal builds the site


class ReferenceUnavailable(Exception):
    """What a generated page is made from is missing or malformed in this checkout."""


# Markdown text ------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINE_START = re.compile(r"^(\s*)([-+#>]|\d+[.)])", re.MULTILINE)


def escape_text(text: str) -> str:
    """Plain text (with `code` spans) as Markdown showing exactly that text: outside code spans,
    HTML's `<` `>` `&` become entities and Markdown's emphasis, link and list marks are escaped."""
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_escape_plain(text[position : span.start()]))
        parts.append(span.group(0))
        position = span.end()
    parts.append(_escape_plain(text[position:]))
    return "".join(parts)


def _escape_plain(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"([\\*_\[\]`|])", r"\\\1", text)
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


_ANCHOR_WORDS = {
    "*": "star", "+": "plus", "-": "minus", "/": "slash", "<": "lt", ">": "gt", "=": "eq",
    "!": "bang", "?": "p", ":": "colon", ".": "dot", "%": "percent", "&": "amp", "^": "caret",
    "~": "tilde", "$": "dollar",
}  # fmt: skip


def anchor(name: str) -> str:
    """A stable HTML id for a name: letters, digits, `-` and `_` kept, other marks spelled out
    (`<=` -> `lt-eq`, `string=?` -> `string-eq-p`, `*loop-config*` -> `star-loop-config-star`)."""
    pieces: list[str] = []
    word = ""
    for char in name:
        if char.isspace():
            pieces.append(word.rstrip("-"))
            word = ""
            continue
        if char.isalnum() or char == "_" or (char == "-" and word):
            word += char.lower()
            continue
        if word:
            pieces.append(word.rstrip("-"))
            word = ""
        pieces.append(_ANCHOR_WORDS.get(char, f"u{ord(char):x}"))
    if word:
        pieces.append(word.rstrip("-"))
    return "-".join(p for p in pieces if p) or "name"


# The language reference -----------------------------------------------------------------------


def runtime_docs() -> Mapping[str, Any]:
    """`Runtime(Settings(), load_templates=False).docs()` of the checkout being built."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from sexp_tasks.config import Settings
    from sexp_tasks.runtime import Runtime

    if not hasattr(Runtime, "docs"):
        raise ReferenceUnavailable(
            "the language reference is generated from sexp_tasks.runtime.Runtime.docs() "
            "(the documentation `sexp doc` prints), and this checkout's Runtime has no docs() method"
        )
    return Runtime(Settings(), load_templates=False).docs()  # type: ignore[no-any-return]


def language_reference(docs: Mapping[str, Any]) -> str:
    """The reference of every documented name as Markdown: an index, then one section per kind
    (special forms, primitives, library procedures, templates), each name with its signatures,
    its description and its example."""
    by_kind: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for key, doc in sorted(docs.items()):
        missing = [f for f in DOC_FIELDS if not hasattr(doc, f)]
        if missing:
            raise ReferenceUnavailable(f"the documentation of {key!r} has no {', '.join(missing)}")
        if doc.kind not in by_kind:
            raise ReferenceUnavailable(
                f"the documentation of {key!r} has the kind {doc.kind!r}; the reference knows "
                + ", ".join(map(repr, KINDS))
            )
        by_kind[doc.kind].append(doc)
    if not any(by_kind.values()):
        raise ReferenceUnavailable("Runtime.docs() documents no names")
    ids = _unique_anchors(name for entries in by_kind.values() for name in (d.name for d in entries))
    lines: list[str] = []
    for kind, title in KINDS.items():
        if by_kind[kind]:
            links = " · ".join(f"[`{d.name}`](#{ids[d.name]})" for d in by_kind[kind])
            lines += [f"**{title}** ({len(by_kind[kind])}): {links}", ""]
    for kind, title in KINDS.items():
        if not by_kind[kind]:
            continue
        lines += [f"## {title} {{ #{anchor(title)} }}", ""]
        for doc in by_kind[kind]:
            lines += _entry(doc, ids[doc.name])
    return "\n".join(lines).rstrip() + "\n"


def _unique_anchors(names: Iterator[str] | Any) -> dict[str, str]:
    """An id for each name, distinct from the others' and from the sections' ids."""
    taken = {anchor(title) for title in KINDS.values()}
    ids: dict[str, str] = {}
    for name in names:
        base = candidate = anchor(name)
        number = 2
        while candidate in taken:
            candidate = f"{base}-{number}"
            number += 1
        taken.add(candidate)
        ids[name] = candidate
    return ids


def _entry(doc: Any, anchor_id: str) -> list[str]:
    lines = [f"### `{doc.name}` {{ #{anchor_id} }}", ""]
    signatures = [s for s in doc.signatures if s] if doc.signatures else []
    if signatures:
        lines += ["```scheme", *signatures, "```", ""]
    if doc.text:
        lines += [text_markdown(str(doc.text)), ""]
    if doc.example:
        lines += ["```scheme", str(doc.example).rstrip("\n"), "```", ""]
    return lines


def text_markdown(text: str) -> str:
    """A doc's text as Markdown: its paragraphs (split at blank lines) as paragraphs, a
    paragraph's lines kept as lines, and indented lines (a template's inputs) as a list."""
    blocks: list[str] = []
    for paragraph in text.strip("\n").split("\n\n"):
        lines: list[str] = []
        items: list[str] = []
        for line in paragraph.split("\n"):
            if line[:1].isspace() and line.strip():
                if lines:
                    blocks.append("  \n".join(lines))  # two spaces: a line break
                    lines = []
                items.append("- " + escape_text(line.strip()))
            elif line.strip():
                if items:
                    blocks.append("\n".join(items))
                    items = []
                lines.append(escape_text(line))
        blocks += ["  \n".join(lines)] if lines else []
        blocks += ["\n".join(items)] if items else []
    return "\n\n".join(blocks)


# The command-line reference -------------------------------------------------------------------


def sexp_parser() -> argparse.ArgumentParser:
    """The argument parser of the `sexp` command of the checkout being built."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from sexp_tasks.cli.main import build_parser
    except ImportError as err:
        raise ReferenceUnavailable(
            f"the CLI reference is generated from sexp_tasks.cli.main.build_parser(): {err}"
        ) from None
    return build_parser()


def cli_reference(parser: argparse.ArgumentParser) -> str:
    """Every command and subcommand of parser as Markdown: usage, description, arguments."""
    with _usage_width(USAGE_WIDTH):
        sections = [
            _command_section(sub, path, summary)
            for sub, path, summary in _commands(parser, (parser.prog,), "")
        ]
    return "\n".join(sections).rstrip() + "\n"


@contextmanager
def _usage_width(columns: int) -> Iterator[None]:
    """argparse wraps at the terminal's width: fix it, so every build gives the same page."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns + 2)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...], summary: str
) -> Iterator[tuple[argparse.ArgumentParser, tuple[str, ...], str]]:
    """parser and each of its subcommands' parsers, depth first, with the words that call them
    and the one-line help their parent gives them."""
    yield parser, path, summary
    summaries = _summaries(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name), summaries.get(name, ""))


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The one-line help of each subcommand of parser, by name."""
    found: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                found[choice.dest] = choice.help or ""
    return found


def command_anchor(path: tuple[str, ...]) -> str:
    """The id of a command's section: `sexp-tasks-show` for `sexp tasks show`."""
    return "-".join(anchor(word) for word in path)


def _command_section(parser: argparse.ArgumentParser, path: tuple[str, ...], summary: str) -> str:
    title = " ".join(path)
    lines = [f"## `{title}` {{ #{command_anchor(path)} }}", ""]
    if summary:
        lines += [escape_text(summary[:1].upper() + summary[1:]) + ".", ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    if parser.description:
        if parser.formatter_class is argparse.RawDescriptionHelpFormatter:
            lines += ["```text", parser.description.strip("\n"), "```", ""]
        else:
            lines += [escape_text(parser.description), ""]
    commands = _summaries(parser)
    if commands:
        lines += ["| command | what it does |", "|---|---|"]
        for name, text in commands.items():
            lines.append(f"| [`{title} {name}`](#{command_anchor((*path, name))}) | {escape_text(text)} |")
        lines.append("")
    rows = _argument_rows(parser)
    if rows:
        lines += ["| argument | meaning |", "|---|---|", *rows, ""]
    return "\n".join(lines)


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    """A table row per argument that --help shows (not -h itself), with what it excludes."""
    formatter = parser._get_formatter()
    exclusive: dict[int, list[str]] = {}
    for group in parser._mutually_exclusive_groups:
        names = [a.option_strings[-1] for a in group._group_actions if a.option_strings]
        for action in group._group_actions:
            exclusive[id(action)] = [n for n in names if n not in action.option_strings]
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(
            action, (argparse._HelpAction, argparse._SubParsersAction)
        ):
            continue
        invocation = formatter._format_action_invocation(action)
        if not action.option_strings and action.nargs in ("+", "*"):
            invocation = formatter._format_args(action, action.dest)  # as the usage line writes it
        notes = [escape_text(formatter._expand_help(action))] if action.help else []
        if isinstance(action, argparse._AppendAction):
            notes.append("repeatable")
        if exclusive.get(id(action)):
            notes.append("not with " + ", ".join(f"`{n}`" for n in exclusive[id(action)]))
        text = "; ".join(notes)
        rows.append(f"| `{invocation}` | {text} |")
    return rows


# The mkdocs hook ------------------------------------------------------------------------------


def _language_page() -> str:
    return language_reference(runtime_docs())


def _cli_page() -> str:
    return cli_reference(sexp_parser())


GENERATORS: dict[str, Callable[[], str]] = {"language": _language_page, "cli": _cli_page}
_MARKER = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.MULTILINE)


def generate(markdown: str, page: str) -> str:
    """markdown with each `<!-- generated: NAME -->` line replaced by what NAME's generator gives."""

    def replace(marker: re.Match[str]) -> str:
        generator = GENERATORS.get(marker.group(1))
        if generator is None:
            raise ReferenceUnavailable(
                f"{page}: no generator named {marker.group(1)!r} (known: {', '.join(GENERATORS)})"
            )
        return generator()

    return _MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **_: Any) -> str:
    """mkdocs: fill in the generated parts of a page; a clear build error when one cannot be made."""
    from mkdocs.exceptions import PluginError  # mkdocs is there when mkdocs calls this

    source = page.file.src_uri
    try:
        return generate(markdown, source)
    except ReferenceUnavailable as err:
        raise PluginError(f"docs/{source}: cannot generate this page: {err}") from None
