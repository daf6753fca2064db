"""What `sexp tasks list|show NAME|validate PATH...|match TEXT|render NAME` print (cli/task_commands.py
declares them)."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import Settings
from ..diagnostics import error_line, failed_result_line, format_error, report, warning_line
from ..errors import SexpError
from ..handler.request import format_request
from ..redact import scrub
from ..results import TaskResult
from ..tasks.template import check_json_schema, load_templates
from ..xmltools import read_template
from .bindings import parse_bindings
from .command_line import EXIT_ERROR, EXIT_OK, EXIT_USAGE


def run_tasks_command(action: str, operands: list[str], settings: Settings) -> int:
    """Carry out one tasks subcommand; the exit status."""
    from ..runtime import Runtime  # lazy: `validate` needs no Runtime (cli/startup.py)

    if action == "validate":
        return _validate(operands)
    runtime = Runtime(settings)
    library = runtime.tasks.library
    if action == "list":
        for listed in library:
            print(f"{listed.name}  {listed.description}")
        return EXIT_OK
    if action == "show":
        template = library.get(operands[0])
        if template is None:
            report(error_line(f"unknown task '{operands[0]}'{library.suggestion(operands[0])}"))
            return EXIT_ERROR
        print(template.describe())
        return EXIT_OK
    for score, template in runtime.tasks.match(" ".join(operands)):
        print(f"{score:.2f}  {template.name}  {template.description}")
    return EXIT_OK


def _validate(paths: list[str]) -> int:
    status = EXIT_OK
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        files += sorted(path.glob("*.xml")) if path.is_dir() else [path]
    for path in files:
        try:
            templates = load_templates(read_template(path), str(path))
            for template in templates:
                check_json_schema(template)  # its $refs resolved, its depth bounded (SPEC §11.1)
        except OSError as err:  # a missing file is a usage error, as for `run` and `check`
            report(error_line(f"cannot read '{path}': {err.strerror}"))
            status = max(status, EXIT_USAGE)
            continue
        except SexpError as err:
            report(format_error(err))
            status = max(status, EXIT_ERROR)
            continue
        print(f"{path}: ok ({', '.join(t.name for t in templates)})")
    return status


def render_command(settings: Settings, name: str, sets: list[str], set_strs: list[str], as_json: bool) -> int:
    """`sexp tasks render NAME [--set name=value]...`: the request a call of NAME with these
    inputs (and reserved parameters: model, tools, files, context...) would send first, built by
    the code that builds a real call's; nothing is sent, litellm is not even imported. Keys are
    masked. Exit 1 with the call's own error for bad inputs or an unknown name."""
    from ..runtime import Runtime  # lazy, as above

    named = dict(parse_bindings(sets, literal=True) + parse_bindings(set_strs, literal=False))
    tasks = Runtime(settings).tasks
    template = tasks.library.get(name)
    if template is None:
        report(error_line(f"unknown task '{name}'{tasks.library.suggestion(name)}"))
        return EXIT_ERROR
    rendered = tasks.first_request(template, named)
    if isinstance(rendered, TaskResult):  # the FAILED result the call would give
        report(failed_result_line(rendered) or error_line(f"task '{name}' cannot be called"))
        return EXIT_ERROR
    if not settings.quiet:
        for warning in rendered.warnings:
            report(warning_line(f"{name}: {warning}"))
    request = rendered.request.as_record()
    if as_json:
        print(scrub(json.dumps(request, ensure_ascii=False)))
    else:
        print(scrub("\n".join(format_request(request))))
    return EXIT_OK
