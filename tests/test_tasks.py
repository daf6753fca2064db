"""The Task System without a model: templates, libraries, task calls, input validation, matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from sexp_tasks.errors import SexpError
from sexp_tasks.printer import to_repr
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.inputs import InputError, prepare_inputs, substitute
from sexp_tasks.tasks.template import load_templates
from sexp_tasks.xmltools import TemplateError

SUMMARIZE = """<task name="summarize" type="atomic">
  <description>Summarise a text in a given style</description>
  <instructions>Summarise this text: {{text}} in style {{style}}</instructions>
  <inputs>
    <input name="text" type="string">the text</input>
    <input name="style" type="string" default="brief">how</input>
    <input name="data" type="object" required="false">extra</input>
  </inputs>
  <output_format type="json" schema="object"/>
</task>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_template_loads_into_a_typed_object() -> None:
    (template,) = load_templates(SUMMARIZE, "summarize.xml")
    assert template.name == "summarize"
    assert [(i.name, i.type, i.required, i.default) for i in template.inputs] == [
        ("text", "string", True, None),
        ("style", "string", False, "brief"),
        ("data", "object", False, None),
    ]
    assert template.output_format.type == "json" and template.output_format.schema == "object"


@pytest.mark.parametrize(
    ("text", "kind", "message", "line"),
    [
        ("<task name='x' type='atomic'><description>", "XML_PARSE_ERROR", "not well-formed", 1),
        ("<task name='x' type='atomic'>\n<bogus/></task>", "VALIDATION_ERROR", "bogus", 2),
        (
            "<task name='x' type='atomic'><description>d</description></task>",
            "VALIDATION_ERROR",
            "missing <instructions>",
            1,
        ),
        (
            "<task name='x' type='atomic'><description>d</description>"
            "<instructions>{{y}}</instructions></task>",
            "VALIDATION_ERROR",
            "{{y}} is not a declared input",
            1,
        ),
        (
            "<task name='x' type='atomic'><description>d</description><instructions>i</instructions>"
            "<context_management><inherit_context>full</inherit_context>"
            "<fresh_context>enabled</fresh_context></context_management></task>",
            "VALIDATION_ERROR",
            "fresh_context enabled cannot be combined with inherit_context full",
            1,
        ),
        (
            "<task name='x' type='atomic'><description>d</description><instructions>i</instructions>"
            "<context_management><inherit_context>subset</inherit_context>"
            "<fresh_context>enabled</fresh_context></context_management></task>",
            "VALIDATION_ERROR",
            "fresh_context enabled cannot be combined with inherit_context subset",
            1,
        ),
    ],
)
def test_template_errors_name_the_file_the_line_and_the_rule(
    text: str, kind: str, message: str, line: int
) -> None:
    with pytest.raises(TemplateError) as caught:
        load_templates(text, "t.xml")
    assert caught.value.error_type == kind
    assert message in caught.value.message
    assert (
        caught.value.span is not None
        and caught.value.span.origin == "t.xml"
        and caught.value.span.line == line
    )


def test_inputs_are_checked_defaulted_and_substituted() -> None:
    (template,) = load_templates(SUMMARIZE, "s.xml")
    inputs = prepare_inputs(template, {"text": "hello"})
    assert inputs == {"text": "hello", "style": "brief"}
    assert (
        substitute(template.instructions, inputs, "summarize") == "Summarise this text: hello in style brief"
    )
    with pytest.raises(InputError, match="missing required input 'text'"):
        prepare_inputs(template, {})
    with pytest.raises(InputError, match="input 'text' must be string, got integer"):
        prepare_inputs(template, {"text": 1})
    with pytest.raises(InputError, match="has no input 'nope'"):
        prepare_inputs(template, {"text": "a", "nope": 1})


def test_substitution_reads_fields_and_renders_data_as_json() -> None:
    assert substitute("{{d.a}} {{d}} {{xs}}", {"d": {"a": 1}, "xs": [1, "b"]}, "t") == '1 {"a": 1} [1, "b"]'
    with pytest.raises(InputError, match="no field 'zz'"):
        substitute("{{d.zz}}", {"d": {}}, "t")


def test_a_library_refuses_duplicates_in_one_directory_and_suggests_names(workspace: Path) -> None:
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(workspace / "tasks" / "b.xml", SUMMARIZE)
    with pytest.raises(TemplateError, match="defined twice"):
        Runtime()
    (workspace / "tasks" / "b.xml").unlink()
    runtime = Runtime()
    with pytest.raises(SexpError, match="did you mean 'summarize'"):
        runtime.run_source("(sumarize :text 1)")


def test_a_later_directory_overrides_with_a_warning(workspace: Path) -> None:
    from sexp_tasks.config import Settings

    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(workspace / "more" / "a.xml", SUMMARIZE.replace("Summarise a text", "Another"))
    import io

    err = io.StringIO()
    runtime = Runtime(Settings(template_flags=("more",)), err=err)
    assert runtime.tasks.library.get("summarize").description.startswith("Another")
    assert "overrides" in err.getvalue()


@pytest.mark.parametrize(
    "call",
    [
        "(summarize (text 5))",
        "(summarize :text 5)",
        "(summarize 5)",
        '(call-atomic-task "summarize" (text 5))',
    ],
)
def test_every_call_syntax_validates_inputs_before_any_request(workspace: Path, call: str) -> None:
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    runtime = Runtime()
    result = runtime.run_source(
        f'(define r {call}) (list (get-field r "status") (get-field (get-field r "error") "reason"))'
    )
    assert to_repr(result) == '("FAILED" "input_validation_failure")'


def test_a_task_call_without_any_model_names_the_five_places(workspace: Path) -> None:
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    with pytest.raises(
        SexpError, match="--model, the template's <model>, SEXP_MODEL, or `model` in sexp.toml"
    ):
        Runtime().run_source('(summarize (text "hi"))')


def test_defatom_registers_a_validated_template() -> None:
    runtime = Runtime()
    value = runtime.run_source(
        '(defatom greet (params (who str) (n int)) (instructions "Hi {{who}}") (model "mock/x"))'
    )
    assert to_repr(value) == "greet"
    template = runtime.tasks.library.get("greet")
    assert template.description == "Dynamically defined task: greet"
    assert [(i.name, i.type) for i in template.inputs] == [("who", "string"), ("n", "integer")]
    caught = runtime.run_source(
        '(try (defatom bad (params x) (instructions "{{y}}"))'
        ' (catch e (list (get e "type") (get e "message"))))'
    )
    assert to_repr(caught).startswith('("VALIDATION_ERROR" "task \'bad\': {{y}} is not a declared input')
    with pytest.raises(SexpError, match=r"unknown clause \(colour"):
        runtime.run_source('(defatom t2 (instructions "i") (colour "red"))')


def test_match_tasks_scores_templates_best_first(workspace: Path) -> None:
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(
        workspace / "tasks" / "b.xml",
        SUMMARIZE.replace('name="summarize"', 'name="translate"').replace(
            "Summarise a text in a given style", "Translate text to French"
        ),
    )
    runtime = Runtime()
    found = runtime.run_source('(match-tasks "summarise this text")')
    assert [m["name"] for m in found][0] == "summarize"
    assert all(0 <= m["score"] <= 1 for m in found)


def test_task_helpers_are_written_in_the_language(runtime: Runtime) -> None:
    assert to_repr(runtime.run_source('(list (task-ok? 1) (task-content "x"))')) == '(false "x")'


def test_tasks_commands(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(workspace / "bad.xml", "<task name='b' type='atomic'>\n<bogus/></task>")
    code, out, err = cli("tasks", "list")  # the package's own templates are listed too
    assert code == 0 and err == "" and "summarize  Summarise a text in a given style\n" in out
    assert out.startswith("associative_matching  ")
    code, out, err = cli("tasks", "show", "summarize")
    assert code == 0 and "input style: string (optional, default 'brief')" in out
    code, out, err = cli("tasks", "show", "sumarize")
    assert code == 1 and "did you mean 'summarize'" in err
    code, out, err = cli("tasks", "validate", "tasks", "bad.xml")
    assert code == 1 and "tasks/a.xml: ok" in out and "bad.xml:2:1: error: schema:" in err
    code, out, err = cli("tasks", "validate", "bad.xml", "missing.xml")  # a missing file: usage error
    assert code == 2 and "error: cannot read 'missing.xml': No such file or directory" in err
    code, out, err = cli("tasks", "match", "summarise", "a", "text")
    assert code == 0 and out.split()[1] == "summarize" and 0 < float(out.split()[0]) <= 1


def test_a_broken_template_stops_run_naming_file_and_line(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "bad.xml", "<task name='b' type='atomic'>\n<bogus/></task>")
    code, out, err = cli("eval", "(+ 1 2)")
    assert code == 1 and "tasks/bad.xml:2:1: error: schema:" in err


def test_a_program_that_calls_no_model_imports_no_heavy_library(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    probe = "(+ 1 2)"
    code, out, err = cli("eval", probe, python_flags=("-X", "importtime"))
    assert code == 0
    assert "litellm" not in err and "tiktoken" not in err


def test_check_knows_task_names_and_their_inputs(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(
        workspace / "ok.sexp",
        '(defatom greet (params who) (instructions "Hi {{who}}"))\n(greet (who "a"))\n'
        '(summarize (text "x"))\n(call-atomic-task "summarize" (text (string-upcase "x")))\n'
        '(summarize :text "b")\n',
    )
    assert cli("check", "ok.sexp") == (0, "ok.sexp: ok\n", "")
    write(workspace / "bad.sexp", '(summarize (txt "x"))\n(sumarize :text 1)\n')
    code, out, err = cli("check", "bad.sexp")
    assert code == 1
    assert "bad.sexp:1:12: error: task 'summarize' has no input 'txt' (declared: data, style, text)" in err
    assert "bad.sexp:2:1: error: unknown procedure 'sumarize'; did you mean 'summarize'?" in err


def test_a_failed_final_task_result_exits_1_with_its_error_line(  # type: ignore[no-untyped-def]
    cli, workspace: Path
) -> None:
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    code, out, err = cli("eval", "(summarize :text 5)")
    assert code == 1
    assert out == '#<TaskResult FAILED "">\n'
    expected = "task 'summarize': input 'text' must be string, got integer"
    assert err == f"error: TASK_FAILURE input_validation_failure: {expected}\n"
    code, out, err = cli("eval", "--json", "(summarize :text 5)")
    assert code == 1
    import json

    value = json.loads(out)
    assert value["status"] == "FAILED" and value["error"]["reason"] == "input_validation_failure"


@pytest.mark.slow
def test_a_mock_model_answers_a_task_offline(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "replies.json", '["<output>first</output>", "<output>second</output>"]')
    program = (
        '(progn (defatom t (params (x str)) (instructions "Run {{x}}"))'
        ' (list (t (x "a")) (t "b") (t :x "c")))'
    )
    code, out, err = cli("eval", program, "--model", "mock/demo", "--mock-responses", "replies.json")
    assert (code, err) == (0, "")
    second = '#<TaskResult COMPLETE "second">'
    assert out == f'(#<TaskResult COMPLETE "first"> {second} {second})\n'


def test_the_run_cost_budget_refuses_calls_once_spent(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    program = '(progn (defatom t (params x) (instructions "Echo {{x}}")) (t "a"))'
    code, out, err = cli("eval", "--max-cost", "0", "--model", "mock/demo", program)
    assert code == 1
    assert out == '#<TaskResult FAILED "">\n'
    assert err.startswith("error: RESOURCE_EXHAUSTION cost: the run has spent $0.0000 of its $0.0000 budget")


@pytest.mark.slow
def test_unscripted_mock_replies_count_calls_and_warn_of_nothing(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    program = '(progn (defatom t (params x) (instructions "Echo {{x}}")) (list (t "a") (t "b")))'
    code, out, err = cli("eval", "--model", "mock/demo", program)
    assert (code, err) == (0, "")
    assert (
        out
        == '(#<TaskResult COMPLETE "mock response 1 for t"> #<TaskResult COMPLETE "mock response 2 for t">)\n'
    )


def test_a_missing_api_key_is_an_authentication_failure(runtime) -> None:  # type: ignore[no-untyped-def]
    result = runtime.run_source('(progn (defatom hi (instructions "hi")) (hi :model "openai/gpt-4o-mini"))')
    assert result.status == "FAILED" and result.error.reason == "authentication"
    assert "no API key for this provider" in result.error.message
