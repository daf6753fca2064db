"""Task primitives that need no model: task-result?, match-tasks and load-templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import FileError
from ...lang.primitives.strings import as_string
from ...results import TaskResult
from ..task_services import TaskServices
from . import TASK_PRIMITIVES


@TASK_PRIMITIVES.primitive("task-result?", signature="(task-result? x)")
def is_task_result(x: Any) -> bool:
    """True for the TaskResult of a task or script.

    (task-result? (system:run_script (command "true")))
    ;; => true
    (task-result? (dict "status" "COMPLETE"))
    ;; => false
    """
    return isinstance(x, TaskResult)


@TASK_PRIMITIVES.primitive("match-tasks", signature="(match-tasks text)")
def match_tasks(ctx: TaskServices, text: Any) -> list[dict[str, Any]]:
    """Up to 5 templates that fit text, best first: dicts with name, score and description.

    Scores are in [0, 1], from the templates' names, descriptions and criteria; past success
    scores recorded in the run store may raise a template's.

    (defatom summarize (params text)
      (description "Summarize a text in one sentence")
      (instructions "Summarize {{text}}"))
    (get (first (match-tasks "summarize a text")) "name")
    ;; => "summarize"
    """
    found = ctx.tasks.match(as_string("match-tasks", text))
    return [{"name": t.name, "score": score, "description": t.description} for score, t in found]


@TASK_PRIMITIVES.primitive("load-templates", signature="(load-templates directory)")
def load_templates(ctx: TaskServices, directory: Any) -> list[str]:
    r"""Load the XML templates of a directory now; their names. Errors can be caught with try.

    A template that is not well-formed raises XML_PARSE_ERROR, one the schema or the rules refuse
    VALIDATION_ERROR.

    (write-file "more-tasks/hello.xml"
      (string-append "<task name=\"hello\" type=\"atomic\"><description>Greet</description>"
                     "<instructions>Say hello.</instructions></task>"))
    (load-templates "more-tasks")
    ;; => ("hello")
    (try (load-templates "no-such-dir") (catch e (get e "message")))
    ;; => "load-templates: no such directory 'no-such-dir'"
    """
    path = Path(as_string("load-templates", directory))
    if not path.is_dir():
        raise FileError(f"load-templates: no such directory '{path}'")
    ctx.tasks.library.load_directory(path, strict=True)
    return sorted(t.name for t in ctx.tasks.library.templates.values() if Path(t.origin).parent == path)
