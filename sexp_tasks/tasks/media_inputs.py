"""A task call's `image` and `file` inputs (SPEC §11.4): each checked before any request — the
path inside the workspace, the file there, at most MAX_ATTACHMENT_BYTES, an image or a PDF by its
first bytes, and the model one that takes it — and shown in the instructions by its label.

A placeholder `{{photo}}` of such an input renders as `[image: photo.png]` (`[file: report.pdf]`
for a PDF); the image or PDF itself goes as a content part after the user message's text, with
the same label before it, in the order the inputs are declared (handler/messages.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import AttachmentError
from ..handler.attachments import Attachment, check_attachment, model_refusal
from .inputs import InputError
from .template import ATTACHMENT_TYPES, TaskTemplate


def attachment_inputs(
    template: TaskTemplate, inputs: dict[str, Any], workspace: Path
) -> tuple[dict[str, Any], tuple[Attachment, ...]]:
    """inputs with each image or file input replaced by its label (what placeholders show), and
    their attachments in declared order; InputError naming the input and the file that cannot be
    sent."""
    attachments = []
    for spec in template.inputs:
        if spec.type not in ATTACHMENT_TYPES or spec.name not in inputs:
            continue
        try:
            attachment = check_attachment(spec.name, str(inputs[spec.name]), spec.type, workspace)
        except AttachmentError as err:
            raise InputError(
                spec.name, f"task '{template.name}': input '{spec.name}': {err.message}"
            ) from None
        attachments.append(attachment)
    if not attachments:
        return inputs, ()
    shown = dict(inputs) | {attachment.name: attachment.label() for attachment in attachments}
    return shown, tuple(attachments)


def check_model(template: TaskTemplate, model: str, attachments: tuple[Attachment, ...]) -> list[str]:
    """Warnings for attachments sent to a model litellm does not know; InputError when litellm
    says the model does not take one (nothing is sent)."""
    warnings = []
    for attachment in attachments:
        refusal, warning = model_refusal(model, attachment)
        if refusal is not None:
            message = f"task '{template.name}': input '{attachment.name}' ({attachment.shown}): {refusal}"
            raise InputError(attachment.name, message)
        if warning is not None and warning not in warnings:
            warnings.append(warning)
    return warnings
