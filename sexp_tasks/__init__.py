"""sexp-tasks: a small Lisp for LLM workflows."""

__version__ = "0.1.0"
