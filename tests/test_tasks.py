"""The Task System without a model: templates, libraries, task calls, input validation, matching."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sexp_tasks.cli.startup import LAZY_IMPORTS
from sexp_tasks.config import Settings
from sexp_tasks.diagnostics import failed_result_line
from sexp_tasks.errors import SexpError, TemplateError
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.inputs import InputError, prepare_inputs, substitute
from sexp_tasks.tasks.template import load_templates

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


SUBSET_FRESH = (
    "<context_management><inherit_context>subset</inherit_context>"
    "<fresh_context>enabled</fresh_context></context_management>"
)


def test_subset_with_fresh_context_is_valid_in_xml_and_defatom(runtime: Runtime) -> None:
    """SPEC §10.1: only inherit full with fresh enabled is refused; subset + fresh is the subtask default."""
    (template,) = load_templates(
        f"<task name='x' type='atomic'><description>d</description><instructions>i</instructions>"
        f"{SUBSET_FRESH}</task>",
        "t.xml",
    )
    assert (template.context.inherit_context, template.context.fresh_context) == ("subset", "enabled")
    value = runtime.run_source(
        '(defatom sub (instructions "i") (context (inherit_context "subset") (fresh_context "enabled")))'
    )
    assert to_repr(value) == "sub"
    with pytest.raises(SexpError, match="fresh_context enabled cannot be combined with inherit_context full"):
        runtime.run_source(
            '(defatom full (instructions "i") (context (inherit_context "full") (fresh_context "enabled")))'
        )


ENTITY_TEMPLATES = {
    "used in text": '<!DOCTYPE task [<!ENTITY x "y">]>\n<task name="e" type="atomic">\n'
    "<description>d</description>\n<instructions>say &x; now</instructions>\n</task>\n",
    "used in an attribute": '<!DOCTYPE task [<!ENTITY x "y">]>\n<task name="e&x;" type="atomic">\n'
    "<description>d</description>\n<instructions>say</instructions>\n</task>\n",
    "declared through a parameter entity": "<!DOCTYPE task [<!ENTITY % p \"<!ENTITY x 'y'>\"> %p;]>\n"
    '<task name="e" type="atomic">\n<description>d</description>\n'
    "<instructions>&x;</instructions>\n</task>\n",
    "external": '<!DOCTYPE task [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n<task name="e" type="atomic">\n'
    "<description>d</description>\n<instructions>say &x;</instructions>\n</task>\n",
}


@pytest.mark.parametrize("kind", sorted(ENTITY_TEMPLATES))
def test_a_template_using_an_xml_entity_is_a_validation_error(kind: str) -> None:
    """SPEC §10.1: never an internal error of the schema validator; the file and line are named."""
    with pytest.raises(TemplateError) as caught:
        load_templates(ENTITY_TEMPLATES[kind], "t.xml")
    assert caught.value.error_type == "VALIDATION_ERROR"
    assert "entit" in caught.value.message
    span = caught.value.span
    assert span is not None and span.origin == "t.xml" and span.line in (1, 2, 4)


def test_a_document_the_schema_validator_cannot_handle_is_a_validation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lxml import etree

    from sexp_tasks import xmltools

    class Broken:
        def validate(self, root: object) -> bool:
            raise etree.XMLSchemaValidateError("Internal error in XML Schema validation.")

    monkeypatch.setattr(xmltools, "_schema", lambda: Broken())
    with pytest.raises(TemplateError) as caught:
        load_templates("<task name='x' type='atomic'>\n<description>d</description></task>", "t.xml")
    assert caught.value.error_type == "VALIDATION_ERROR" and "cannot be validated" in caught.value.message
    assert caught.value.span is not None and (caught.value.span.origin, caught.value.span.line) == (
        "t.xml",
        1,
    )


def test_an_entity_template_stops_a_command_naming_its_file_and_line(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "ent.xml", ENTITY_TEMPLATES["used in text"])
    code, out, err = cli("eval", "(+ 1 2)")
    assert code == 1 and "internal error" not in err
    assert err.startswith("tasks/ent.xml:4:"), err
    assert "error: task templates may not use XML entities" in err


def test_a_byte_order_mark_before_a_template_is_ignored(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<task name="bom" type="atomic"><description>d</description>'
    )
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "bom.xml").write_bytes(
        b"\xef\xbb\xbf" + body.encode() + b"<instructions>i</instructions></task>"
    )
    assert cli("eval", "(task? bom)") == (0, "true\n", "")
    assert cli("tasks", "validate", "tasks/bom.xml")[0] == 0
    (template,) = load_templates("\ufeff" + body + "<instructions>i</instructions></task>", "b.xml")
    assert template.name == "bom"


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


NO_INPUT = '(defatom notask (instructions "Say hi"))'
ONE_INPUT = '(defatom one (params x) (instructions "Echo {{x}}"))'


@pytest.mark.parametrize(
    ("program", "calls"),
    [
        ("(map notask (list 1 2))", 2),
        ("(map one (list 1 2) (list 3 4))", 2),
        ("(pmap notask (list 1 2))", 2),
        ("(filter notask (list 1 2))", 2),
        ("(for-each notask (list 1 2))", 2),
        ('(reduce one "" (list 1 2))', 2),
    ],
)
def test_higher_order_primitives_pass_a_task_only_its_declared_inputs(
    workspace: Path, program: str, calls: int
) -> None:
    """SPEC §10.1: map, pmap and the loops pass a task as many arguments as it declares inputs."""
    from sexp_tasks.config import Settings

    runtime = Runtime(Settings(workspace=str(workspace), model="mock/x"))
    value = runtime.run_source(f"{NO_INPUT} {ONE_INPUT} {program}")
    results = value if isinstance(value, list) else [value]
    assert all(getattr(r, "status", "COMPLETE") == "COMPLETE" for r in results), to_repr(value)
    assert runtime.tasks.services().mock.calls == calls  # every call reached the model


def test_a_direct_call_with_too_many_arguments_still_fails(workspace: Path) -> None:
    from sexp_tasks.config import Settings

    runtime = Runtime(Settings(workspace=str(workspace), model="mock/x"))
    result = runtime.run_source(f"{NO_INPUT} (notask 1)")
    assert result.status == "FAILED" and result.error.reason == "input_validation_failure"
    result = runtime.run_source("(apply notask (list 1))")  # apply is a direct call
    assert result.status == "FAILED" and result.error.reason == "input_validation_failure"


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
    """A program with a task it does not call reads the template (lxml) and nothing more of the
    libraries a start leaves for later (sexp_tasks/cli/startup.py): no model library, no schema."""
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    assert cli("eval", "1")[0] == 0  # the reader's tables are cached from now on
    code, out, err = cli("eval", "(+ 1 2)", python_flags=("-X", "importtime"))
    assert (code, out) == (0, "3\n")
    imported = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line}
    lazy = {name for name, entry in LAZY_IMPORTS.items() if entry.program}
    lazy |= {library for name in lazy for library in LAZY_IMPORTS[name].brings}
    assert "sexp_tasks" in imported  # the import log is really there
    assert {name for name in lazy if any(m == name or m.startswith(name + ".") for m in imported)} == {"lxml"}


GREET = (
    '<task name="greet" type="atomic"><description>{}</description>'
    "<instructions>Hi {{{{who}}}}</instructions>"
    '<inputs><input name="who" type="string">who</input></inputs></task>'
)


def test_a_program_finds_the_templates_in_its_own_directory(workspace: Path) -> None:
    """SPEC §10.1: `sexp run dir/prog.sexp` loads dir/tasks/ after the stdlib, before ./tasks/."""
    from conftest import run_cli

    write(workspace / "proj" / "tasks" / "greet.xml", GREET.format("the program's"))
    write(workspace / "proj" / "prog.sexp", '(print (get-field (greet :who "owls") "status"))\n')
    args = ("--model", "mock/x", "-q")
    assert run_cli("run", "proj/prog.sexp", *args, cwd=workspace) == (0, "COMPLETE\n", "")
    assert run_cli("check", "proj/prog.sexp", cwd=workspace) == (0, "proj/prog.sexp: ok\n", "")
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    assert run_cli("run", str(workspace / "proj" / "prog.sexp"), *args, cwd=elsewhere)[:2] == (
        0,
        "COMPLETE\n",
    )
    # Run from the program's own directory, its tasks/ is ./tasks/: loaded once, no override warning.
    code, out, err = run_cli("run", "prog.sexp", "--model", "mock/x", cwd=workspace / "proj")
    assert (code, out, err) == (0, "COMPLETE\n", "")
    # ./tasks/ comes after the program's own, and wins with a warning.
    write(workspace / "tasks" / "greet.xml", GREET.format("the working directory's"))
    code, out, err = run_cli("eval", "(get (task-inputs greet) 0)", cwd=workspace)
    assert code == 0
    code, out, err = run_cli("run", "proj/prog.sexp", "--model", "mock/x", cwd=workspace)
    assert (
        code == 0 and "task 'greet' from tasks/greet.xml overrides the one from proj/tasks/greet.xml" in err
    )


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
    assert (
        "bad.sexp:1:12: error: task 'summarize' has no input 'txt' (declared: text, style, data);"
        " did you mean 'text'?"
    ) in err
    assert "bad.sexp:2:1: error: unknown procedure 'sumarize'; did you mean 'summarize'?" in err


WRITE_DESCRIPTION = (
    '(defatom write-description (params product (tone str)) (instructions "{{product}} {{tone}}"))\n'
)


@pytest.mark.parametrize(
    ("call", "problems"),
    [
        (
            '(write-description :prodcut "x" :tone "dry")',
            [
                "2:1: error: task 'write-description': missing required input 'product'",
                "2:20: error: task 'write-description' has no input 'prodcut' (declared: product, tone);"
                " did you mean 'product'?",
            ],
        ),
        (
            '(write-description (prodcut "x") (tone "dry"))',
            [
                "2:1: error: task 'write-description': missing required input 'product'",
                "2:20: error: task 'write-description' has no input 'prodcut' (declared: product, tone);"
                " did you mean 'product'?",
            ],
        ),
        (
            '(write-description :product "x")',
            ["2:1: error: task 'write-description': missing required input 'tone'"],
        ),
        ('(write-description "x")', ["2:1: error: task 'write-description': missing required input 'tone'"]),
        (
            '(write-description "x" "y" "z")',
            ["2:1: error: task 'write-description' takes 2 inputs, got 3 arguments"],
        ),
        (
            '(write-description :product "x" "y")',
            ["2:1: error: task 'write-description': keyword and positional arguments cannot be mixed"],
        ),
        (
            '(call-atomic-task "write-description" :product "x" :tnoe "y")',
            [
                "2:1: error: task 'write-description': missing required input 'tone'",
                "2:52: error: task 'write-description' has no input 'tnoe' (declared: product, tone);"
                " did you mean 'tone'?",
            ],
        ),
        (
            '(summarize :txet "x")',
            [
                "2:1: error: task 'summarize': missing required input 'text'",
                "2:12: error: task 'summarize' has no input 'txet' (declared: text, style, data);"
                " did you mean 'text'?",
            ],
        ),
    ],
)
def test_check_flags_the_inputs_of_task_calls_it_can_resolve(  # type: ignore[no-untyped-def]
    cli, workspace: Path, call: str, problems: list[str]
) -> None:
    """SPEC §10.1/issue 10: unknown input names (with the close one) and missing required inputs."""
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    write(workspace / "prog.sexp", f"{WRITE_DESCRIPTION}{call}\n")
    code, out, err = cli("check", "prog.sexp")
    assert (code, out) == (1, ""), err
    assert [line.removeprefix("prog.sexp:") for line in err.splitlines() if ": error: " in line] == problems


def test_check_accepts_every_good_task_call(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    write(workspace / "tasks" / "a.xml", SUMMARIZE)
    program = WRITE_DESCRIPTION + (
        '(write-description :product "x" :tone "dry" :model "mock/x")\n'
        '(write-description (product "x") (tone "dry") (files (list)))\n'
        '(write-description "x" "dry")\n'
        '(summarize "x")\n(summarize :text "x" :style "long")\n'
        "(map write-description (list 1 2))\n"  # passed, not called: pmap and map fit the arguments
        "(let ((summarize (lambda (&key txet) txet))) (summarize :txet 1))\n"  # a local shadows the task
        '(define (uses-key) (call-atomic-task (string-append "sum" "marize") :anything 1))\n'
    )
    write(workspace / "prog.sexp", program)
    assert cli("check", "prog.sexp") == (0, "prog.sexp: ok\n", "")


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
    assert (code, err) == (0, "warning: mock responses for t ran out; repeating the last\n")
    second = '#<TaskResult COMPLETE "second">'
    assert out == f'(#<TaskResult COMPLETE "first"> {second} {second})\n'


def test_the_run_cost_budget_refuses_calls_once_spent(workspace: Path) -> None:
    from sexp_tasks.config import Settings

    program = '(progn (defatom t (params x) (instructions "Echo {{x}}")) (t "a"))'
    # Mock calls cost nothing, so only a spent budget refuses them; the CLI refuses a budget of 0
    # as a usage error, so the setting is given here directly.
    runtime = Runtime(Settings(workspace=str(workspace), model="mock/demo", max_cost_usd=0.0))
    result = runtime.run_source(program)
    assert to_repr(result) == '#<TaskResult FAILED "">'
    assert str(failed_result_line(result)).startswith("error: RESOURCE_EXHAUSTION cost: the run has spent $")


def test_sexp_toml_sets_max_tool_calls_per_turn(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    calls = [{"name": "list_files", "arguments": {}}] * 3
    replies = [{"content": "", "tool_calls": calls}, "<output>done</output>"]
    (workspace / "replies.json").write_text(json.dumps(replies))
    (workspace / "sexp.toml").write_text("max_tool_calls_per_turn = 2\n")
    program = '(progn (defatom t (instructions "Look") (tools list_files)) (t))'
    code, out, err = cli("eval", "--model", "mock/demo", "--mock-responses", "replies.json", program)
    assert (code, out) == (1, '#<TaskResult FAILED "">\n')
    assert err.startswith("error: RESOURCE_EXHAUSTION tool_calls: the model asked for 3 tool calls in one")
    (workspace / "sexp.toml").write_text("max_tool_calls_per_turn = 3\n")
    assert cli("eval", "--model", "mock/demo", "--mock-responses", "replies.json", program)[0] == 0


def test_ask_user_asks_on_the_runtimes_error_stream(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asking = {"content": "", "tool_calls": [{"name": "ask_user", "arguments": {"question": "Colour?"}}]}
    (workspace / "replies.json").write_text(json.dumps([asking, "<output>noted</output>"]))
    monkeypatch.setattr("sys.stdin", io.StringIO("blue\n"))
    err = io.StringIO()
    settings = Settings(workspace=str(workspace), model="mock/demo", mock_responses="replies.json")
    runtime = Runtime(settings, err=err)
    program = '(defatom asker (instructions "Ask") (tools ask_user)) (task-content (asker))'
    assert runtime.run_source(program) == "noted"
    assert "Colour?\n> " in err.getvalue()
    assert "Colour?" not in capsys.readouterr().err


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
