"""Recorded runs: the SQLite store, the journal that answers resumed steps, and traces."""
