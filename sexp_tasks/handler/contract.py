"""The contract between the Task System and a Handler.

The Task System renders a template into a TaskPrompt (substitution is the Evaluator's job and
is finished before a Handler sees the text); a Handler runs the conversation under the
budgets of its HandlerConfig and returns a TaskResult (sexp_tasks.results).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .attachments import Attachment
from .cost import CostBudget
from .model_request import ModelAnswer, ModelRequest
from .replay import Cassette, MockScript
from .tracing import NO_TRACER, Tracer

if TYPE_CHECKING:
    from .mcp_tools import McpSource
    from .python_tools import PythonTool

# A model turn's answer, and the request as sent (without a response_format that was dropped).
Sent = tuple[ModelAnswer, ModelRequest]

BASE_SYSTEM_PROMPT = "You are a careful assistant that completes one well-defined task at a time."


@dataclass(frozen=True)
class OutputSpec:
    """How the answer must look: see SPEC §3.4."""

    type: str = "text"  # text | json
    schema: str | None = None  # object | array | [] | string[] | number | boolean | string
    json_schema: dict[str, Any] | None = None
    manual_xml: bool = False
    disable_reparsing: bool = False
    # SPEC §10.2: send the JSON Schema as response_format (auto: when litellm says the model
    # takes it), and how many repair messages may follow an answer that fails the format. Left
    # out of the repr, which keys a recorded task step: a run recorded before they existed
    # resumes as it was (a FAILED step runs again anyway, with the settings of the day).
    native: str = field(default="auto", repr=False)  # auto | always | never
    retries: int = field(default=0, repr=False)
    # SPEC §11.1: response_format's "strict"; None sends it when the schema can be strict
    strict: bool | None = field(default=None, repr=False)
    # A check after the schema's (Session.call's output_type: the pydantic model's validators):
    # the answer's violations, [] when none. Its violations are repaired as the schema's are.
    # Out of the repr and comparisons: a function is no part of what keys a step.
    validate: Callable[[Any], list[str]] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class TaskPrompt:
    """A rendered task: the messages' parts, the output protocol, and what to record in notes."""

    template: str  # the template's name, for notes and the default mock reply
    instructions: str  # substituted: the user message starts with this
    system: str | None = None  # the template's own system text (the Handler adds base and output parts)
    context: str | None = None  # a context block appended to the user message, when there is context
    file_paths: tuple[str, ...] = ()  # files the Handler reads into the user message (workspace-confined)
    history: tuple[tuple[str, str], ...] = ()  # earlier (user, assistant) exchanges to replay first
    output: OutputSpec = OutputSpec()
    # the models the turns ask (litellm form, or mock/<name>), as the Task System resolved them:
    # the one place a call's models are kept. A chain (SPEC §11.4): the first is asked; after it
    # fails with a provider error (after its retries) the next, with the same conversation, which
    # then stays with the model that answered.
    models: tuple[str, ...] = ()
    # the images and PDFs of its `image` and `file` inputs, checked, in declared order: content
    # parts after the user message's text (attachments.py). Out of the repr, which keys a recorded
    # task step: the step's file stamps cover them (tasks/runner.py), and older steps keep their keys.
    attachments: tuple[Attachment, ...] = field(default=(), repr=False)

    def __repr__(self) -> str:
        """The dataclass's repr, with a chain of one written `model='m'` as before chains: it
        keys a recorded task step (runs/journal.py), so a run recorded then resumes as it was."""
        kept = [f for f in fields(self) if f.repr and f.name != "models"]
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in kept]
        one = len(self.models) <= 1
        shown.append(f"model={(self.models or ('',))[0]!r}" if one else f"models={self.models!r}")
        return f"TaskPrompt({', '.join(shown)})"


@dataclass(frozen=True)
class HandlerConfig:
    """Immutable settings of one Handler (its model is the TaskPrompt's)."""

    api_base: str | None = None
    provider: str | None = None
    max_turns: int = 10
    max_tool_calls_per_turn: int = 16  # more tool calls in one model turn is RESOURCE_EXHAUSTION
    # the generation settings sent with each call under their OpenAI names (SPEC §10.2); a
    # max_tokens among them also bounds what a call reserves against the budget
    generation: dict[str, Any] = field(default_factory=dict)
    max_context_window_fraction: float = 0.8
    warning_fraction: float = 0.8
    system_prompt: str = BASE_SYSTEM_PROMPT
    tools: tuple[str, ...] = ()
    # the procedures of the program among tools, as tools (tasks/procedure_tools.py), by name
    program_tools: Mapping[str, PythonTool] = field(default_factory=dict)
    num_retries: int = 4  # max_retries: how many times a request may be sent again (handler/retries.py)
    timeout: float = 600.0  # request_timeout: seconds one request may take
    time_limit: float | None = None  # <limits timeout>: seconds the whole task call may take
    retry_delay: float = 0.5  # seconds before the first retry; each later one waits twice as long
    workspace: Path = field(default_factory=Path.cwd)
    script_timeout: float = 60.0
    script_user: str | None = None  # the user scripts and run_command run as (config.Settings)


@dataclass
class HandlerServices:
    """Mutable services shared by every Handler of a run: mock script, cassette, user, warnings."""

    mock: MockScript = field(default_factory=MockScript)
    cassette: Cassette | None = None
    ask_user: Callable[[str], str] | None = None
    warn: Callable[[str], None] = field(default=lambda message: None)
    # Runs a spawn_subtask request (a SubtaskRequest dict) and gives its TaskResult.
    spawn_subtask: Callable[[dict[str, Any]], Any] | None = None
    # Runs a tool call (name, arguments, run) as a journaled step of the run; its answer.
    record_tool: Callable[[str, dict[str, Any], Callable[[], str]], str] | None = None
    # Makes a model turn (its request, and send: the answer and the request as sent) a journaled
    # turn of the run; what send gave, or what the run's store kept for the turn. Its third
    # argument holds the turn's fallbacks and retries: filled by send, kept with the turn, and
    # filled from the store when the turn is taken from it.
    record_turn: Callable[[ModelRequest, Callable[[], Sent], dict[str, Any]], Sent] | None = None
    # An answer for a request without sending it (reused from an earlier run or cached, its
    # source set), or None: send it. Filled by --reuse and --cache.
    ready_answer: Callable[[ModelRequest], ModelAnswer | None] | None = None
    # Gets each paid answer with its request (the response cache keeps the completed ones).
    keep_answer: Callable[[ModelRequest, ModelAnswer], None] | None = None
    # The run's cost budget: each call reserves its estimated cost before it is sent.
    budget: CostBudget = field(default_factory=CostBudget)
    # The Python functions offered as tools (Session.tool), by name: a template lists them in <tools>.
    python_tools: dict[str, PythonTool] = field(default_factory=dict)
    # The MCP servers' tools a template names as NAME/* or NAME/tool (None: sexp.toml declares none).
    mcp: McpSource | None = None
    # Called just before a model call goes over the network (not a mock's, not a replayed one).
    before_sending: Callable[[], None] = field(default=lambda: None)
    # When set, paid model calls are streamed: each request sent opens a TextStream with the
    # task's label (its template's name), gets each piece of the answer's text as it arrives and
    # is closed when the request ends, answered or not. None: nothing is streamed. A request sent
    # again (a retry) opens a stream of its own.
    open_stream: OpenStream | None = None
    # Where the spans of task calls, model turns and tool calls go (OpenTelemetry, with `otel`).
    tracer: Tracer = NO_TRACER


class TextStream(Protocol):
    """Where the text of one streamed model request goes as it arrives (a display's line, a queue)."""

    def write(self, text: str) -> None:
        """Take the next piece of the answer's text; called in the thread reading the stream."""
        ...

    def close(self) -> None:
        """The request has ended (answered, failed or interrupted): no more text comes."""
        ...


# Opens the TextStream of one streamed request, given the task's label.
OpenStream = Callable[[str], TextStream]


class TextPieces:
    """A TextStream that hands each piece to receive and has nothing to do at its end."""

    def __init__(self, receive: Callable[[str], None]) -> None:
        self.write = receive

    def close(self) -> None:
        """Nothing to release."""


# A per-call stream opener (Session.stream): while set in the context a model call runs in, that
# call is streamed and its streams are opened here instead of by HandlerServices.open_stream.
# A context variable, not a field: the services are shared by every call of a run, and only the
# calls made inside Session.stream (and the pmap branches they start, which copy the context)
# may stream, each to its own receiver.
TEXT_RECEIVER: ContextVar[OpenStream | None] = ContextVar("TEXT_RECEIVER", default=None)
