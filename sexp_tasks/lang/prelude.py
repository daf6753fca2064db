"""Library files (the prelude), defined lazily: each top-level definition is compiled the first
time a program looks its name up.

A program that uses three prelude procedures compiles three, not sixty; start-up time is most
of what a short `sexp eval` costs. Library files may hold only definitions, so running them
out of order cannot change what they mean.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

from ..errors import FormError, LibraryFile
from ..syntax.nodes import FunctionCallNode, Node
from ..syntax.reader import read
from .compiler import Compiler
from .documentation import PROCEDURE, Doc, lambda_signature, parse_doc
from .environment import TOP_FRAME, GlobalEnvironment
from .forms import defined_name
from .values import Value

_COMMENT = re.compile(r"^\s*;+ ?")


class LazyDefinitions:
    """Top-level definitions waiting to be compiled; a resolver of the global environment."""

    def __init__(self, compiler: Compiler, globals_: GlobalEnvironment) -> None:
        self._compiler = compiler
        self._globals = globals_
        self._pending: dict[str, Node] = globals_.pending
        self._resolving = threading.RLock()
        globals_.resolvers.append(self.resolve)
        globals_.name_sources.append(lambda: self._pending)
        # Each file's lines and definitions (name, form), read for their docs when asked (docs).
        self._documented: list[tuple[list[str], list[tuple[str, Node]]]] = []
        self._docs: dict[str, Doc] | None = None
        self._defined: dict[str, Value] = {}  # what resolving each name bound

    def add_file(self, path: Path) -> None:
        """Read a library file; every form must be a definition (define ...): a form whose
        description says it defines (SpecialForm.defines), in the compiler's table."""
        text = path.read_text(encoding="utf-8")
        forms = _library_forms(text, str(path))
        starts: list[tuple[int, int, str]] = []
        definitions: list[tuple[str, Node]] = []
        for form in forms:
            name = self._defined_name(form)
            span = getattr(form, "span", None)
            if name is None:
                raise FormError("a library file may only hold definitions, such as (define ...)", span)
            self._pending[name] = form
            definitions.append((name, form))
            if span is not None:
                starts.append((span.line, span.column, name))
        first = forms[0].span if forms else None
        if first is not None:
            # Errors raised in this file are shown at the program's call (SexpError.at).
            label = f"{path.parent.name}/{path.name}"
            first.source.library = LibraryFile(label, tuple(starts))
        self._documented.append((text.splitlines(), definitions))
        self._docs = None

    def docs(self) -> dict[str, Doc]:
        """Every library procedure's Doc, from the `;;` lines right after its `(define (name
        ...)` line: a signature of its own when the first lines are `(name ...)`, else its lambda
        list's; then the text and example (lang/documentation.py)."""
        if self._docs is None:
            self._docs = {}
            for lines, definitions in self._documented:
                for name, form in definitions:
                    self._docs[name] = self._doc(name, form, lines)
        return self._docs

    def _doc(self, name: str, form: Node, lines: list[str]) -> Doc:
        span = getattr(form, "span", None)
        comment: list[str] = []
        if span is not None and _list_end(lines[span.line - 1][span.column - 1 :]) is None:
            for line in lines[span.line :]:
                if not _COMMENT.match(line):
                    break
                comment.append(_COMMENT.sub("", line, count=1))
        signatures: list[str] = []
        while comment and re.match(rf"\({re.escape(name)}[\s)]", comment[0]):
            line = comment[0].strip()
            if _list_end(line) != len(line) - 1:
                break
            signatures.append(comment.pop(0).strip())
        if not signatures:
            params = None
            if isinstance(form, FunctionCallNode):
                special = self._compiler.forms.get(form.name)
                params = special.parameters(form) if special is not None and special.parameters else None
            signatures.append(lambda_signature(name, params) if params is not None else name)
        text, example = parse_doc("\n".join(comment))
        return Doc(name, PROCEDURE, tuple(signatures), text, example)

    def holds(self, name: str) -> bool:
        """Whether the global name is still the library's definition (pending, or as resolved)."""
        if name in self._pending:
            return name not in self._globals.values  # else the program defined it first
        return name in self._defined and self._globals.values.get(name) is self._defined[name]

    @property
    def names(self) -> list[str]:
        """The names not yet compiled."""
        return list(self._pending)

    def resolve(self, name: str) -> Value | None:
        """Compile and run the definition of name, if it is pending; its value."""
        # pmap's workers may look the same name up at once: one compiles while the others wait
        # and then find it defined. Re-entrant, since a definition may resolve another.
        with self._resolving:
            form = self._pending.pop(name, None)
            if form is None:
                return self._globals.values.get(name)
            self._compiler.compile(form, None)(TOP_FRAME)
            value = self._defined[name] = self._globals.values.get(name)
            return value

    def _defined_name(self, form: Node) -> str | None:
        """The name form defines, None when it is no definition."""
        if not isinstance(form, FunctionCallNode):
            return None
        special = self._compiler.forms.get(form.name)
        return defined_name(form) if special is not None and special.defines else None

    def force_all(self) -> None:
        """Define everything still pending (for tools that list every global)."""
        for name in list(self._pending):
            if name not in self._globals.values:
                self.resolve(name)


def _list_end(text: str) -> int | None:
    """Where the list text begins with closes in text (strings and comments skipped), or None."""
    depth, in_string, escaped = 0, False, False
    for index, char in enumerate(text):
        if in_string:
            in_string = not (char == '"' and not escaped)
            escaped = char == "\\" and not escaped
        elif char == '"':
            in_string = True
        elif char == ";":
            break
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return index
    return None


@lru_cache(maxsize=16)
def _library_forms(text: str, origin: str) -> tuple[Node, ...]:
    """A library file's forms, read once per process: nodes are never mutated, so every Runtime
    shares them (reading the prelude was most of what building one cost; a batch builds one a row)."""
    return tuple(read(text, origin))
