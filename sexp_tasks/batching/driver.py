"""`sexp batch` and `sexp_tasks.batch(...)` (SPEC §10.5): run a program once per input line,
each line its own recorded run, on an executor, writing OUT in input order.

The driver checks the whole input first (nothing runs when a line is malformed), records the
batch in the store, hands rows to the executor lazily (never more than `concurrency` in flight),
records each row in `batch_rows` as it starts and as it ends, writes OUT as rows finish, and
ends with the summary line. `--resume` runs only the rows without an ok result, resuming the
runs they recorded, so no completed model call is paid twice; with `--retry-failed` (SPEC §11.1)
the rows whose result is an error run as fresh runs instead, so their model calls are sent again.
`--reuse BATCH_ID` starts a new batch whose row i is a new run reusing the run of BATCH_ID's row i
(SPEC §11.2's `--reuse` per row): a model request that run also made takes its answer, unpaid.

With a scorer (`--score SCORER`, batching/scoring.py) every ok row's OUT line and store record
get its `score` (or `score_error`), and the batch ends with one line per metric, aggregated over
all of its ok rows (a resumed batch's skipped rows with the scores they were stored with).

The budget (`--max-cost`) is the whole batch's: every row reserves from one shared budget (a row
refused by it ends FAILED, status "error", with the budget's message): on threads the driver's,
on Ray one the executor keeps in an actor on the driver's node (batching/shared_budget.py).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import Settings
from ..diagnostics import warning_line
from ..errors import BatchError, OutWriteError, ServiceError
from ..handler.cost import CostBudget
from ..runs import batches
from ..runs.batch_scores import batch_scores, score_errors, score_errors_line
from ..runs.journal import new_run_id, program_hash
from ..runs.store import Store
from ..syntax.reader import read
from ..tasks.progress import progress
from .batch_summary import BatchSummary
from .executors import Executor, ExecutorFactory, executor_factory, interrupt
from .input_lines import check_input, read_rows
from .out_file import OutFile
from .recorded_batch import check_resumable, recorded_batch, recorded_input, recorded_out, reused_run
from .row_names import RowNames, row_names
from .row_runner import BatchShare, plain_settings
from .rows import ProgramBundle, RowJob, RowOutcome
from .scoring import ScoreFunction, Scorer, score_in_driver, scorer_of


@dataclass(frozen=True)
class BatchOptions:
    """What a batch is asked to do (the command's and the Python entry point's options)."""

    program: Path
    data: Path | None  # the JSONL input; None when resuming: the batch's recorded input
    out: Path | None = None  # default: <program stem>.results.jsonl in the working directory
    concurrency: int | None = None  # default: the `concurrency` setting
    executor: str = "threads"
    ray_address: str | None = None
    resume: str | None = None
    force: bool = False
    retry_failed: bool = False  # with resume: run the rows whose result is an error again, afresh
    reuse: str | None = None  # a batch whose row i's run answers row i's requests it also made
    data_label: str | None = None  # what the store records as the input (`<python>` for rows given in Python)
    shared_inputs: dict[str, Any] = field(
        default_factory=dict
    )  # --set: bound in every row (a row's key wins)
    # called with each row's OUT object as it ends (a resumed batch's ok rows as they are skipped),
    # in the driver's thread: abatch's rows in completion order (api/async_api.py)
    on_row: Callable[[dict[str, Any]], None] | None = None
    # --score: the program's procedure of that name, or a Python callable (value, row) -> score;
    # None: a resumed batch's recorded procedure, if it had one (batching/scoring.py)
    score: str | ScoreFunction | None = None


def run_batch(options: BatchOptions, settings: Settings, err: TextIO | None = None) -> BatchSummary:
    """Run (or resume) a batch; its summary. A BatchError (or the program's ReadError) before
    any row runs when the batch cannot start."""
    stream = err or sys.stderr
    began = time.monotonic()
    concurrency = options.concurrency if options.concurrency is not None else settings.concurrency
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise BatchError(f"the concurrency must be a positive integer, not {concurrency!r}")
    make_executor = executor_factory(options.executor)  # before anything: Ray may be missing
    text = _program_text(options.program)
    read(text, str(options.program))  # a program that does not read is no batch (exit 2)
    warn = (
        (lambda message: None) if settings.quiet else (lambda message: _line(stream, warning_line(message)))
    )
    if options.retry_failed and options.resume is None:
        raise BatchError("--retry-failed needs --resume BATCH_ID")
    if options.reuse is not None and options.resume is not None:
        raise BatchError("--reuse starts a new batch: it does not go with --resume")
    batch_id = options.resume or uuid.uuid4().hex[:12]
    if settings.record and options.executor == "ray":
        raise BatchError("--record cannot be used with --executor ray (rows record in other processes)")
    try:  # nor one whose templates do not load, or whose cassette cannot be read
        share = BatchShare(settings, options.program, warn)
    except ServiceError as err:
        raise BatchError(err.message) from None
    store: Store | None = None
    known = options.resume or options.reuse  # a batch the store must hold
    if known is not None:  # a new batch makes its store only once its input is checked
        if not Path(settings.store).is_file():
            raise BatchError(f"unknown batch '{known}' in {settings.store}")
        store = Store(settings.store, create=False)
    try:
        names = row_names(settings, share.library, str(options.program), text)
        job = _Batch(options, settings, stream, store, text, concurrency, make_executor, names, share)
        store = job.store
        return job.run(batch_id, began)
    finally:
        if store is not None:
            store.close()
        if share.telemetry is not None:
            share.telemetry.close()  # the rows' spans and the batch's are sent (or given up on)


class _Batch:
    """One invocation of a batch, from its checks to its summary."""

    def __init__(
        self,
        options: BatchOptions,
        settings: Settings,
        err: TextIO,
        store: Store | None,
        text: str,
        concurrency: int,
        make_executor: ExecutorFactory,
        names: RowNames,
        share: BatchShare,
    ) -> None:
        """store: the open store of a resumed batch; a new batch opens (or makes) it once its input
        is checked. names: what the rows must not bind as globals."""
        self.options, self.settings, self.err = options, settings, err
        self.concurrency = concurrency
        self.make_executor = make_executor
        self.share = share  # the templates and cassette of its rows in this process
        self.trace_parent: dict[str, str] = {}  # the batch's span, for its rows (set when it opens)
        forms = read(text, str(options.program))
        last = (forms[-1].span.line, forms[-1].span.column) if forms and forms[-1].span else None
        self.bundle = ProgramBundle(str(options.program), text, {}, last)
        self.program_digest = program_hash(text)
        self.recorded = recorded_batch(store, options.resume, options.reuse, settings.store)
        self.data = recorded_input(options.data, self.recorded)
        self.total, self.digest, keys = check_input(self.data)
        self.unbound = names.unbound(keys, options.shared_inputs)
        recorded_score = (self.recorded or {}).get("options", {}).get("score")
        self.scorer: Scorer | None = scorer_of(
            options.score if options.score is not None else recorded_score, names
        )  # an unknown procedure is refused now, before any row runs
        self.reading: dict[int, dict[str, Any]] = {}  # rows in flight, for a Python scorer
        self.notices = names.warnings(keys, options.shared_inputs)  # said before any row runs
        check_resumable(self.recorded, options.force, self.program_digest, self.digest)
        self.out = options.out or recorded_out(self.recorded) or Path(f"{options.program.stem}.results.jsonl")
        self.budget = None if settings.max_cost_usd is None else CostBudget(settings.max_cost_usd)
        self.store = store or Store(settings.store, create=True)

    def run(self, batch_id: str, began: float) -> BatchSummary:
        executor, out, held = self._start(batch_id)
        try:
            self._say(f"batch: {batch_id}")
            for notice in self.notices:
                self._say(warning_line(notice))
            with self.share.tracer.batch(batch_id, self.total) as traced:
                self.trace_parent = self.share.tracer.carrier()  # each row's run is the batch span's child
                status = self._run_rows(batch_id, executor, out)
                traced.note({"sexp.status": status})
        finally:
            held.close()
        summary = batches.batch_summary(self.store, batch_id) or {}
        result = BatchSummary(
            batch_id,
            summary.get("ok", 0),
            self.total,
            summary.get("tokens", 0),
            summary.get("cost_usd", 0.0),
            time.monotonic() - began,
            self.out,
            batches.batch_refused_calls(self.store, batch_id) if self.budget is not None else 0,
            tuple(batch_scores(self.store, batch_id)) if self.scorer is not None else (),
            batches.batch_reused_turns(self.store, batch_id) if self.options.reuse is not None else None,
        )
        self._say(result.line())
        for metric in result.scores:
            self._say(metric.line())
        failed = score_errors(self.store, batch_id) if self.scorer is not None else {"rows": 0}
        if failed["rows"]:
            self._say(score_errors_line(failed))
        if status == "interrupted":
            raise KeyboardInterrupt
        return result

    def _start(self, batch_id: str) -> tuple[Executor, OutFile, Any]:
        """The executor, OUT (locked, emptied) and the batch's lock; nothing is held when a part
        cannot be had (an OUT that is the input or another batch's, an unreachable Ray)."""
        executor: Executor | None = None
        out: OutFile | None = None
        held: Any = None
        own_files = {"input": self.data, "program": self.options.program}
        try:
            scored = self.scorer is not None
            stored = lambda index: batches.stored_row(self.store, batch_id, index, scored)  # noqa: E731
            out = OutFile(self.out, stored, own_files)
            executor = self.make_executor(self.store, self.budget, self.options.ray_address, self.share)
            if self.recorded is None:  # a new batch is recorded only once it has OUT
                out.lock()
                held = self._record(batch_id)
            else:  # a resumed one in use elsewhere is refused as such, before its OUT is
                held = self._record(batch_id)
                out.lock()
            out.start()
        except BaseException:  # the batch never started: let go of what it holds
            for part in (executor, out, held):
                if part is not None:
                    part.close()
            raise
        return executor, out, held

    def _record(self, batch_id: str) -> Any:
        """Record the batch as running (a new one, or a resumed one again); the lock it holds."""
        if self.recorded is None:
            options = {
                "total": self.total,
                "out": str(self.out),
                "data_digest": self.digest,
                "concurrency": self.concurrency,
                "executor": self.options.executor,
            }
            if self.scorer is not None and self.scorer.procedure is not None:
                options["score"] = self.scorer.procedure  # a resume scores with it again
            label = self.options.data_label or str(self.data)
            digest = self.program_digest
            return batches.begin_batch(
                self.store, batch_id, str(self.options.program), digest, label, options
            )
        held = batches.reopen_batch(self.store, batch_id, self.program_digest if self.options.force else None)
        if self.options.force:  # the input as it is now is the batch's: no row past its end is counted
            batches.update_input(self.store, batch_id, self.total, self.digest)
        if isinstance(self.options.score, str):  # --score given to a resume: the batch's from now on
            batches.record_scorer(self.store, batch_id, self.options.score)
        if self.budget is not None:
            self.budget.seed(batches.batch_spent(self.store, batch_id))
        return held

    def _run_rows(self, batch_id: str, executor: Executor, out: OutFile) -> str:
        """Hand the rows to executor, record and write them as they end; how the batch ended."""
        bar = progress(self.err, self.settings.quiet, "batch", self.total)
        status = "interrupted"
        try:
            with bar:
                threads = min(self.concurrency, max(self.total, 1))  # no more workers than rows
                for outcome in executor.run(self._jobs(batch_id, out, bar.advance), threads):
                    row = self._scored(outcome)
                    batches.row_ended(self.store, batch_id, row, self.scorer.name if self.scorer else None)
                    if self.budget is not None and self.options.executor != "threads":
                        self.budget.seed(self.budget.spent + outcome.cost_usd)  # rows not sharing it
                    out.add(row)
                    bar.advance()
                    if self.options.on_row is not None:
                        self.options.on_row(row)
            ok = batches.batch_summary(self.store, batch_id) or {}
            status = "completed" if ok.get("ok") == self.total and out.written == self.total else "failed"
        except KeyboardInterrupt:  # Ctrl-C: stop the rows in flight; the batch resumes later
            interrupt(executor)
        except BatchError as err:  # OUT cannot be written (a full disk): stop, the rows are in the store
            interrupt(executor)
            status = "failed"
            hint = f"sexp batch {self.options.program} --resume {batch_id}"
            raise OutWriteError(f"{err.message} (the batch stopped; resume with: {hint})") from None
        finally:
            executor.close()
            out.close()
            batches.end_batch(self.store, batch_id, status)
            if status == "interrupted":
                self._say(f"resume with: sexp batch {self.options.program} --resume {batch_id}")
        return status

    def _jobs(self, batch_id: str, out: OutFile, advance: Any) -> Iterator[RowJob]:
        """The rows to run, read from the input as the executor asks for them."""
        resuming = self.recorded is not None
        plain = plain_settings(self.settings, quiet=True)  # once: asdict copies every field deeply
        plain["otel"] = self.share.telemetry is not None  # a Ray worker's rows export too
        for index, row in enumerate(read_rows(self.data)):
            run_id, again, stored = new_run_id(), False, None
            inputs = {**self.options.shared_inputs, **row} if self.options.shared_inputs else row
            if resuming:
                stored = batches.stored_row(self.store, batch_id, index, self.scorer is not None)
                if stored is not None and stored["status"] == "ok" and not self._edited(stored, inputs):
                    out.add_stored(index)
                    advance()
                    if self.options.on_row is not None:
                        self.options.on_row(stored)
                    continue
                if stored is not None and not (self.options.retry_failed and stored["status"] == "error"):
                    run_id, again = stored["run_id"], True  # else a fresh run: a new answer
            retried = not again and stored is not None and stored["status"] == "error"  # --retry-failed
            # A row on threads records into this store: its first step that acts (a model call)
            # commits this row's start before it acts. A Ray row records elsewhere: not deferred.
            on_threads = self.options.executor == "threads"
            batches.row_started(self.store, batch_id, index, run_id, again, retried, deferred=on_threads)
            if self.scorer is not None and self.scorer.function is not None:
                self.reading[index] = row
            settings = {**plain, "max_cost_usd": self._left()}
            force = self.options.force
            yield RowJob(
                batch_id,
                index,
                inputs,
                self.bundle,
                settings,
                run_id,
                again,
                force,
                row,
                self.unbound,
                self.trace_parent,
                score=self.scorer.procedure if self.scorer is not None else None,
                reuse=reused_run(self.store, self.options.reuse, index),
            )

    def _scored(self, outcome: RowOutcome) -> dict[str, Any]:
        """outcome's OUT object, with its score and score_error when the batch is scored (a Python
        scorer's taken now, in the driver)."""
        row = outcome.as_json()
        scorer = self.scorer
        if scorer is None:
            return row
        score, error = outcome.score, outcome.score_error
        read = self.reading.pop(outcome.index, None)
        if scorer.function is not None and outcome.status == "ok":
            score, error = score_in_driver(scorer, outcome.value, read if read is not None else {})
        row["score"], row["score_error"] = score, error
        return row

    def _edited(self, stored: dict[str, Any], inputs: dict[str, Any]) -> bool:
        """Whether a forced resume must run an ok row again: its run was recorded with another
        program or other inputs (it resumes that run: steps whose requests did not change are
        answered from the store)."""
        if not self.options.force:
            return False
        run = self.store.run(stored["run_id"])
        if run is None:
            return True
        return run["program_hash"] != self.program_digest or json.loads(run["inputs"] or "{}") != inputs

    def _left(self) -> float | None:
        """What is left of the batch's budget, for a row that does not share it (Ray)."""
        if self.budget is None:
            return None
        return max(self.budget.limit or 0.0, 0.0) - self.budget.spent

    def _say(self, line: str) -> None:
        if not self.settings.quiet:
            _line(self.err, line)


def _line(stream: TextIO, line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


def _program_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise BatchError(f"cannot read '{path}': {getattr(err, 'strerror', None) or err}") from None
