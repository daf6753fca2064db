"""`sexp batch FILE --data IN.jsonl` (SPEC §10.5): run a program once per input line, each line
its own recorded run; the rows' results in OUT, in input order; exit 0 when every row is ok, 1
when one is not or OUT could not be written, 2 when the batch cannot start (a malformed input
line, an OUT that is its input: nothing runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..diagnostics import error_line, format_error, report
from ..errors import BatchError, OutWriteError, TemplateError
from ..lang.printer import to_json_value
from .bindings import parse_bindings
from .command_line import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    Commands,
    command_settings,
    guarded,
)
from .setting_options import add_setting_options, given_settings

if TYPE_CHECKING:
    from ..batching.driver import BatchOptions

EXECUTORS = ("threads", "ray")

BATCH_HELP = """\
Run FILE once per line of IN.jsonl, each line a JSON object whose keys bind globals (as --set
does; not a key naming a built-in or a name FILE defines: read it with (get row "KEY"), the
global row holding the line), each row its own recorded run (`sexp trace RUN_ID`). The rows'
results go to OUT, one JSON line per input line, in input order: {"index", "status":
"ok"|"error", "value", "error", "run_id", "tokens", "cost_usd", "seconds"}. A failing row never
stops the others. With --score SCORER (a procedure FILE defines, called with each ok row's value
and the row), each line also gets "score" (a number or a dict of numbers) and "score_error", and
the batch ends with `score: <name> mean <m> min <a> max <b> n <k>` per metric.

Exit status: 0 every row ok, 1 some row failed or OUT could not be written as rows ended (a
full disk: the batch stops, resume it), 2 the batch could not start (nothing ran).
"""


def register(commands: Commands) -> None:
    """Declare `sexp batch` among commands."""
    batch = commands.add_parser(
        "batch",
        help="run a program once per line of a JSONL file",
        description=BATCH_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    batch.add_argument("file", help="the program")
    batch.add_argument(
        "--data", metavar="IN.jsonl", help="the input: one JSON object a line (resuming: the batch's)"
    )
    batch.add_argument(
        "--out", metavar="OUT.jsonl", help="the results (default: FILE's stem + .results.jsonl, here)"
    )
    batch.add_argument(
        "--concurrency", type=int, metavar="N", help="rows at once (default: the concurrency setting)"
    )
    batch.add_argument(
        "--executor", choices=EXECUTORS, default="threads", help="where rows run (default threads)"
    )
    batch.add_argument(
        "--ray-address", metavar="ADDR", help="the Ray cluster (default RAY_ADDRESS, else a local Ray)"
    )
    batch.add_argument(
        "--resume", metavar="BATCH_ID", help="finish a batch: run its rows without an ok result"
    )
    batch.add_argument(
        "--force", action="store_true", help="with --resume: resume an edited program or input"
    )
    batch.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: run the rows whose result is an error again, as fresh runs",
    )
    batch.add_argument(
        "--reuse",
        metavar="BATCH_ID",
        help="a new batch: each row's model requests that BATCH_ID's row also made take its answers",
    )
    batch.add_argument(
        "--score",
        metavar="SCORER",
        help="score each ok row with the procedure SCORER of FILE, called with its value and row",
    )
    batch.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="bind a global in every row (a row's key wins)",
    )
    batch.add_argument(
        "--set-str", action="append", default=[], metavar="NAME=VALUE", help="the same, as a string"
    )
    add_setting_options(
        batch,
        model="the model of every task call that names none itself",
        mock_responses="replies for mock/ models, for every row",
        record="record every row's model calls to one cassette",
        replay="answer every row's model calls from a cassette",
        max_cost="one budget for the whole batch",
    )
    batch.add_argument(
        "-q", "--quiet", action="store_true", help="print only errors (no progress, no summary)"
    )
    batch.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show Python tracebacks"
    )
    batch.set_defaults(run=run_batch_command)


def run_batch_command(args: argparse.Namespace, cwd: Path) -> int:
    """`sexp batch FILE`, with the settings its options give."""
    settings = command_settings(cwd, given_settings(args))
    return guarded(args, lambda: batch_command(args, settings))


def batch_command(args: argparse.Namespace, settings: Settings) -> int:
    """Run the batch the arguments describe; the exit status."""
    from ..batching.driver import run_batch  # lazy: --help starts without the language (cli/startup.py)

    try:
        summary = run_batch(_options(args, settings), settings)
    except OutWriteError as err:  # rows ran, OUT could not be written: the batch did not finish
        report(error_line(err.message, err.where))
        return EXIT_ERROR
    except BatchError as err:  # the batch could not start: nothing ran
        report(error_line(err.message, err.where))
        return EXIT_USAGE
    except TemplateError as err:  # the program's templates do not load: no row ran
        report(format_error(err))
        return EXIT_USAGE
    return EXIT_OK if summary.ok == summary.total else EXIT_ERROR


def _options(args: argparse.Namespace, settings: Settings) -> BatchOptions:
    from ..batching.driver import BatchOptions  # lazy, as above

    shared: dict[str, Any] = {}
    if args.set or args.set_str:  # a name of a built-in is not bound: the driver warns (row_names.py)
        pairs = parse_bindings(args.set, True) + parse_bindings(args.set_str, False)
        shared = {name: to_json_value(value) for name, value in pairs}
    return BatchOptions(
        program=Path(args.file),
        data=Path(args.data) if args.data else None,
        out=Path(args.out) if args.out else None,
        concurrency=args.concurrency,
        executor=args.executor,
        ray_address=args.ray_address,
        resume=args.resume,
        force=args.force,
        retry_failed=args.retry_failed,
        shared_inputs=shared,
        score=args.score,
        reuse=args.reuse,
    )
