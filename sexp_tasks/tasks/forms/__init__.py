"""The task system's own special forms and primitives, added to the language core's registries."""
