"""Syntax: source text to nodes (the reader, its grammar tables, number syntax, positions)."""
