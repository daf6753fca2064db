"""The chat messages of a task's conversation: the first ones a TaskPrompt gives, and the
assistant message that asks for tool calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .attachments import content_parts, user_content
from .contract import TaskPrompt
from .file_reader import file_block, media_files
from .model_request import ModelAnswer
from .output import instructions


def first_messages(
    prompt: TaskPrompt, system_prompt: str, workspace: Path, bare: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """The system message (base, template, output instructions), any replayed history, and the
    user message: the instructions, then the context block and the files, when any, then the
    images and PDFs (the inputs', then those among the files) as content parts; with the problems
    reading the files gave. AttachmentError when an input's image or PDF cannot be read now."""
    parts = (system_prompt, prompt.system, instructions(prompt.output, bare=bare))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "\n\n".join(part for part in parts if part)}
    ]
    for asked, answered in prompt.history:
        messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    user = prompt.instructions
    context = f"<context>\n{prompt.context}\n</context>" if prompt.context else ""
    media, texts, problems = media_files(prompt.file_paths, prompt.models, workspace)
    files, unread = file_block(texts, workspace)
    if context or files:
        user = "\n\n".join(part for part in (user, context, files) if part)
    attached = [piece for attachment in prompt.attachments for piece in content_parts(attachment, workspace)]
    messages.append({"role": "user", "content": user_content(user, attached + media)})
    return messages, unread + problems


def assistant_message(answer: ModelAnswer) -> dict[str, Any]:
    """The assistant's turn as the conversation keeps it: its text and the tool calls it asks for."""
    calls = [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in answer.tool_calls
    ]
    return {"role": "assistant", "content": answer.text or None, "tool_calls": calls}
