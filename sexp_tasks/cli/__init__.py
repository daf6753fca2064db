"""The `sexp` command: argument parsing and one module per group of subcommands."""
