"""Documentation: one Doc for every documented name, read from where the name is defined.

A special form's doc is in its registration (`special_form(..., signature=, doc=)`), a
primitive's in its docstring, a library procedure's in the `;;` comment lines right after its
`(define (name ...)` line, a template's in its <description> and inputs (the task system adds
those). Each is written the same way: a summary line, a paragraph, and an example whose
expressions are each followed by a line `;; => <printed value>` (the test suite runs them):

    Fold xs from the left: (f (f init x1) x2) ...

    (reduce + 0 (list 1 2 3))
    ;; => 6

`sexp doc`, `(help NAME)`, the REPL's `:doc NAME` and the docs/ site all print render_doc's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import NameError_, Span
from ..syntax.nodes import Node
from .calls import Closure
from .printer import to_repr
from .quoting import datum
from .suggest import did_you_mean
from .values import NamedProcedure, Primitive, Value

if TYPE_CHECKING:
    from .forms import SpecialForm
    from .lambda_list import ParsedParams

FORM, PRIMITIVE, PROCEDURE, TEMPLATE = "special form", "primitive", "procedure", "template"
WIDTH = 88  # render_doc wraps paragraphs at this width
# A line of an example that gives the value of the expression before it: `;; => 6` (also `;=> 6`
# and `=> 6`, the forms a doc comment may use).
_RESULT = re.compile(r"^\s*(?:;+\s*)?=>\s?(.*)$")


@dataclass(frozen=True)
class Doc:
    """What `sexp doc NAME`, `(help NAME)` and `:doc NAME` show of one name."""

    name: str
    kind: str  # "special form" | "primitive" | "procedure" | "template"
    signatures: tuple[str, ...]  # ("(reduce f init xs)", "(reduce f xs)"); a template: "(t :input type ...)"
    text: str  # what it does: a paragraph of plain text (a template's has lines of its own)
    example: str | None  # lines of code, each expression followed by a line ";; => <printed value>"

    @property
    def summary(self) -> str:
        """The first paragraph of text, its summary line (what `sexp doc --long` shows)."""
        return " ".join(self.text.split("\n\n", 1)[0].split()).rstrip(".")


def render_doc(doc: Doc) -> str:
    """The text `sexp doc NAME`, `(help NAME)` and the REPL's `:doc NAME` print for doc."""
    lines = [f"{doc.name} ({doc.kind})"]
    lines += [f"  {signature}" for signature in doc.signatures]
    for paragraph in doc.text.split("\n\n"):
        lines.append("")
        for line in paragraph.splitlines():
            indent = line[: len(line) - len(line.lstrip())]
            lines += _wrap(line, indent + "  " if indent else "")
    if doc.example:
        lines += ["", "Example:"]
        lines += [f"  {line}".rstrip() for line in doc.example.splitlines()]
    return "\n".join(lines)


def parse_doc(text: str) -> tuple[str, str | None]:
    """(text, example) of a docstring or doc comment: the paragraphs that hold a result line
    (`;; => value`) are the example, the others the text (each paragraph's lines joined)."""
    paragraphs: list[list[str]] = [[]]
    for line in _clean(text):
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    prose: list[str] = []
    examples: list[str] = []
    for block in (b for b in paragraphs if b):
        if any(_RESULT.match(line) for line in block):
            examples.append("\n".join(_result_line(line) for line in _dedent(block)))
        else:
            prose.append(" ".join(line.strip() for line in block))
    return "\n\n".join(prose), "\n\n".join(examples) or None


def example_steps(example: str) -> list[tuple[str, str]]:
    """An example as (code, expected printed value) pairs, in order: each code is every line
    since the previous result line (so definitions without a result run before the next)."""
    steps: list[tuple[str, str]] = []
    code: list[str] = []
    for line in example.splitlines():
        match = _RESULT.match(line)
        if match is None:
            code.append(line)
        else:
            steps.append(("\n".join(code).strip(), match.group(1).strip()))
            code = []
    if any(line.strip() for line in code):
        steps.append(("\n".join(code).strip(), ""))  # code with no value to check: it must run
    return steps


def lambda_signature(name: str, params: ParsedParams) -> str:
    """A procedure's signature from its lambda list, as written: `(f x &optional (y 2) &key z)`."""

    def param(pair: tuple[str, Node | None]) -> str:
        key, default = pair
        return key if default is None else f"({key} {to_repr(datum(default))})"

    parts = list(params.required)
    if params.optional:
        parts += ["&optional", *map(param, params.optional)]
    if params.rest is not None:
        parts += ["&rest", params.rest]
    if params.keys:
        parts += ["&key", *map(param, params.keys)]
    return "(" + " ".join([name, *parts]) + ")"


def form_doc(form: SpecialForm) -> Doc:
    """A special form's Doc, from its registration."""
    text, example = parse_doc(form.doc)
    return Doc(form.name, FORM, form.signatures, text, example)


def primitive_doc(primitive: Primitive) -> Doc:
    """A primitive's Doc, from its docstring and documented signatures."""
    text, example = parse_doc(primitive.docstring or primitive.doc)
    return Doc(primitive.name, PRIMITIVE, primitive.signatures, text, example)


def closure_doc(name: str, closure: Closure) -> Doc:
    """What there is to say of a procedure a program defined: its lambda list, where it is."""
    where = f" at {closure.span}" if closure.span is not None else ""
    text = f"A procedure defined{where}, without documentation."
    return Doc(name, PROCEDURE, (lambda_signature(name, closure.lambda_list.params),), text, None)


# What an installed part of the system documents (the task system: its templates), by name.
DocSource = Callable[[], Mapping[str, Doc]]


class Documentation:
    """Every documented name of one interpreter: its special forms, the primitives bound in its
    globals, its library procedures, and what installed parts add (`sources`: templates), in the
    order names resolve (forms, globals, then templates)."""

    def __init__(
        self,
        forms: Mapping[str, SpecialForm],
        values: Mapping[str, Value],
        library: Callable[[], Mapping[str, Doc]],
        library_value: Callable[[str], bool],
        write: Callable[[str], object],
    ) -> None:
        """library: the library procedures' docs; library_value(name): whether the global name
        still holds what the library defined (or is still pending), so a program's own
        redefinition is not described by the library's doc; write: where `help` prints."""
        self.write = write
        self._forms = forms
        self._values = values
        self._library = library
        self._library_value = library_value
        self.sources: list[DocSource] = []

    def all(self) -> dict[str, Doc]:
        """Every documented name bound now (not the program's own procedures), sorted by name."""
        docs: dict[str, Doc] = {name: form_doc(form) for name, form in self._forms.items()}
        for name, value in self._values.items():
            if isinstance(value, Primitive) and name not in docs:
                docs[name] = primitive_doc(value)
        for name, doc in self._library().items():
            if name not in docs and self._library_value(name):
                docs[name] = doc
        for source in self.sources:
            for name, doc in source().items():
                docs.setdefault(name, doc)
        return dict(sorted(docs.items()))

    def get(self, name: str) -> Doc | None:
        """name's Doc, as the name resolves now: a procedure the program defined has its lambda
        list and no text; None for a name that is not documented."""
        form = self._forms.get(name)
        if form is not None:
            return form_doc(form)
        value = self._values.get(name)
        if isinstance(value, Primitive):
            return primitive_doc(value)
        if self._library_value(name):
            found = self._library().get(name)
            if found is not None:
                return found
        if isinstance(value, Closure):
            return closure_doc(name, value)
        if name in self._values and not isinstance(value, NamedProcedure):  # a task is documented below
            return None
        for source in self.sources:
            found = source().get(name)
            if found is not None:
                return found
        return None

    def find(self, name: str, who: str = "", span: Span | None = None) -> Doc:
        """name's Doc; a NameError (at span) naming close documented names when there is none."""
        found = self.get(name)
        if found is None:
            prefix = f"{who}: " if who else ""
            hint = did_you_mean(name, self.names())
            raise NameError_(f"{prefix}no documentation for '{name}'{hint}", span)
        return found

    def render(self, name: str) -> str:
        """What `sexp doc NAME` prints: render_doc of name's Doc (NameError when there is none)."""
        return render_doc(self.find(name))

    def names(self) -> Iterable[str]:
        """Every documented name and every global (for suggestions)."""
        return {*self.all(), *self._values}


def _wrap(line: str, hanging: str) -> list[str]:
    """line cut at spaces into lines of at most WIDTH characters (a longer word stands alone),
    every one but the first indented by hanging (textwrap's, without importing it: start-up)."""
    lines: list[str] = []
    current = line[: len(line) - len(line.lstrip())]  # the line's own indent stays
    for word in line.split():
        if current.strip() and len(current) + 1 + len(word) > WIDTH:
            lines.append(current)
            current = hanging + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    return [*lines, current]


def _clean(text: str) -> list[str]:
    """A docstring's lines, its first line as it is and the rest dedented (inspect.cleandoc,
    without importing inspect: start-up time)."""
    lines = text.expandtabs().splitlines()
    if not lines:
        return []
    return [lines[0].strip(), *_dedent(lines[1:])]


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:].rstrip() for line in lines]


def _result_line(line: str) -> str:
    """A result line in its one written form, `;; => value`; other lines as they are."""
    match = _RESULT.match(line)
    return line if match is None else f";; => {match.group(1).strip()}"
