"""A program's compiled forms, kept to run it again in the same interpreter: a batch's worker thread
runs row after row of one program in one Runtime (batching/row_runtime.py), and reading and
compiling the program again for each row was a tenth of the row's own work.

Code compiled once may run again after GlobalEnvironment.restore: it holds the global table
itself, not its entries (restore changes it in place), and looks each global up as it runs;
the closures, frames and task templates it makes, it makes as it runs (a defatom's template is
made when compiled but never changed after); its constants are never changed (no primitive
changes a list or dict in place); and it reaches the task system through the one object that
start_afresh clears in place.

Compiling reads the globals in three places, and other globals may give other code there:
whether `(name (param expr)...)` may be a task's call by pairs (not when name is bound to
something other than a task: Compiler._may_take_pairs), which primitive an arithmetic operator
names (callsite.inline_primitive: a fast path), and whether `(loop ((i 0)) ...)` writes its count
as bindings (an error: forms/loops.py). So the codes are kept by what compiling read: the text
and its origin, which globals are bound and which of them to a task, which library definitions
wait to be compiled, and what the operators name; and by one more object the caller names (the
settings in force: system:run_script takes them when compiled).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..syntax.reader import read
from .callsite import INLINE_BINARY, inline_primitive
from .compiler import Compiler
from .values import Code, NamedProcedure

KEPT = 4  # programs kept per interpreter: a batch's rows run one (more when their columns differ)


class CompiledPrograms:
    """The compiled forms of the last programs one compiler compiled, for running them again."""

    def __init__(self, compiler: Compiler) -> None:
        self._compiler = compiler
        # key -> (the object the caller named, the codes); the object is held so its id stays its own
        self._kept: dict[Hashable, tuple[object, list[Code]]] = {}

    def codes(self, text: str, origin: str, also: object = None) -> list[Code]:
        """text's forms, read as from origin and compiled, each to run in order: those compiled
        for the same text under the same globals and the same `also` (compared by identity) when
        kept, else compiled now. A program that does not read or compile raises its error each
        time it is asked for: none is kept."""
        key = (origin, text, id(also), self._globals_read())
        found = self._kept.get(key)
        if found is not None and found[0] is also:
            return found[1]
        codes = [self._compiler.compile(form, None) for form in read(text, origin)]
        if len(self._kept) >= KEPT:  # the oldest goes (pop: no error should two threads share it)
            self._kept.pop(next(iter(self._kept), None), None)
        self._kept[key] = (also, codes)
        return codes

    def _globals_read(self) -> Hashable:
        """What compiling may read of the globals (see the module's docstring), as a key."""
        globals_ = self._compiler.globals
        values = globals_.values
        return (
            frozenset(values),
            frozenset(name for name, value in values.items() if isinstance(value, NamedProcedure)),
            frozenset(globals_.pending),
            tuple(inline_primitive(operator, values) for operator in INLINE_BINARY),
        )
