"""The REPL's commands (SPEC §8), in a table: `:name operand` -> a function of the session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import error_line, format_error, preview
from ..errors import SexpError
from ..lang.printer import to_repr
from ..lang.suggest import did_you_mean
from ..runs.traces import format_trace
from .replies import Failed, Printed, Quit, Reply

if TYPE_CHECKING:
    from .session import Session

Handler = Callable[["Session", str], Reply]


@dataclass(frozen=True)
class Command:
    usage: str
    help: str
    run: Handler


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help: str) -> Callable[[Handler], Handler]:
    """Register a command under name."""

    def register(run: Handler) -> Handler:
        COMMANDS[name] = Command(usage, help, run)
        return run

    return register


def run_command(session: Session, text: str) -> Reply:
    """Carry out `:name operand`; an unknown name is an error that lists what there is."""
    name, _, operand = text[1:].partition(" ")
    found = COMMANDS.get(name)
    if found is None:
        hint = did_you_mean(f":{name}", [f":{known}" for known in COMMANDS])
        return Failed(error_line(f"unknown command ':{name}'{hint} (:help lists the commands)"))
    return found.run(session, operand.strip())


@command("help", ":help", "this list")
def _help(session: Session, operand: str) -> Reply:
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = ["Type an expression to evaluate it; a form continues over lines until its lists close."]
    lines += [f"  {c.usage:<{width}}  {c.help}" for c in COMMANDS.values()]
    lines.append("Tab completes names, and a call's keyword arguments after `:`; under the input is the")
    lines.append("signature of the call being typed. Ctrl-C clears the input; Ctrl-D on an empty line exits.")
    return Printed("\n".join(lines))


@command("tasks", ":tasks", "the task templates, with their descriptions")
def _tasks(session: Session, operand: str) -> Reply:
    templates = list(session.runtime.tasks.library)
    if not templates:
        return Printed("(no task templates)")
    width = max(len(t.name) for t in templates)
    return Printed("\n".join(f"{t.name:<{width}}  {t.description}".rstrip() for t in templates))


@command("show", ":show NAME", "a task template in full, or what a name is bound to")
def _show(session: Session, operand: str) -> Reply:
    if not operand:
        return Failed(error_line(":show expects a name (:show NAME)"))
    template = session.runtime.tasks.library.get(operand)
    if template is not None:
        return Printed(template.describe())

    if operand in session.runtime.compiler.forms:
        return Printed(f"{operand}: special form")
    env = session.runtime.globals
    value = env.values[operand] if operand in env.values else None
    if operand not in env.values and operand in env.pending:
        try:
            value = env.missing(operand, None, None)  # defines a prelude name on first use
        except SexpError as err:
            return Failed(format_error(err))
    if operand not in env.values:
        hint = did_you_mean(operand, session.names())
        return Failed(error_line(f"'{operand}' is neither a task nor a bound name{hint}"))
    doc = getattr(value, "doc", None)
    return Printed(f"{operand} = {preview(to_repr(value), 200)}" + (f"\n  {doc}" if doc else ""))


@command("doc", ":doc NAME", "what NAME does: signatures, description, example (as (help NAME))")
def _doc(session: Session, operand: str) -> Reply:
    if not operand:
        return Failed(error_line(":doc expects a name (:doc NAME)"))
    try:
        return Printed(session.runtime.documentation.render(operand))
    except SexpError as err:
        return Failed(format_error(err))


@command("env", ":env", "the names this session has defined")
def _env(session: Session, operand: str) -> Reply:
    values = session.runtime.globals.values
    names = [n for n in session.user_names if n in values]
    if not names:
        return Printed("(nothing defined yet)")
    width = min(24, max(len(n) for n in names))
    return Printed("\n".join(f"{n:<{width}}  {preview(to_repr(values[n]), 70)}" for n in names))


@command("load", ":load FILE", "run a file of the workspace here, as (load FILE); its definitions stay")
def _load(session: Session, operand: str) -> Reply:
    if not operand:
        return Failed(error_line(":load expects a file (:load FILE)"))
    try:  # confined, and refused when too large, exactly as (load) is
        path, text = session.runtime.loadable(operand)
    except SexpError as err:
        return Failed(format_error(err))
    return session.evaluate(lambda: session.runtime.run_file(path, text), operand, text)


@command("trace", ":trace [RUN_ID]", "the steps of the last run (or of RUN_ID)")
def _trace(session: Session, operand: str) -> Reply:
    run_id = operand or session.last_run
    store = session.store(create=False)
    if store is None:
        return Printed("(no runs recorded yet: an input is recorded when it calls a task)")
    if run_id is None:
        newest = store.recent_runs(1)
        if not newest:
            return Printed("(no runs recorded yet: an input is recorded when it calls a task)")
        run_id = newest[0]["id"]
    run = store.run(run_id)
    if run is None:
        return Failed(error_line(f"unknown run '{run_id}'"))
    return Printed(format_trace(run, store.steps(run_id, turns=True)))


@command("model", ":model [M]", "the model for tasks that name none (like --model)")
def _model(session: Session, operand: str) -> Reply:
    if operand:
        session.set_model(operand)
    settings = session.settings
    current = settings.model_override or settings.model
    if current is None:
        return Printed("model: none set (give one with :model M)")
    return Printed(f"model: {current}")


@command("reset", ":reset", "forget every definition (a fresh session)")
def _reset(session: Session, operand: str) -> Reply:
    session.reset()
    shown = [*session.startup_messages, "(definitions cleared)"]
    return Printed("\n".join(shown))


@command("quit", ":quit", "leave (so does Ctrl-D)")
def _quit(session: Session, operand: str) -> Reply:
    return Quit()
