"""The Handler: one task execution's conversation under its turn and context budgets (SPEC §4).

Each model turn is one ModelRequest, built here from the conversation so far and sent by the
ModelCaller (model_call.py: replay, reuse, cost, retries, the journaled turn). The Handler runs
the turn loop, the tools and subtasks, the repairs of an answer that fails its format, and builds
the TaskResult."""

from __future__ import annotations

from typing import Any

from ..errors import AttachmentError
from ..results import COMPLETE, FAILED, TaskError, TaskResult
from . import tokens
from .contract import HandlerConfig, HandlerServices, TaskPrompt
from .mcp_tools import offered_tools
from .messages import assistant_message, first_messages
from .model_call import CallFailed, ModelCaller
from .model_info import input_window
from .model_request import ModelAnswer, ModelRequest
from .output import notes_cut_warning, read_answer
from .retries import Deadline, failure
from .structured import repair_request, response_format
from .tools import ToolBox, tool_arguments


class _Stop(Exception):
    """Ends the conversation with a FAILED result carrying error and partial content."""

    def __init__(self, error: TaskError, partial: str = "") -> None:
        super().__init__(error.message)
        self.error = error
        self.partial = partial


class Handler:
    """Runs one TaskPrompt: builds the messages, loops over tool calls, reads the answer."""

    def __init__(self, config: HandlerConfig, services: HandlerServices) -> None:
        self.config = config
        self.services = services
        names, mcp_tools, self.tool_error = offered_tools(config.tools, services.mcp)  # NAME/*: its tools
        self.tools = ToolBox(
            names,
            config.workspace,
            config.script_timeout,
            services.ask_user,
            {**services.python_tools, **config.program_tools, **mcp_tools},
        )
        self.tools.script_user = config.script_user
        self.warnings: list[str] = [
            f"tool {name!r} is not available to this Handler" for name in self.tools.unknown()
        ]
        self.turns = 0
        self.repairs = 0  # the repair messages sent (SPEC §10.2)
        self.partial = ""  # the last answer's text, for a FAILED result
        self.subtasks: list[dict[str, Any]] = []  # the subtasks this conversation spawned
        self.context_tokens = 0
        self.context_limit = 0
        self.response_format: dict[str, Any] | None = None  # each turn's; None once refused (§10.2)

    def run(self, prompt: TaskPrompt) -> TaskResult:
        """The TaskResult of the conversation; failures are FAILED results, never exceptions.

        An answer that fails the output format is sent back with its violations, asking for a
        corrected one, up to the output's `retries` times, each a turn (SPEC §10.2)."""
        if self.tool_error is not None:  # a server's tools that cannot be offered: before any request
            notes = {"template": prompt.template, "model": prompt.models[0]}
            return TaskResult("", FAILED, notes, error=self.tool_error)
        bare = self._prepare(prompt)
        in_output = not prompt.output.disable_reparsing and not bare  # answers come inside <output>
        deadline = None if self.config.time_limit is None else Deadline.after(self.config.time_limit)
        caller = ModelCaller(
            self.config, self.services, prompt.template, in_output, self.warnings, deadline, prompt.models
        )
        try:
            messages = self.messages(prompt, bare)
        except AttachmentError as err:  # an input's image or PDF gone since the call was checked
            gone = TaskError("TASK_FAILURE", err.message, reason="input_validation_failure")
            return self._result(prompt, caller, "", FAILED, error=gone)
        turns = 0
        try:
            answer = self._converse(caller, messages, in_output)
            reading = read_answer(answer.text, prompt.output, bare=bare)
            while reading.violations and self.repairs < prompt.output.retries:
                self.repairs, turns = self.repairs + 1, self.turns
                messages.append({"role": "assistant", "content": answer.text})
                messages.append({"role": "user", "content": repair_request(reading.violations)})
                answer = self._converse(caller, messages, in_output)
                reading = read_answer(answer.text, prompt.output, bare=bare)
        except _Stop as stop:
            if self.repairs and self.turns == turns and stop.error.resource in ("turns", "context", "cost"):
                self.repairs -= 1  # refused before it was sent: max_turns, the context or the budget
            return self._result(prompt, caller, stop.partial, FAILED, error=stop.error)
        self.warnings.extend(reading.warnings)
        error, violations = None, reading.violations
        if violations:
            message = "the output does not match the declared format: " + "; ".join(violations)
            error = TaskError("TASK_FAILURE", message, reason="output_format_failure", violations=violations)
        status = COMPLETE if error is None else FAILED
        return self._result(prompt, caller, reading.content, status, reading.notes, error, reading.parsed)

    def _prepare(self, prompt: TaskPrompt) -> bool:
        """Decide whether the JSON Schema goes as response_format; whether the prompt asks for
        bare JSON (a native JSON answer is), which holds even once a refusal drops response_format."""
        self.response_format = response_format(prompt.output, prompt.models[0], prompt.template)
        return self.response_format is not None

    def request(self, prompt: TaskPrompt) -> ModelRequest:
        """The request the first turn of run(prompt) sends, built as run builds it; nothing is
        sent (`sexp tasks render`)."""
        bare = self._prepare(prompt)
        return self._request(prompt.models[0], self.messages(prompt, bare), self.tools.schemas() or None)

    def _request(
        self, model: str, messages: list[dict[str, Any]], schemas: list[dict[str, Any]] | None
    ) -> ModelRequest:
        """The request of one model turn (the one place a request is built): the conversation so
        far, the tools offered, the generation settings and the response_format."""
        return ModelRequest.build(model, messages, schemas, self.config.generation, self.response_format)

    def messages(self, prompt: TaskPrompt, bare: bool = False) -> list[dict[str, Any]]:
        """The conversation's first messages (messages.first_messages); a file that cannot be read
        is a warning."""
        messages, problems = first_messages(prompt, self.config.system_prompt, self.config.workspace, bare)
        self.warnings.extend(problems)
        return messages

    def _converse(self, caller: ModelCaller, messages: list[dict[str, Any]], in_output: bool) -> ModelAnswer:
        """Call the model until it answers without tool calls; _Stop on any failure. Each turn asks
        the model the conversation is with (a chain's first, until it fails: fallbacks.py)."""
        schemas = self.tools.schemas() or None
        while True:
            model = caller.model
            self.context_limit = int(self.config.max_context_window_fraction * input_window(model))
            self._check_budget(messages, schemas, caller.deadline, model)
            answer = self._call(caller, self._request(model, messages, schemas))
            self.turns += 1
            self.partial = answer.text or self.partial
            if answer.finish_reason == "length":  # the answer stands if only <notes> was cut (SPEC §11.1)
                cut = notes_cut_warning(answer.text) if in_output and not answer.tool_calls else None
                if cut is None:
                    error = self._exhausted("output", "the answer was cut off at the model's output limit")
                    raise _Stop(error, answer.text)
                self.warnings.append(cut)
            if not answer.tool_calls:
                if not answer.text.strip():
                    given = "an empty answer" if answer.finish_reason else "no answer"  # None: no choices
                    raise _Stop(TaskError("INVALID_OUTPUT", f"the model gave {given}"))
                return answer
            self._check_tool_calls(len(answer.tool_calls))
            messages.append(assistant_message(answer))
            for call in answer.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": self._run_tool(call)})

    def _call(self, caller: ModelCaller, request: ModelRequest) -> ModelAnswer:
        """One model turn, sent by the caller; a failed call stops the conversation."""
        try:
            answer, sent = caller.call(request, self.turns + 1, self.context_tokens)
        except CallFailed as failed:  # a stream that broke midway leaves the text it gave
            raise _Stop(failed.error, failed.partial or self.partial) from None
        if sent.response_format is None:
            self.response_format = None  # refused: the rest of the conversation goes without it
        return answer

    def _check_tool_calls(self, count: int) -> None:
        """Refuse (before running any) a turn asking for more than max_tool_calls_per_turn tool calls."""
        limit = self.config.max_tool_calls_per_turn
        if count > limit:
            message = f"the model asked for {count} tool calls in one turn, more than max_tool_calls_per_turn"
            message += f" ({limit})"
            error = self._exhausted("tool_calls", message, tool_calls=count, max_tool_calls_per_turn=limit)
            raise _Stop(error, self.partial)

    def _run_tool(self, call: dict[str, Any]) -> str:
        """The tool's answer; arguments that are not a JSON object are INVALID_OUTPUT."""
        arguments = tool_arguments(call)
        if isinstance(arguments, TaskError):
            raise _Stop(arguments, self.partial)
        if call["name"] == "spawn_subtask" and "spawn_subtask" in self.config.tools:
            return self._spawn_subtask(arguments)
        if call["name"] == "ask_user" and "ask_user" in self.config.tools:
            self.turns += 1  # interactive input counts as a turn
        record = self.services.record_tool
        with self.services.tracer.tool(call["name"], arguments) as span:
            if record is None:
                answer = self.tools.run(call["name"], arguments)
            else:
                answer = record(call["name"], arguments, lambda: self.tools.run(call["name"], arguments))
            span.returned(answer)
        return answer

    def _spawn_subtask(self, request: dict[str, Any]) -> str:
        """CONTINUATION: the Task System runs the subtask; its result is the tool's answer and the
        conversation resumes. A failed subtask fails this task (subtask_failure)."""
        spawn = self.services.spawn_subtask
        if spawn is None:
            return "error: spawn_subtask: subtasks are not available in this run"
        result = spawn(request)
        self.subtasks.append({"template": result.notes.get("template"), "status": result.status})
        if result.failed:
            raise _Stop(result.error, self.partial)
        return result.content

    def _check_budget(
        self, messages: list[dict[str, Any]], schemas: Any, deadline: Deadline | None, model: str
    ) -> None:
        """Refuse (before sending) a call past the time limit, max_turns or the context limit;
        warn past the threshold."""
        self.context_tokens = used = tokens.count_messages(messages, schemas)
        limit, max_turns = self.context_limit, self.config.max_turns
        if deadline is not None and deadline.left() <= 0:
            raise _Stop(failure(deadline.passed(), model), self.partial)
        if self.turns + 1 > max_turns:
            raise _Stop(self._exhausted("turns", f"the task needs more than {max_turns} turns"), self.partial)
        if used > limit:
            message = f"the conversation needs {used} tokens, over the limit of {limit}"
            raise _Stop(self._exhausted("context", message), self.partial)
        threshold = self.config.warning_fraction
        if used > threshold * limit:
            self._warn_once(f"context at {used} of {limit} tokens")
        if self.turns and self.turns + 1 > threshold * max_turns:
            self._warn_once(f"turn {self.turns + 1} of at most {max_turns}")

    def _warn_once(self, text: str) -> None:
        kind = text.split()[0]
        if not any(w.startswith(kind) for w in self.warnings):
            self.warnings.append(text)  # the Task System reports notes' warnings once the task ends

    def _exhausted(self, resource: str, message: str, **metrics: Any) -> TaskError:
        metrics = self._resources() | metrics
        return TaskError("RESOURCE_EXHAUSTION", message, resource=resource, metrics=metrics)

    def _resources(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "max_turns": self.config.max_turns,
            "context_tokens": self.context_tokens,
            "context_limit": self.context_limit,
        }

    def _result(
        self,
        prompt: TaskPrompt,
        caller: ModelCaller,
        content: str,
        status: str,
        notes: dict[str, Any] | None = None,
        error: TaskError | None = None,
        parsed: Any = None,
    ) -> TaskResult:
        """A TaskResult whose notes carry the model's notes and this session's metrics."""
        all_notes = dict(notes or {})
        # model: the one that answered (a chain's model the conversation stayed with, SPEC §11.4)
        all_notes.update(template=prompt.template, model=caller.model, **caller.used())
        all_notes.update(resources=self._resources(), warnings=list(self.warnings))
        extras = {  # retries and fallbacks: `sexp trace`
            "subtasks": list(self.subtasks),
            "retries": list(caller.retries),
            "fallbacks": list(caller.fallbacks),
        }
        all_notes.update((key, value) for key, value in extras.items() if value)
        if prompt.output.retries:  # the repair messages sent, when the template allows any
            all_notes["repairs"] = self.repairs
        return TaskResult(content=content, status=status, notes=all_notes, parsed_content=parsed, error=error)
