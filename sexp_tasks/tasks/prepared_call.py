"""A task call prepared for a Handler: its inputs checked, the prompt rendered (TaskPrompt), the
Handler's settings merged (HandlerConfig), its files gathered. Apart from the runner because it is
what a call is before anything runs: the one thing `TaskSystem.run` sends and `sexp tasks render`
(`TaskSystem.first_request`) shows, built the same for both."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..generation import merge_generation
from ..handler.contract import HandlerConfig, OutputSpec, TaskPrompt
from ..handler.retries import request_limits
from ..lang.values import Value
from ..results import TaskResult
from .context import ContextError, inherited_context, resolve
from .given_files import command_listing, gather_files
from .history import History
from .inputs import InputError, substitute
from .journaled_steps import journaled_listing
from .media_inputs import attachment_inputs, check_model
from .procedure_tools import resolve_tools
from .reserved import CallOptions, read_options
from .task import input_failure
from .template import TaskTemplate

if TYPE_CHECKING:
    from .runner import TaskSystem


@dataclass(frozen=True)
class PreparedCall:
    """A task call ready for a Handler: its prompt and settings, options and files."""

    prompt: TaskPrompt
    config: HandlerConfig
    options: CallOptions
    files: tuple[str, ...]
    file_warnings: list[str]


def prepare_call(
    tasks: TaskSystem,
    history: History,
    template: TaskTemplate,
    inputs: dict[str, Value],
    reserved: dict[str, Value],
    operator: str,
    site: Any = None,
) -> PreparedCall | TaskResult:
    """TaskSystem.prepare's call (its docstring says what it is), under tasks' settings, tools and
    current run, with history's earlier exchanges replayed when the call asks for them."""
    workspace = Path(tasks.settings.workspace)
    try:
        options = read_options(template, reserved)
        inputs, attachments = attachment_inputs(template, inputs, workspace)  # images, PDFs (§11.4)
        instructions = substitute(template.instructions, inputs, template.name)
        system = substitute(template.system, inputs, template.name) if template.system else None
        try:
            policy = resolve(operator, template.context, options.context)
        except ContextError as err:
            raise InputError("context", f"context: {err}") from None
        models = tasks.models_for(template, options.models)
        # every model of a chain must take them: a fallback is asked the same conversation
        attachment_warnings = (
            [warning for model in models for warning in check_model(template, model, attachments)]
            if attachments
            else []
        )
    except InputError as err:
        return input_failure(template, err)
    list_command = command_listing(workspace, float(tasks.settings.script_timeout))
    journal = tasks.journal
    if journal is not None:
        list_command = journaled_listing(journal, list_command, site)
    files, file_warnings = gather_files(
        template.file_paths,
        options.files,
        policy,
        instructions,
        list_command,
        tasks.memory_query,
        # a missing index is worth a warning only when fresh context was asked for, not when
        # it is merely the operator's default (every subtask's)
        quiet_fresh="enabled" not in (template.context.fresh_context, options.context.fresh_context),
    )
    out = template.output_format
    prompt = TaskPrompt(
        template=template.name,
        instructions=instructions,
        system=system,
        context=inherited_context(policy, instructions) or None,
        file_paths=files,
        history=history.replay(options.history),
        output=OutputSpec(
            out.type,
            out.schema,
            out.json_schema,
            template.manual_xml,
            template.disable_reparsing,
            out.native,
            out.retries,
            out.strict,
            out.validate,
        ),
        models=models,
        attachments=attachments,
    )
    config = HandlerConfig(
        api_base=tasks.settings.api_base or None,  # SEXP_API_BASE is config's to read
        provider=template.provider,
        max_turns=int(template.limits.get("max_turns", tasks.settings.max_turns)),
        max_tool_calls_per_turn=tasks.settings.max_tool_calls_per_turn,
        max_context_window_fraction=float(
            template.limits.get("max_context_fraction", tasks.settings.max_context_window_fraction)
        ),
        tools=options.tools,
        program_tools=resolve_tools(
            template.name, options.tools, tasks.python_tools, tasks.globals, None, tasks.settings.mcp
        ),
        generation=merge_generation(tasks.settings.generation, template.generation, options.generation),
        workspace=workspace,
        script_timeout=float(tasks.settings.script_timeout),
        script_user=tasks.settings.script_user,
        **request_limits(tasks.settings, template.limits.get("timeout")),
    )
    return PreparedCall(prompt, config, options, files, attachment_warnings + file_warnings)
