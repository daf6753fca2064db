"""Library files (the prelude), defined lazily: each top-level definition is compiled the first
time a program looks its name up.

A program that uses three prelude procedures compiles three, not sixty; start-up time is most
of what a short `sexp eval` costs. Library files may hold only definitions, so running them
out of order cannot change what they mean.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..errors import FormError
from ..syntax.nodes import FunctionCallNode, Node
from ..syntax.reader import read
from ..syntax.source import LibraryFile
from .compiler import Compiler
from .environment import TOP_FRAME, GlobalEnvironment
from .forms import defined_name
from .values import Value


class LazyDefinitions:
    """Top-level definitions waiting to be compiled; a resolver of the global environment."""

    def __init__(self, compiler: Compiler, globals_: GlobalEnvironment) -> None:
        self._compiler = compiler
        self._globals = globals_
        self._pending: dict[str, Node] = globals_.pending
        self._resolving = threading.RLock()
        globals_.resolvers.append(self.resolve)
        globals_.name_sources.append(lambda: self._pending)

    def add_file(self, path: Path) -> None:
        """Read a library file; every form must be a definition (define ...): a form whose
        description says it defines (SpecialForm.defines), in the compiler's table."""
        forms = read(path.read_text(encoding="utf-8"), str(path))
        starts: list[tuple[int, int, str]] = []
        for form in forms:
            name = self._defined_name(form)
            span = getattr(form, "span", None)
            if name is None:
                raise FormError("a library file may only hold definitions, such as (define ...)", span)
            self._pending[name] = form
            if span is not None:
                starts.append((span.line, span.column, name))
        first = forms[0].span if forms else None
        if first is not None:
            # Errors raised in this file are shown at the program's call (SexpError.at).
            label = f"{path.parent.name}/{path.name}"
            first.source.library = LibraryFile(label, tuple(starts))

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
            return self._globals.values.get(name)

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


