"""The Handler: one task execution's conversation under its turn and context budgets (SPEC §4)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from ..lang.values import parse_json_text
from ..results import COMPLETE, FAILED, TaskError, TaskResult, round_cost
from . import llm, structured, tokens
from .answer_hook import keep_reply, ready_reply
from .contract import HandlerConfig, HandlerServices, TaskPrompt
from .cost import call_reservation
from .file_reader import file_block
from .llm import ModelReply
from .output import instructions, notes_cut_warning, read_answer
from .provider_errors import ProviderError
from .replay import fingerprint
from .request import model_request
from .retries import Attempts, Deadline, failure
from .structured import refusal_warning, repair_request, response_format
from .tools import ToolBox


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
        self.mock = services.mock
        self.tools = ToolBox(
            config.tools,
            config.workspace,
            config.script_timeout,
            services.ask_user,
            {**services.python_tools, **config.program_tools},
        )
        self.tools.script_user = config.script_user
        self.turns = 0
        self.context_tokens = 0
        self.context_limit = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.cost_usd = 0.0
        self.latency_ms = 0.0
        self.warnings: list[str] = [
            f"tool {name!r} is not available to this Handler" for name in self.tools.unknown()
        ]
        self.partial = ""
        self.subtasks: list[dict[str, Any]] = []  # the subtasks this conversation spawned
        self._uses_output_section = True  # whether answers come inside <output> (set per run)
        self._response_format: dict[str, Any] | None = None  # sent with each call (set per run)
        self._bare = False  # whether the prompt asks for bare JSON, as response_format goes (set per run)
        self.repairs = 0  # the repair messages sent (SPEC §10.2)
        self.retries: list[dict[str, Any]] = []  # each request sent again, with its turn (SPEC §11.1)
        self._deadline: Deadline | None = None  # when the call must end (<limits timeout>; set per run)
        self._attempts = Attempts(config)  # the requests of the turn being sent (set per turn)

    def run(self, prompt: TaskPrompt) -> TaskResult:
        """The TaskResult of the conversation; failures are FAILED results, never exceptions.

        An answer that fails the output format is sent back with its violations, asking for a
        corrected one, up to the output's `retries` times, each a turn (SPEC §10.2)."""
        model = self._prepare(prompt)
        self._deadline = None if self.config.time_limit is None else Deadline.after(self.config.time_limit)
        self.context_limit = int(self.config.max_context_window_fraction * llm.input_window(model))
        messages = self.messages(prompt)
        turns = 0
        try:
            reply = self._converse(model, prompt, messages)
            reading = self._read(reply.content, prompt)
            while reading.violations and self.repairs < prompt.output.retries:
                self.repairs, turns = self.repairs + 1, self.turns
                messages.append({"role": "assistant", "content": reply.content})
                messages.append({"role": "user", "content": repair_request(reading.violations)})
                reply = self._converse(model, prompt, messages)
                reading = self._read(reply.content, prompt)
        except _Stop as stop:
            if self.repairs and self.turns == turns and stop.error.resource in ("turns", "context", "cost"):
                self.repairs -= 1  # refused before it was sent: max_turns, the context or the budget
            return self._result(prompt, model, stop.partial, FAILED, error=stop.error)
        self.warnings.extend(reading.warnings)
        error, violations = None, reading.violations
        if violations:
            message = "the output does not match the declared format: " + "; ".join(violations)
            error = TaskError("TASK_FAILURE", message, reason="output_format_failure", violations=violations)
        status = COMPLETE if error is None else FAILED
        return self._result(prompt, model, reading.content, status, reading.notes, error, reading.parsed)

    def _prepare(self, prompt: TaskPrompt) -> str:
        """The model of this run; decides whether the JSON Schema goes as response_format, and
        with it whether answers come inside <output> (a native JSON answer is bare JSON)."""
        model = prompt.model or self.config.model
        self._response_format = response_format(prompt.output, model, prompt.template)
        self._bare = self._response_format is not None  # kept when a refusal drops response_format
        self._uses_output_section = not prompt.output.disable_reparsing and self._response_format is None
        return model

    def _read(self, answer: str, prompt: TaskPrompt) -> Any:
        """The answer read by the output protocol (output.read_answer): bare JSON when native."""
        return read_answer(answer, prompt.output, bare=self._bare)

    def request(self, prompt: TaskPrompt) -> dict[str, Any]:
        """The request the first model call of run(prompt) sends (request.model_request), built
        as run builds it; nothing is sent (`sexp tasks render`)."""
        model = self._prepare(prompt)
        return self._request(model, self.messages(prompt), self.tools.schemas() or None)

    def _request(
        self, model: str, messages: list[dict[str, Any]], schemas: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The request of one model call: the conversation so far, the tools and the settings."""
        generation = dict(self.config.generation)
        if self.config.max_tokens is not None:
            generation["max_tokens"] = self.config.max_tokens
        return model_request(model, messages, schemas, generation, self._response_format)

    def messages(self, prompt: TaskPrompt) -> list[dict[str, Any]]:
        """The system message (base, template, output instructions), any replayed history, and
        the user message: the instructions, then the context block and the files, when any."""
        system = "\n\n".join(
            p
            for p in (
                self.config.system_prompt,
                prompt.system,
                instructions(prompt.output, bare=self._bare),
            )
            if p
        )
        messages = [{"role": "system", "content": system}]
        for asked, answered in prompt.history:
            messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
        user = prompt.instructions
        context = f"<context>\n{prompt.context}\n</context>" if prompt.context else ""
        files = ""
        if prompt.file_paths:
            files, problems = file_block(prompt.file_paths, self.config.workspace)
            self.warnings.extend(problems)
        if context or files:
            user = "\n\n".join(part for part in (user, context, files) if part)
        messages.append({"role": "user", "content": user})
        return messages

    def _converse(self, model: str, prompt: TaskPrompt, messages: list[dict[str, Any]]) -> ModelReply:
        """Call the model until it answers without tool calls; _Stop on any failure."""
        schemas = self.tools.schemas() or None
        while True:
            self._check_budget(messages, schemas)
            reply = self._call(prompt.template, self._request(model, messages, schemas), schemas)
            self.turns += 1
            self.partial = reply.content or self.partial
            if reply.finish_reason == "length":  # the answer stands if only <notes> was cut (SPEC §11.1)
                read = self._uses_output_section and not reply.tool_calls
                cut = notes_cut_warning(reply.content) if read else None
                if cut is None:
                    raise _Stop(
                        self._exhausted("output", "the answer was cut off at the model's output limit"),
                        reply.content,
                    )
                self.warnings.append(cut)
            if not reply.tool_calls:
                if not reply.content.strip():
                    given = "an empty answer" if reply.finish_reason else "no answer"  # None: no choices
                    raise _Stop(TaskError("INVALID_OUTPUT", f"the model gave {given}"))
                return reply
            self._check_tool_calls(len(reply.tool_calls))
            messages.append(self._assistant_message(reply))
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": self._run_tool(call)})

    def _check_tool_calls(self, count: int) -> None:
        """Refuse (before running any) a turn asking for more than max_tool_calls_per_turn tool calls."""
        limit = self.config.max_tool_calls_per_turn
        if count > limit:
            message = (
                f"the model asked for {count} tool calls in one turn, "
                f"more than max_tool_calls_per_turn ({limit})"
            )
            error = self._exhausted("tool_calls", message, tool_calls=count, max_tool_calls_per_turn=limit)
            raise _Stop(error, self.partial)

    def _run_tool(self, call: dict[str, Any]) -> str:
        """The tool's answer; arguments that are not a JSON object are INVALID_OUTPUT."""
        try:
            arguments = parse_json_text(call["arguments"] or "{}")
        except (json.JSONDecodeError, RecursionError) as err:
            why = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
            raise _Stop(
                TaskError(
                    "INVALID_OUTPUT",
                    f"the arguments of tool call {call['name']!r} are not JSON: {why}",
                    details={"arguments": call["arguments"][:500]},
                ),
                self.partial,
            )
        if not isinstance(arguments, dict):
            message = f"the arguments of tool call {call['name']!r} are not a JSON object"
            raise _Stop(TaskError("INVALID_OUTPUT", message), self.partial)
        if call["name"] == "spawn_subtask" and "spawn_subtask" in self.config.tools:
            return self._spawn_subtask(arguments)
        if call["name"] == "ask_user" and "ask_user" in self.config.tools:
            self.turns += 1  # interactive input counts as a turn
        record = self.services.record_tool
        if record is None:
            return self.tools.run(call["name"], arguments)
        return record(call["name"], arguments, lambda: self.tools.run(call["name"], arguments))

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

    @staticmethod
    def _assistant_message(reply: ModelReply) -> dict[str, Any]:
        calls = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply.tool_calls
        ]
        return {"role": "assistant", "content": reply.content or None, "tool_calls": calls}

    def _check_budget(self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]] | None) -> None:
        """Refuse (before sending) a call past max_turns or the context limit; warn past the threshold."""
        self.context_tokens = tokens.count_messages(messages, schemas)
        if self._deadline is not None and self._deadline.left() <= 0:
            raise _Stop(failure(self._deadline.passed(), self.config.model), self.partial)
        if self.turns + 1 > self.config.max_turns:
            raise _Stop(
                self._exhausted("turns", f"the task needs more than {self.config.max_turns} turns"),
                self.partial,
            )
        if self.context_tokens > self.context_limit:
            raise _Stop(
                self._exhausted(
                    "context",
                    f"the conversation needs {self.context_tokens} tokens, over "
                    f"the limit of {self.context_limit}",
                ),
                self.partial,
            )
        threshold = self.config.warning_fraction
        if self.context_tokens > threshold * self.context_limit:
            self._warn_once(f"context at {self.context_tokens} of {self.context_limit} tokens")
        if self.turns and self.turns + 1 > threshold * self.config.max_turns:
            self._warn_once(f"turn {self.turns + 1} of at most {self.config.max_turns}")

    def _warn_once(self, text: str) -> None:
        kind = text.split()[0]
        if not any(w.startswith(kind) for w in self.warnings):
            self.warnings.append(text)  # the Task System reports notes' warnings once the task ends

    def _exhausted(self, resource: str, message: str, **metrics: Any) -> TaskError:
        metrics = self._resources() | metrics
        return TaskError("RESOURCE_EXHAUSTION", message, resource=resource, metrics=metrics)

    def _call(
        self, template: str, request: dict[str, Any], schemas: list[dict[str, Any]] | None
    ) -> ModelReply:
        """One model call, journaled as a turn of the run when it is recorded (so a resumed run
        does not pay for it again, and its trace shows the request and the answer); its usage counted."""
        record = self.services.record_turn
        if record is None:
            reply = self._send(template, request, schemas)
        else:
            reply = record(request, schemas, lambda: self._send(template, request, schemas))
            if request["response_format"] is None and self._response_format is not None:
                self._no_response_format(request["model"], request)  # a stored turn that fell back
        self.usage["prompt_tokens"] += reply.prompt_tokens
        self.usage["completion_tokens"] += reply.completion_tokens
        self.cost_usd += reply.cost_usd
        self.latency_ms += reply.latency_ms
        return reply

    def _send(
        self, template: str, request: dict[str, Any], schemas: list[dict[str, Any]] | None
    ) -> ModelReply:
        """The model's reply: from the cassette when replaying, else through litellm (recorded when asked)."""
        model = request["model"]
        cassette = self.services.cassette
        key = fingerprint(model, request["messages"], schemas) if cassette else ""
        if cassette is not None and cassette.replaying:
            replayed = cassette.replay(key, model)
            self.services.budget.spend(replayed)
            return replayed
        self._drop_unsupported(model, request)
        asked, ready = ready_reply(self.services, request, key)  # SPEC §11.2 hook: reused, else cached
        if ready is not None:
            return ready
        reserved = self._reserve(model)
        reply: ModelReply | None = None
        self._attempts = Attempts(self.config, self._deadline)
        try:  # from here on, the reservation is settled whatever happens (a mock script's error too)
            mock = self.mock.next(template, self._uses_output_section) if model.startswith("mock/") else None
            if mock is None:
                self.services.before_sending()  # the api_base warning, once (SPEC §10.1)
            send = partial(self._complete, mock=mock)
            reply, refused = structured.complete(request, self.config.api_base, self.config.num_retries, send)
            if refused:  # the same turn went again, prompt-only (SPEC §10.2)
                self._no_response_format(model, request)
        except ProviderError as err:
            raise _Stop(failure(err, model, len(self._attempts.retries)), self.partial)
        finally:
            self.services.budget.settle(reserved, reply)  # the real cost replaces the estimate
            self.retries += [{"turn": self.turns + 1, **retry} for retry in self._attempts.retries]
        assert reply is not None  # else complete raised
        if cassette is not None:
            cassette.record(key, model, reply)
        keep_reply(self.services, asked, reply)  # SPEC §11.2 hook: the cache keeps a paid answer
        return reply

    def _complete(self, request: dict[str, Any], num_retries: int, mock: Any) -> ModelReply:
        """The reply to request, sent again up to num_retries times when that may help (retries.py)."""
        parts, format_ = (request["model"], request["messages"], request["tools"]), request["response_format"]
        options = {"mock": mock, "generation": request["generation"], "response_format": format_}
        attempt = partial(llm.complete, *parts, self.config.api_base, **options)  # takes the timeout
        return self._attempts.send(attempt, num_retries, format_ is not None)

    def _drop_unsupported(self, model: str, request: dict[str, Any]) -> None:
        """Settings litellm says the provider does not take are not sent, said once (SPEC §10.2)."""
        native = ["response_format"] if request["response_format"] is not None else []
        named = [key for key in request["generation"] if key != "extra"]  # extra's go as they are
        dropped = llm.unsupported_settings(model, [*named, *native])
        if "response_format" in dropped:
            self._no_response_format(model, request)
            dropped.remove("response_format")
        if dropped:  # litellm's drop_params leaves them out of the call
            warning = f"{model} does not take {', '.join(dropped)}; not sent"
            if warning not in self.warnings:
                self.warnings.append(warning)

    def _no_response_format(self, model: str, request: dict[str, Any]) -> None:
        """This call and the rest of the conversation go without response_format, with one warning;
        the request is changed in place, so that the journaled turn keeps what was really sent."""
        request["response_format"] = self._response_format = None
        warning = refusal_warning(model)
        if warning not in self.warnings:
            self.warnings.append(warning)

    def _reserve(self, model: str) -> float:
        """Reserve this call's cost against the run's budget (handler/cost.py: call_reservation);
        _Stop when the budget cannot hold it. What it reserved."""
        budget = self.services.budget
        limit = self.config.max_tokens or self.config.generation.get("max_tokens")
        estimate, bound = call_reservation(budget, model, self.context_tokens, limit)
        refusal = budget.reserve(estimate, bound)
        if refusal is not None:
            raise _Stop(refusal, self.partial)
        return max(estimate, bound)

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
        model: str,
        content: str,
        status: str,
        notes: dict[str, Any] | None = None,
        error: TaskError | None = None,
        parsed: Any = None,
    ) -> TaskResult:
        """A TaskResult whose notes carry the model's notes and this session's metrics."""
        all_notes = dict(notes or {})
        all_notes.update(
            template=prompt.template,
            model=model,
            usage=dict(self.usage),
            cost_usd=round_cost(self.cost_usd),
            latency_ms=round(self.latency_ms, 1),
            resources=self._resources(),
            warnings=list(self.warnings),
        )
        extras = {"subtasks": list(self.subtasks), "retries": list(self.retries)}  # retries: `sexp trace`
        all_notes.update((key, value) for key, value in extras.items() if value)
        if prompt.output.retries:  # the repair messages sent, when the template allows any
            all_notes["repairs"] = self.repairs
        return TaskResult(content=content, status=status, notes=all_notes, parsed_content=parsed, error=error)
