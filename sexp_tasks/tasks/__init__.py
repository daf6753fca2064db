"""The Task System: templates, task calls, results."""
