"""`sexp tasks list|show NAME|validate PATH...|match TEXT`."""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..diagnostics import error_line, format_error, report
from ..errors import SexpError
from ..tasks.template import load_templates

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


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
            templates = load_templates(path.read_text(encoding="utf-8"), str(path))
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
