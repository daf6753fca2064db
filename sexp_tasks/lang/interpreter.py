"""The language core on its own: globals holding the primitives and the prelude, and a compiler.

What runs programs without the task system (and what tests the layers with); the composition
root, runtime.py, builds the same parts and installs the task system in them.
"""

from __future__ import annotations

from ..config import Settings
from ..resources import data_dir
from ..syntax.reader import read
from .compiler import Compiler
from .deepstack import allow_recursion
from .environment import TOP_FRAME, GlobalEnvironment
from .forms import SPECIAL_FORMS
from .prelude import LazyDefinitions
from .primitives import install_primitives
from .services import Services
from .values import Value


class Interpreter:
    """A session of the core language: definitions persist across `run_source` calls."""

    def __init__(self, ctx: Services | None = None, recursion_limit: int | None = None) -> None:
        """ctx: what primitives that need the runtime (print, read-file, load) are given; without
        one, a call of those fails."""
        limit = Settings().recursion_limit if recursion_limit is None else recursion_limit
        self.globals = GlobalEnvironment()
        self.globals.reserved = tuple(SPECIAL_FORMS)
        allow_recursion(limit)
        self.compiler = Compiler(self.globals, limit)
        install_primitives(self.globals, ctx)
        self.prelude = LazyDefinitions(self.compiler, self.globals)
        self.prelude.add_file(data_dir("stdlib") / "prelude.sexp")

    def run_source(self, text: str, origin: str = "<input>") -> Value:
        """Read every form in text, compile them all, then run them in order; the last value."""
        codes = [self.compiler.compile(form, None) for form in read(text, origin)]
        value: Value = None
        for code in codes:
            value = code(TOP_FRAME)
        return value
