"""Processes: running scripts and commands under a launcher, the workspace they may touch."""
