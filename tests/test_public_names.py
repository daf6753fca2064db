"""dir(sexp_tasks) lists the public names and the module's dunders, not the typing helpers the
package imports for itself (review of issue 21: it listed Any, TYPE_CHECKING, annotations)."""

from __future__ import annotations

import sexp_tasks


def test_dir_lists_the_public_names_without_typing_helpers() -> None:
    names = [name for name in dir(sexp_tasks) if not name.startswith("__")]
    assert names == sorted(sexp_tasks.__all__)
    assert "__version__" in dir(sexp_tasks)
