"""The Task System: the template library, Task objects, and running a task through a Handler."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..config import Settings
from ..errors import SexpError
from ..handler.contract import HandlerServices, OpenStream, Sent
from ..handler.cost import CostBudget
from ..handler.handler import Handler
from ..handler.model_request import ModelRequest
from ..handler.python_tools import PythonTool
from ..handler.tracing import NO_TRACER, Tracer
from ..lang.values import Value
from ..resources import data_dir
from ..results import FAILED, TaskResult, record_verdict
from ..run_context import run_context
from ..runs.journal import Journal, fingerprint
from ..runs.recording import CassetteSlot, Run, current_run
from .given_files import MemoryQuery, file_stamps
from .handler_services import answer_cache, make_handler_services, read_mock_script
from .history import History
from .inputs import InputError
from .journaled_steps import journaled_tool, journaled_turn
from .library import TaskLibrary
from .matching import match_templates
from .mcp_pool import McpPool
from .model_choice import models_for, stored_scores
from .prepared_call import PreparedCall, prepare_call
from .subtasks import spawn_subtask
from .task import Task, bind_named, input_failure
from .template import TaskTemplate, check_json_schema


@dataclass(frozen=True)
class Rendered:
    """The request a call would send first, and the warnings building it gave."""

    request: ModelRequest
    warnings: list[str]


class TaskSystem:
    """Templates by name (loaded from the template directories) and the runner behind every Task.

    It keeps no run's state: a task call records into, and spends from, the run it is made in
    (runs/recording.py's current_run), else `unrecorded` (calls made outside any run)."""

    def __init__(
        self,
        settings: Settings,
        warn: Callable[[str], None],
        err: TextIO | None = None,
        *,
        library: TaskLibrary | None = None,
        memory_query: MemoryQuery | None = None,
        open_stream: OpenStream | None = None,
        tracer: Tracer = NO_TRACER,
    ) -> None:
        """err: the runtime's standard error, where ask_user asks and loops draw their progress;
        library: the templates (a batch row's copy of the batch's; default: none loaded yet);
        memory_query: the Memory System, for fresh context; open_stream: where the answers of
        model calls are shown as they arrive (the terminal's live region), None: calls are not
        streamed; tracer: where the spans of task calls, turns, tools and scripts go."""
        self.settings = settings
        self.tracer = tracer
        self.err = err or sys.stderr
        self.open_stream = open_stream
        self.library = library if library is not None else TaskLibrary(warn)
        self._tasks: dict[str, Task] = {}
        self._services: tuple[Run, Any] | None = None  # the HandlerServices of the last run asked
        self._warn = warn
        # the budget and cassette of calls made outside any run (the REPL's and the API's runs too)
        self.unrecorded = Run(
            CostBudget(settings.max_cost_usd), CassetteSlot.of(settings.record, settings.replay)
        )
        self._making_services = threading.Lock()
        self.memory_query = memory_query
        self._history = History()
        self._warned: set[str] = set()  # task warnings already shown (each once a run)
        self._schemas_checked: dict[int, Any] = {}  # JSON Schemas found valid, by id (kept: ids stay unique)
        self._warning = threading.Lock()
        self._mock = read_mock_script(settings, warn)  # read now: a script with no replies is a usage error
        self.python_tools: dict[str, PythonTool] = {}  # Session.tool's functions, for every Handler
        self.globals: Mapping[str, Value] = {}  # the language's globals (install): procedures as tools
        self.answer_cache = answer_cache(self)  # with the cache setting: paid answers kept (SPEC §11.2)
        self.mcp = McpPool(self.settings.mcp)  # sexp.toml's MCP servers, started when first used

    # Templates ------------------------------------------------------------------------------
    def template_directories(self, program: Path | None = None) -> list[Path]:
        """The program's own tasks/ (SPEC §10.1), ./tasks, sexp.toml and SEXP_TEMPLATES dirs, then
        --templates (later wins); a directory named twice is read once, in its later place."""
        dirs = [program.parent / "tasks"] if program is not None else []
        dirs += [Path("tasks"), *(Path(d) for d in (*self.settings.templates, *self.settings.template_flags))]
        found = [d for d in dirs if d.is_dir()]
        real = [d.resolve() for d in found]
        last = {path: i for i, path in enumerate(real)}
        return [d for i, d in enumerate(found) if last[real[i]] == i]

    def load_templates(self, strict: bool = True, program: Path | None = None) -> list[SexpError]:
        """The package's templates (lazily), then every template directory (the program's own
        first); only imports lxml when there are files to read now."""
        self.library.add_lazy_directory(data_dir("stdlib") / "templates")
        errors: list[SexpError] = []
        for directory in self.template_directories(program):
            if any(directory.glob("*.xml")):
                errors += self.library.load_directory(directory, strict=strict)
        return errors

    def task(self, name: str) -> Task | None:
        """The Task for a template name (a resolver of the global environment)."""
        template = self.library.get(name)
        if template is None:
            return None
        task = self._tasks.get(name)
        if task is None or task.template is not template:
            task = self._tasks[name] = Task(template, self.run)
        return task

    def define(self, template: TaskTemplate) -> Task:
        """Register a template made by defatom; its Task."""
        self.library.add(template, warn_on_override=False)
        task = self.task(template.name)
        assert task is not None
        return task

    def match(self, text: str) -> list[tuple[float, TaskTemplate]]:
        """Up to 5 templates for text, best first; past successScores in the store raise scores."""
        return match_templates(text, self.library.templates.values(), past_scores=self.past_scores())

    # The run ---------------------------------------------------------------------------------
    def current_run(self) -> Run:
        """The run the code running now belongs to (`unrecorded` outside any)."""
        return current_run() or self.unrecorded

    @property
    def journal(self) -> Journal | None:
        """The journal of the run the code running now belongs to, when it is recorded."""
        return self.current_run().journal

    @property
    def budget(self) -> CostBudget:
        """The budget of the run the code running now belongs to."""
        return self.current_run().budget

    def past_scores(self) -> dict[str, float]:
        """Mean recorded successScore per template, from the run store when there is one."""
        return stored_scores(self.current_run().store, self.settings.store)

    def add_python_tool(self, tool: PythonTool) -> None:
        """Offer a Python function to models as a tool (Session.tool); it replaces one so named."""
        self.python_tools[tool.name] = tool

    def start_afresh(self, library: TaskLibrary) -> None:
        """Forget what the runs so far left in this task system, as a new one would hold nothing
        of them (a batch's Runtime reused for its thread's next row): library is the templates
        from now on (a fresh copy of the batch's: no defatom of an earlier row), and the tasks
        made of templates, this session's history, the warnings shown, the mock replies read and
        the answer cache start again."""
        self.library = library
        self._tasks = {}
        self._services = None
        self._history = History()
        self._warned = set()
        self._mock = read_mock_script(self.settings, self._warn)
        self.answer_cache = answer_cache(self)

    def use_settings(self, settings: Settings) -> None:
        """The settings of the task calls to come (the REPL's `:model`); what was built from the
        first ones (the library, the mock replies) keeps them."""
        self.settings = settings

    # Running ----------------------------------------------------------------------------------
    def models_for(self, template: TaskTemplate, call_models: tuple[str, ...]) -> tuple[str, ...]:
        """The call's model chain (SPEC §11.4): model_choice.models_for under these settings."""
        return models_for(self.settings, template, call_models)

    def _check_schema(self, template: TaskTemplate) -> None:
        """A VALIDATION_ERROR, before any request, when the template's <json_schema> is JSON but no
        JSON Schema (it would be sent as response_format, then fail the answer's check)."""
        schema = template.output_format.json_schema
        if schema is None or id(schema) in self._schemas_checked:
            return
        check_json_schema(template)
        self._schemas_checked[id(schema)] = schema

    def prepare(
        self,
        template: TaskTemplate,
        inputs: dict[str, Value],
        reserved: dict[str, Value],
        operator: str,
        site: Any = None,
    ) -> PreparedCall | TaskResult:
        """The rendered prompt and Handler settings of a call with checked inputs (a FAILED
        result for a bad reserved parameter): what run sends and `sexp tasks render` shows.

        operator names whose context defaults apply (§3.5); site, the call's source position or
        journal key (a file_paths command is a journaled step under it)."""
        self._check_schema(template)
        return prepare_call(self, self._history, template, inputs, reserved, operator, site)

    def run(
        self,
        template: TaskTemplate,
        inputs: dict[str, Value],
        reserved: dict[str, Value],
        span: Any = None,
        operator: str | None = None,
        site: str | None = None,
    ) -> TaskResult:
        """Render the template with checked inputs and run it in a new Handler (journaled).
        operator names whose context defaults apply (§3.5); site, the journal's key for a call
        with no source position (a subtask's)."""
        operator = operator or run_context().operator
        call = self.prepare(template, inputs, reserved, operator, site or span)
        if isinstance(call, TaskResult):
            return call
        prompt, config, options = call.prompt, call.config, call.options

        def perform() -> TaskResult:
            traced.note({"sexp.step": run_context().step})  # the task's own step, inside the journal's
            refused = self._over_budget(template)
            if refused is not None:
                return refused

            result = Handler(config, self.services()).run(prompt)  # each call reserves from the budget
            if config.generation:  # the settings in force (SPEC §10.2)
                result.notes["generation"] = dict(config.generation)
            if call.file_warnings:
                result.notes["warnings"] = call.file_warnings + list(result.notes.get("warnings", ()))
            if options.subtype == "evaluator":
                record_verdict(result)
            return result

        def taken(step: str) -> None:  # the whole task answered by a resumed run's journal
            traced.note({"sexp.step": step, "sexp.reused": True})

        journal = self.journal
        with self.tracer.task(template.name, prompt.models[0], run_context().step) as traced:
            if journal is None:
                result = perform()
            else:
                attached = tuple(attachment.source for attachment in prompt.attachments)  # changed: run again
                stamps = file_stamps(call.files + attached, config.workspace)
                request = fingerprint(prompt, config.tools, config.max_turns, options.subtype, stamps)
                kind = "subtask" if operator == "subtask" else "task"
                result = journal.record(kind, template.name, site or span, request, perform, taken)
            traced.finished(result)
        self._history.record(options.history, prompt, result)
        for warning in result.notes.get("warnings", ()):  # task warnings reach stderr as they occur
            self._warn_once(f"{template.name}: {warning}")
        return result

    def first_request(self, template: TaskTemplate, named: dict[str, Value]) -> Rendered | TaskResult:
        """The request a call of template with these named arguments (inputs and reserved
        parameters) would send first, built as run builds it, with the warnings building it gave;
        nothing is sent. The call's own FAILED result for bad inputs."""
        try:
            inputs, reserved = bind_named(template, named)
        except InputError as err:
            return input_failure(template, err)
        call = self.prepare(template, inputs, reserved, run_context().operator)
        if isinstance(call, TaskResult):
            return call
        handler = Handler(call.config, HandlerServices(python_tools=self.python_tools))
        request = handler.request(call.prompt)
        return Rendered(request, call.file_warnings + handler.warnings)

    def _warn_once(self, message: str) -> None:
        """A task's warning on stderr the first time the run meets it: every call's notes keep
        theirs, but a loop of plain answers warns once per template, not once a call (§10.1)."""
        with self._warning:
            if message in self._warned:
                return
            self._warned.add(message)
        self._warn(message)

    def _over_budget(self, template: TaskTemplate) -> TaskResult | None:
        """A FAILED result when the run's cost budget is spent (no budget when unset); each model
        call also reserves its estimated cost before it is sent (the Handler asks the budget)."""
        refusal = self.budget.refusal()
        if refusal is None:
            return None
        return TaskResult(content="", status=FAILED, notes={"template": template.name}, error=refusal)

    def services(self) -> Any:
        """The services every Handler of the run running now shares (its budget and cassette, the
        mock script, warnings), made once per run."""
        run = self.current_run()
        made = self._services
        if made is not None and made[0] is run:
            return made[1]
        with self._making_services:  # pmap's first calls arrive together: make them once
            if self._services is None or self._services[0] is not run:
                self._services = (run, make_handler_services(self, run, self._mock, self._warn))
            return self._services[1]

    def record_turn(
        self, request: ModelRequest, send: Callable[[], Sent], kept: dict[str, Any] | None = None
    ) -> Sent:
        """A model turn of a task: send (its answer and the request as sent), or a journaled turn
        keeping them, and what kept holds (its fallbacks and retries), when the run is recorded."""
        journal = self.journal
        if journal is None:
            return send()
        return journaled_turn(journal, request, send, kept)

    def spawn_subtask(self, arguments: dict[str, Any]) -> TaskResult:
        """Run a model's spawn_subtask request (§3.7) under the depth and cycle limits."""
        return spawn_subtask(self, arguments)

    def record_tool(self, name: str, arguments: dict[str, Any], run: Callable[[], str]) -> str:
        """A model's tool call: run, or a journaled step when the run is recorded."""
        journal = self.journal
        if journal is None:
            return run()
        return journaled_tool(journal, Path(self.settings.workspace), name, arguments, run)
