"""One recorded run (runs/recording.py): begin, resume, end and abandon in one place; the REPL's
run that begins at its first step; a batch row's run sharing the batch's budget; and the run
handed to the task system per execution, not assigned into it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sexp_tasks.config import Settings
from sexp_tasks.errors import RunError
from sexp_tasks.handler.cost import CostBudget
from sexp_tasks.repl.replies import Printed
from sexp_tasks.repl.session import Session
from sexp_tasks.results import TaskResult
from sexp_tasks.runs.recording import CassetteSlot, Run, current_run
from sexp_tasks.runs.store import Store
from sexp_tasks.runtime import Runtime

GREET = '(defatom greet (params (who str)) (instructions "Say hi to {{who}}") (model "mock/x"))\n'


class Said:
    """What a run's callbacks were told: announced ids, and (id, program) of interrupted runs."""

    def __init__(self) -> None:
        self.announced: list[str] = []
        self.interrupted: list[tuple[str, str | None]] = []


def make_run(store: Store, said: Said, budget: CostBudget | None = None, **options: object) -> Run:
    return Run(
        budget or CostBudget(),
        CassetteSlot.of(None, None),
        lambda create: store,
        str(store.path),
        announce=said.announced.append,
        interrupted=lambda run_id, program: said.interrupted.append((run_id, program)),
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store.db")


def spend(store: Store, run_id: str, cost: float) -> None:
    """A completed step of run_id that cost cost."""
    store.step_started(run_id, "main.sexp:1:1#1", 1, None, "task", "greet", "f")
    store.step_completed(run_id, "main.sexp:1:1#1", "COMPLETE", {"content": "hi"}, 1, 2, cost)


def test_begin_records_announces_and_holds_the_run_until_it_ends(store: Store) -> None:
    said = Said()
    run = make_run(store, said)
    assert not run.begun and run.journal is None
    run_id = run.begin("main.sexp", "(+ 1 2)", {"x": 1})
    assert said.announced == [run_id] and run.begun and run.journal is not None
    row = store.run(run_id)
    assert row is not None and row["status"] == "running" and row["inputs"] == '{"x": 1}'
    assert store.run_is_held(run_id)
    run.end("completed")
    assert store.run(run_id)["status"] == "completed"  # type: ignore[index]
    assert not store.run_is_held(run_id) and said.interrupted == []
    lasted = run.seconds
    assert lasted >= 0 and run.seconds == lasted  # fixed once the run ended


def test_an_interrupted_run_says_how_to_resume_it_and_resumes(store: Store) -> None:
    said = Said()
    first = make_run(store, said)
    run_id = first.begin("main.sexp", "(+ 1 2)", {"x": 1})
    spend(store, run_id, 0.25)
    first.end("interrupted")
    assert said.interrupted == [(run_id, "main.sexp")]

    again = make_run(store, said)
    recorded = again.resume(run_id, "main.sexp", "(+ 1 2)", {}, force=False)
    assert recorded == {"x": 1}  # no inputs given: the recorded ones, for the caller to bind
    assert again.run_id == run_id and again.journal is not None and again.journal.resuming
    assert again.budget.spent == 0.25  # seeded with what the run had spent
    assert store.run(run_id)["status"] == "running"  # type: ignore[index]
    assert said.announced == [run_id, run_id]
    again.end("completed")


def test_resume_refuses_an_unknown_run_an_edited_program_and_other_inputs(store: Store) -> None:
    said = Said()
    run_id = make_run(store, said).begin("main.sexp", "(+ 1 2)", {"x": 1})
    store.end_run(run_id, "failed")
    with pytest.raises(RunError, match="unknown run 'nope'"):
        make_run(store, said).resume("nope", "main.sexp", "(+ 1 2)", {}, force=False)
    with pytest.raises(RunError, match="the program has changed since run"):
        make_run(store, said).resume(run_id, "main.sexp", "(+ 1 3)", {}, force=False)
    with pytest.raises(RunError, match="was recorded with other --set inputs"):
        make_run(store, said).resume(run_id, "main.sexp", "(+ 1 2)", {"x": 2}, force=False)
    assert not store.run_is_held(run_id)  # a refused resume holds nothing
    forced = make_run(store, said)
    assert forced.resume(run_id, "main.sexp", "(+ 1 3)", {"x": 2}, force=True) == {}
    assert store.run(run_id)["inputs"] == '{"x": 2}'  # type: ignore[index]  # recorded as the run's
    forced.end("completed")


def test_abandon_marks_a_running_run_interrupted_and_lets_go_of_it(store: Store) -> None:
    said = Said()
    run = make_run(store, said)
    run_id = run.begin("main.sexp", "(+ 1 2)", {})
    run.abandon()
    assert store.run(run_id)["status"] == "interrupted"  # type: ignore[index]
    assert said.interrupted == [(run_id, "main.sexp")] and not store.run_is_held(run_id)
    make_run(store, said).abandon()  # a run never begun: nothing to do


def test_a_run_begun_at_its_first_step_opens_no_store_until_then(store: Store) -> None:
    opened: list[bool] = []

    def open_store(create: bool) -> Store:
        opened.append(create)
        return store

    run = Run(CostBudget(), CassetteSlot.of(None, None), open_store, "store.db")
    run.begin_at_first_step("<repl>", "(greet)")
    run.end("completed")  # nothing recorded: nothing to end
    assert opened == [] and not run.begun and store.recent_runs() == []

    run = Run(CostBudget(), CassetteSlot.of(None, None), open_store, "store.db")
    run.begin_at_first_step("<repl>", "(greet)")
    assert run.journal is not None
    run.journal.record("task", "greet", "<repl>:1:1", "f", lambda: TaskResult("hi"))
    assert opened == [True] and run.begun and store.run_is_held(str(run.run_id))
    run.end("completed")
    assert [(r["program"], r["status"]) for r in store.recent_runs()] == [("<repl>", "completed")]


def test_a_repl_input_that_calls_no_task_makes_no_store(workspace: Path) -> None:
    session = Session(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
    assert session.submit("(+ 1 2)") == Printed("3")
    assert not (workspace / ".sexp").exists() and session.last_run is None
    session.submit(GREET)
    reply = session.submit('(greet "bob")')
    assert isinstance(reply, Printed) and "COMPLETE" in reply.text
    assert (workspace / ".sexp" / "store.db").is_file() and session.last_run is not None
    session.close()


def test_a_batch_row_spends_from_the_batch_budget_and_a_resume_does_not_seed_it(workspace: Path) -> None:
    store = Store(workspace / "store.db")
    shared = CostBudget(None, 0.5)  # the batch's, seeded with what its rows had spent
    program = workspace / "main.sexp"
    program.write_text(GREET + '(greet "row")\n')

    def row(run_id: str, resume: str | None = None) -> None:
        runtime = Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
        run = Run(
            shared,
            CassetteSlot.of(None, None),
            lambda create: store,
            "store.db",
            run_id=run_id,
            shares_budget=True,
        )
        runtime.run_recorded(program, program.read_text(), {}, resume, run=run)
        assert runtime.err.getvalue() == ""  # type: ignore[attr-defined]  # a row announces nothing

    row("row-a")
    row("row-b")
    assert shared.made.calls == 2  # both rows' model calls, on the one budget
    store.end_run("row-a", "interrupted")
    row("row-a", resume="row-a")
    assert shared.spent == 0.5  # not seeded with row-a's own cost (0)
    assert [store.run(r)["status"] for r in ("row-a", "row-b")] == ["completed", "completed"]  # type: ignore[index]


def test_the_run_is_handed_to_the_task_system_per_execution(runtime: Runtime, workspace: Path) -> None:
    assert current_run() is None and runtime.tasks.journal is None
    store = Store(workspace / "store.db")
    run = Run(CostBudget(), CassetteSlot.of(None, None), lambda create: store, "store.db")
    run.begin("<eval>", "", {})
    with run.active():
        assert current_run() is run and runtime.tasks.journal is run.journal
        assert runtime.tasks.budget is run.budget
    assert current_run() is None and runtime.tasks.journal is None
    assert runtime.tasks.budget is runtime.tasks.unrecorded.budget
    run.end("completed")
    with pytest.raises(AttributeError):
        runtime.tasks.journal = None  # type: ignore[misc]  # the task system keeps no run
