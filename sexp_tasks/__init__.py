"""sexp-tasks: a small Lisp for LLM workflows."""

import sys

__version__ = "0.1.0"

# Integers are arbitrary-size in the language: read and print them in full however long.
sys.set_int_max_str_digits(0)
