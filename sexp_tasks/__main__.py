"""`python -m sexp_tasks` is the `sexp` command."""

from .cli.main import entry_point

entry_point()
