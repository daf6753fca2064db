"""The language core: compiler, special forms, primitives, values and printer. It knows no task:
the task system adds its own forms and primitives to the core's registries."""
