"""Everything XML, through lxml: template documents, schema validation, lenient answer parsing.

Nothing outside this module touches lxml: documents come back as plain XmlNode trees. The functions
that use lxml import it, so a program that reads no template starts without it (cli/startup.py).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .errors import Source, Span, TemplateError
from .resources import package_file

SCHEMA_PATH = package_file("schemas", "task.xsd")


@dataclass
class XmlNode:
    """An element: tag, attributes, text (all of it, children's included), children, line."""

    tag: str
    attributes: dict[str, str]
    text: str
    children: list[XmlNode] = field(default_factory=list)
    line: int = 0

    def child(self, tag: str) -> XmlNode | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[XmlNode]:
        return [c for c in self.children if c.tag == tag]


@cache
def _schema() -> Any:
    from lxml import etree

    return etree.XMLSchema(etree.parse(str(SCHEMA_PATH)))


# A byte-order mark names its encoding (UTF-32's before UTF-16's, which they start with); without
# one, UTF-16 shows as `<` and `?` each beside a NUL byte, and anything else is ASCII enough to
# read its XML declaration's encoding="..." (XML 1.0, appendix F).
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
    (b"<\x00?\x00", "utf-16-le"),
    (b"\x00<\x00?", "utf-16-be"),
)
_DECLARED = re.compile(rb"\A<\?xml\s[^>]*?\bencoding\s*=\s*[\"']([^\"']*)[\"']")


def read_template(path: Path) -> str:
    """The text of a template file, decoded as it says (a byte-order mark, else the XML
    declaration's encoding, else UTF-8); a TemplateError naming the file when it cannot be.
    OSError when it cannot be read."""
    data = path.read_bytes()
    codec = next((codec for mark, codec in _BYTE_ORDER_MARKS if data.startswith(mark)), None)
    declared = _DECLARED.match(data)
    if codec is None and declared is not None:
        codec = declared.group(1).decode("ascii", "replace")
    where = Span((Source(str(path), ""), 1, 1))
    try:
        return data.decode(codec or "utf-8").removeprefix("\ufeff")
    except LookupError:
        raise TemplateError("XML_PARSE_ERROR", f"unknown encoding {codec!r}", where) from None
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        said = f"not {(codec or 'UTF-8').upper()} text (byte {data[err.start]:#04x}); save it"
        raise TemplateError(
            "XML_PARSE_ERROR", f"{said} as UTF-8, or declare its encoding", Span((where[0], line, 1))
        ) from None


def parse_template_document(text: str, origin: str) -> tuple[list[XmlNode], Source]:
    """The <task> elements of a template file (its text: read_template decodes a file as it
    declares), validated against the XSD."""
    from lxml import etree

    text = text.removeprefix("\ufeff")  # a byte-order mark is no part of the document (SPEC §10.1)
    source = Source(origin, text)
    try:
        # the text is decoded already: the encoding its declaration names is no longer its own
        parser = etree.XMLParser(
            remove_comments=True, resolve_entities=False, no_network=True, encoding="utf-8"
        )
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as err:
        line, column = err.position if err.position else (1, 1)
        raise TemplateError(
            "XML_PARSE_ERROR", f"not well-formed XML: {err.msg}", Span((source, line, column))
        ) from None
    _refuse_entities(root, text, source)
    schema = _schema()
    try:
        valid = schema.validate(root)
    except etree.Error as err:  # a document the validator itself cannot handle: still the file's fault
        where = Span((source, root.sourceline or 1, 1))
        raise TemplateError(
            "VALIDATION_ERROR", f"schema: the document cannot be validated: {err}", where
        ) from None
    if not valid:
        entry = schema.error_log[0]
        message = entry.message.replace("{http://www.w3.org/2001/XMLSchema}", "")
        raise TemplateError("VALIDATION_ERROR", f"schema: {message}", Span((source, entry.line, 1)))
    elements = [root] if root.tag == "task" else list(root)
    return [_convert(e) for e in elements if isinstance(e.tag, str)], source


def _refuse_entities(root: Any, text: str, source: Source) -> None:
    """A VALIDATION_ERROR for a template that declares or uses an XML entity (SPEC §10.1): at the
    first use, else at the declaration. Entities are never expanded (no external files are read)."""
    from lxml import etree

    used = next(root.iter(etree.Entity), None)
    dtd = root.getroottree().docinfo.internalDTD
    declared = next(iter(dtd.iterentities()), None) if dtd is not None else None
    if used is None and declared is None:
        return
    if used is not None:
        name, line = used.name, used.sourceline or 1
    else:
        name = getattr(declared, "name", "?")
        line = text.count("\n", 0, max(text.find("<!ENTITY"), 0)) + 1
    raise TemplateError(
        "VALIDATION_ERROR",
        f"task templates may not use XML entities (&{name};); write the text itself",
        Span((source, line, 1)),
    )


def _convert(element: Any) -> XmlNode:
    return XmlNode(
        tag=element.tag,
        attributes=dict(element.attrib),
        text="".join(element.itertext()),
        children=[_convert(c) for c in element if isinstance(c.tag, str)],
        line=element.sourceline or 0,
    )


def parse_notes(text: str) -> dict[str, Any]:
    """The children of a <notes> section as a dict, read leniently (lxml's recover mode)."""
    from lxml import etree

    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True)
    root = etree.fromstring(f"<notes>{text}</notes>".encode(), parser)
    if root is None:
        return {}
    notes: dict[str, Any] = {}
    for child in root:
        if isinstance(child.tag, str):
            notes[child.tag] = "".join(child.itertext()).strip()
    if not notes and (root.text or "").strip():
        notes["text"] = root.text.strip()
    return notes


# Model answers are untrusted: an opening tag's attributes stop at the next `<`, so that many
# unclosed `<output ` cannot each scan to the end of the answer (SPEC §10.1: linear time).
_OUTPUT_OPEN = re.compile(r"<output(?:\s[^<>]*)?>", re.IGNORECASE)
_OUTPUT_CLOSE = re.compile(r"</output\s*>", re.IGNORECASE)
_NOTES = re.compile(r"<notes(?:\s[^<>]*)?>(.*?)(?:</notes\s*>|\Z)", re.IGNORECASE | re.DOTALL)


@dataclass
class Answer:
    """A model's answer split leniently: the raw <output> text (None when absent) and its notes."""

    output: str | None
    notes: dict[str, Any]
    problems: list[str]


def split_answer(text: str) -> Answer:
    """The raw text between <output> and </output> (never re-serialised) and the parsed <notes>."""
    problems: list[str] = []
    output: str | None = None
    opening = _OUTPUT_OPEN.search(text)
    closings = list(_OUTPUT_CLOSE.finditer(text, opening.end())) if opening else []
    if opening and closings:
        output = text[opening.end() : closings[-1].start()].strip("\n")
    elif opening:
        problems.append("the answer's <output> section is not closed")
    else:
        problems.append("the answer has no <output> section")
    notes: dict[str, Any] = {}
    rest = text[closings[-1].end() :] if closings else text
    match = _NOTES.search(rest)
    if match:
        try:
            notes = parse_notes(match.group(1))
        except Exception as err:  # lxml in recover mode can still give up on binary junk
            problems.append(f"the answer's <notes> section could not be read: {err}")
    return Answer(output, notes, problems)
