"""The language core: compiler, special forms, primitives, values and printer. It knows no task:
the task system keeps its forms and primitives in registries of its own, installed in one
interpreter beside the core's."""
