"""A task template's documentation (what `sexp doc NAME` and `(help NAME)` show of a task): its
description, its inputs with their types, its model and its output format."""

from __future__ import annotations

from collections.abc import Mapping

from ..lang.documentation import TEMPLATE, Doc
from .template import TaskTemplate

DEFAULT_MODEL = "the run's model (--model, SEXP_MODEL or sexp.toml)"


def template_doc(template: TaskTemplate) -> Doc:
    """A template's Doc: a call with every input by keyword (optional ones bracketed), and the
    description, inputs, model and output format as text."""
    keys = [
        f":{spec.name} {spec.type}" if spec.required else f"[:{spec.name} {spec.type}]"
        for spec in template.inputs
    ]
    signature = "(" + " ".join([template.name, *keys]) + ")"
    inputs = [_input_line(template, index) for index in range(len(template.inputs))] or ["  (none)"]
    out = template.output_format
    schema = (f", schema {out.schema}" if out.schema else "") + (", a JSON Schema" if out.json_schema else "")
    text = "\n\n".join(
        [
            template.description,
            "\n".join(["Inputs:", *inputs]),
            "\n".join(
                [
                    f"Model: {', '.join(template.models) or DEFAULT_MODEL}",
                    f"Output: {out.type}{schema}{out.options()}",
                    f"Defined in {template.origin}",
                ]
            ),
        ]
    )
    return Doc(template.name, TEMPLATE, (signature,), text, None)


def template_docs(templates: Mapping[str, TaskTemplate]) -> dict[str, Doc]:
    """Every template's Doc, by name."""
    return {name: template_doc(template) for name, template in templates.items()}


def _input_line(template: TaskTemplate, index: int) -> str:
    spec = template.inputs[index]
    if spec.required:
        kind = spec.type
    elif spec.default is not None:
        kind = f"{spec.type}, optional, default {spec.default!r}"
    else:
        kind = f"{spec.type}, optional"
    return f"  {spec.name} ({kind})" + (f": {spec.description}" if spec.description else "")
