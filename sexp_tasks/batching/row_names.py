"""Which of a batch's row keys and `--set` names become globals (SPEC §11.1).

Every row's keys are in the global `row`; a key is also bound as a global of its own unless that
would hide a built-in (a special form, primitive, library procedure, template, or `row` itself)
or a name the program defines: a dataset's `format` or `length` column must not break every call
of `format` in the program and in the library. `--set` names follow the same rule for built-ins;
a `--set` name the program defines stays bound, as for `sexp run` (docs/language.md: the program's
`define` replaces it, and `(try NAME (catch e DEFAULT))` reads it first).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..config import Settings
from ..lang.forms import defined_name, global_definitions
from ..runtime import NOT_BOUND, Runtime
from ..syntax.reader import read
from ..tasks.library import TaskLibrary

ROW = "row"  # the global holding each row as read


@dataclass(frozen=True)
class RowNames:
    """The names a batch must not bind as globals: built-ins, and what its program defines (SPEC
    §11.1 words the warning the same for both: names the program means as they are)."""

    built_ins: frozenset[str]
    defined: frozenset[str]

    def is_column_bound(self, key: str) -> bool:
        """Whether row key is bound as a global (it names no built-in and nothing FILE defines)."""
        return key not in self.built_ins and key not in self.defined

    def unbound(self, keys: Iterable[str], set_names: Iterable[str]) -> frozenset[str]:
        """The row keys and --set names (a row's key wins over a --set of the same name) not to bind."""
        columns = {key for key in keys if not self.is_column_bound(key)}
        return frozenset(columns | (set(set_names) & self.built_ins))

    def warnings(self, keys: Iterable[str], set_names: Iterable[str]) -> list[str]:
        """One warning per --set name and row key not bound (as `warning_line` words it), in order."""
        lines = [f"--set '{name}' {NOT_BOUND}" for name in set_names if name in self.built_ins]
        unbound = [key for key in keys if not self.is_column_bound(key)]
        return lines + [f"column '{key}' {NOT_BOUND}; use (get row \"{key}\")" for key in unbound]


def row_names(settings: Settings, library: TaskLibrary, program: str, text: str) -> RowNames:
    """The names of a batch's language (its templates library's among them) and of its program."""
    runtime = Runtime(settings, load_templates=False, library=library)
    built_ins = {ROW, *runtime.built_in_names()}
    defined = set()
    for form in global_definitions(read(text, program), runtime.compiler.forms):
        name = defined_name(form)
        if name is not None:
            defined.add(name)
    return RowNames(frozenset(built_ins), frozenset(defined - built_ins))
