"""The language core on its own: globals holding the primitives and the prelude, and a compiler
knowing the special forms.

What runs programs without the task system (and what tests the layers with); the composition
root, runtime.py, builds one and installs the task system and the memory system in it
(tasks.forms.install): each interpreter knows exactly the forms and primitives installed in it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..resources import data_dir
from ..syntax.reader import read
from .compiler import Compiler
from .deepstack import DEFAULT_RECURSION_LIMIT, allow_recursion
from .documentation import Documentation
from .environment import TOP_FRAME, GlobalEnvironment
from .forms import CORE_FORMS
from .prelude import LazyDefinitions
from .primitives import CORE_PRIMITIVES
from .services import Services
from .values import Value


class Interpreter:
    """A session of the core language: definitions persist across `run_source` calls."""

    def __init__(self, ctx: Services | None = None, recursion_limit: int | None = None) -> None:
        """ctx: what primitives that need the runtime (print, read-file, load) are given; without
        one, a call of those fails."""
        # Integers have any size in the language: read and print them in full however long. Set
        # where a session of the language starts (and where the CLI does), not on import:
        # importing a library must not change this.
        sys.set_int_max_str_digits(0)
        limit = DEFAULT_RECURSION_LIMIT if recursion_limit is None else recursion_limit
        self.globals = GlobalEnvironment()
        allow_recursion(limit)
        self.compiler = Compiler(self.globals, limit)
        # The special forms' names, for errors and suggestions: a live view, so the forms of what
        # is installed later (the task system's) are among them.
        self.globals.reserved = self.compiler.forms.keys()
        self.compiler.add_forms(CORE_FORMS)
        CORE_PRIMITIVES.install(self.globals, ctx)
        self.prelude = LazyDefinitions(self.compiler, self.globals)
        self.prelude.add_file(data_dir("stdlib") / "prelude.sexp")
        # Every documented name (help, `sexp doc`): what is installed later documents itself too.
        write: Callable[[str], object] = ctx.write_output if ctx is not None else sys.stdout.write
        self.documentation = Documentation(
            self.compiler.forms, self.globals.values, self.prelude.docs, self.prelude.holds, write
        )
        self.compiler.extend(self.documentation)

    def run_source(self, text: str, origin: str = "<input>") -> Value:
        """Read every form in text, compile them all, then run them in order; the last value."""
        codes = [self.compiler.compile(form, None) for form in read(text, origin)]
        value: Value = None
        for code in codes:
            value = code(TOP_FRAME)
        return value
