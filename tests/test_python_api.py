"""The Python API (SPEC §10.4): run, run_file, Session, TaskResult and SexpError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sexp_tasks

SUMMARIZE = """<task name="summarize" type="atomic">
  <description>Summarise a text</description>
  <instructions>Summarise this text: {{text}}</instructions>
  <inputs><input name="text" type="string">the text</input></inputs>
  <output_format type="json" schema="object"/>
</task>
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for variable in ("SEXP_MODEL", "SEXP_API_BASE", "SEXP_TEMPLATES", "SEXP_MOCK_RESPONSES"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


def task_session(project: Path, replies: list[Any]) -> sexp_tasks.Session:
    (project / "templates").mkdir()
    (project / "templates" / "summarize.xml").write_text(SUMMARIZE)
    (project / "replies.json").write_text(json.dumps(replies))
    return sexp_tasks.Session(
        model="mock/x", templates=["templates"], mock_responses="replies.json", workspace=str(project)
    )


def test_run_converts_the_final_value_to_python(project: Path) -> None:
    assert sexp_tasks.run('(list 1 2.5 nil true "x" {"a" (list 1 {"b" nil})} :key)') == [
        1,
        2.5,
        None,
        True,
        "x",
        {"a": [1, {"b": None}]},
        ":key",
    ]
    assert sexp_tasks.run("nil") is None


def test_python_values_convert_into_the_language(project: Path) -> None:
    session = sexp_tasks.Session()
    session.define("data", {"xs": (1, 2, 3), "name": "n", "none": None})
    assert session.eval('(list (length (get data "xs")) (get data "name") (nil? (get data "none")))') == [
        3,
        "n",
        True,
    ]
    with pytest.raises(sexp_tasks.SexpError, match="dict key must be a string") as raised:
        session.define("bad", {1: 2})
    assert raised.value.type == "TYPE_ERROR"
    with pytest.raises(sexp_tasks.SexpError, match="has no value in the language"):
        session.define("bad", object())


def test_a_session_keeps_definitions_across_evals(project: Path) -> None:
    session = sexp_tasks.Session()
    session.eval("(define (square x) (* x x))")
    session.eval("(define base 10)")
    assert session.eval("(+ base (square 3))") == 19
    assert sexp_tasks.Session().eval('(try base (catch err (get err "type")))') == "NAME_ERROR"


def test_a_defined_callable_takes_keywords_and_its_exception_is_catchable(project: Path) -> None:
    session = sexp_tasks.Session()

    def join(*items: Any, sep: str = ",") -> str:
        return sep.join(str(item) for item in items)

    def fail(reason: str) -> None:
        raise ValueError(f"cannot do it: {reason}")

    session.define("join", join)
    session.define("fail", fail)
    assert session.eval('(join 1 "b" :sep "-")') == "1-b"
    assert session.eval("(join 1 2)") == "1,2"
    with pytest.raises(sexp_tasks.SexpError, match="keyword arguments come as `:key value` pairs"):
        session.eval("(join 1 :sep)")
    caught = session.eval('(try (fail "no disk") (catch err err))')
    assert caught["message"] == "fail: cannot do it: no disk"
    assert caught["type"] == "PYTHON_ERROR"
    with pytest.raises(sexp_tasks.SexpError, match="cannot do it: x") as raised:
        session.eval('(fail "x")')
    assert (raised.value.line, raised.value.column) == (1, 1)


def test_call_calls_a_procedure_with_arguments_and_keywords(project: Path) -> None:
    session = sexp_tasks.Session()
    session.eval("(define (add a b) (+ a b))")
    session.eval("(define n 1)")
    assert session.call("add", 2, 3) == 5
    session.define("kw", lambda *args, **kwargs: [list(args), kwargs])
    assert session.call("kw", 1, flag=True) == [[1], {"flag": True}]
    with pytest.raises(sexp_tasks.SexpError, match="unbound symbol 'nope'"):
        session.call("nope")
    with pytest.raises(sexp_tasks.SexpError, match="not a procedure"):
        session.call("n")


def test_call_calls_a_task_and_its_result_is_a_task_result(project: Path) -> None:
    session = task_session(project, ['<output>{"summary": "short"}</output>'])
    result = session.call("summarize", text="a long text")
    assert isinstance(result, sexp_tasks.TaskResult)
    assert (result.status, result.parsed, result.error) == ("COMPLETE", {"summary": "short"}, None)
    assert json.loads(result.content) == {"summary": "short"}
    assert isinstance(result.notes, dict)


def test_a_failed_task_result_carries_its_error(project: Path) -> None:
    session = task_session(project, ["<output>not json</output>"] * 5)
    result = session.eval('(summarize "text")')
    assert result.status == "FAILED" and result.failed
    assert result.error is not None and result.error["reason"] == "output_format_failure"


def test_a_syntax_error_raises_sexp_error_with_its_position(project: Path) -> None:
    with pytest.raises(sexp_tasks.SexpError) as raised:
        sexp_tasks.run("(+ 1\n  (* 2")
    err = raised.value
    assert err.type == "SYNTAX_ERROR" and "unclosed" in err.message
    assert (err.file, err.line) == ("<python>", 2)


def test_a_runtime_error_raises_sexp_error_with_its_position(project: Path) -> None:
    (project / "prog.sexp").write_text('(define x 1)\n(+ x  (car "s"))\n')
    with pytest.raises(sexp_tasks.SexpError) as raised:
        sexp_tasks.run_file(project / "prog.sexp")
    err = raised.value
    assert err.type == "TYPE_ERROR"
    assert (err.file, err.line, err.column) == (str(project / "prog.sexp"), 2, 7)


def test_run_file_binds_inputs(project: Path) -> None:
    (project / "prog.sexp").write_text("(list name (* 2 n))\n")
    assert sexp_tasks.run_file("prog.sexp", inputs={"name": "a", "n": 4}) == ["a", 8]


def test_run_file_of_a_missing_file_is_an_error(project: Path) -> None:
    with pytest.raises(sexp_tasks.SexpError, match="cannot read missing.sexp"):
        sexp_tasks.run_file("missing.sexp")


def test_settings_are_the_sexp_toml_keys(project: Path) -> None:
    known = "unknown setting 'modle'; known settings: model, api_base, templates"
    with pytest.raises(sexp_tasks.SexpError, match=known) as raised:
        sexp_tasks.run("1", modle="x")
    assert raised.value.type == "CONFIGURATION_ERROR"
    with pytest.raises(sexp_tasks.SexpError, match="max_cost_usd must be a positive number"):
        sexp_tasks.run("1", max_cost_usd=-1)
    with pytest.raises(sexp_tasks.SexpError, match="'max_turns' has the wrong type \\(str\\)"):
        sexp_tasks.run("1", max_turns="3")
    session = sexp_tasks.Session(max_turns=3, quiet=True, templates=".")
    assert (session.settings.max_turns, session.settings.template_flags) == (3, (".",))  # as --templates


def test_the_package_is_typed() -> None:
    assert (Path(sexp_tasks.__file__).parent / "py.typed").is_file()


def test_generation_and_templates_settings_are_checked_as_sexp_toml_checks_them(project: Path) -> None:
    unknown = "unknown setting 'temprature' \\(known: temperature, top_p"
    with pytest.raises(sexp_tasks.SexpError, match=unknown) as raised:
        sexp_tasks.Session(generation={"temprature": 0.2})
    assert raised.value.type == "CONFIGURATION_ERROR"
    with pytest.raises(sexp_tasks.SexpError, match="temperature must be a number, got a string"):
        sexp_tasks.Session(generation={"temperature": "hot"})
    assert sexp_tasks.Session(generation={"stop": "END"}).settings.generation == {"stop": ["END"]}
    with pytest.raises(sexp_tasks.SexpError, match="templates must be a directory \\(got 'missing'\\)"):
        sexp_tasks.Session(templates=["missing"])


def test_eval_of_something_not_text_is_a_sexp_error(project: Path) -> None:
    with pytest.raises(sexp_tasks.SexpError, match="eval takes the program's text, not int") as raised:
        sexp_tasks.Session().eval(5)  # type: ignore[arg-type]
    assert raised.value.type == "TYPE_ERROR"
    with pytest.raises(sexp_tasks.SexpError, match="run takes the program's text, not list"):
        sexp_tasks.run(["(+ 1 2)"])  # type: ignore[arg-type]


def test_a_task_result_goes_back_into_the_language(project: Path) -> None:
    session = task_session(project, ['<output>{"summary": "short"}</output>', "<output>not json</output>"])
    result = session.call("summarize", text="a long text")
    session.define("kept", result)
    assert session.eval('(list (task-result? kept) (get-field kept "summary") (task-json kept))') == [
        True,
        "short",
        {"summary": "short"},
    ]
    assert session.call("get-field", result, "content") == result.content
    session.define("keep", lambda value: value)  # a Python function handed a task result returns it
    failed = session.eval('(keep (summarize "text"))')
    assert failed.failed and failed.error["reason"] == "output_format_failure"
    reason = session.eval('(get (get-field (keep (summarize "text")) "error") "reason")')
    assert reason == "output_format_failure"


def test_a_procedure_comes_to_python_as_a_callable(project: Path) -> None:
    session = sexp_tasks.Session()
    session.eval('(define (greet name) (str "hi " name))')
    greet = session.eval("greet")
    assert greet("ada") == "hi ada"
    assert session.eval("(lambda (xs) (map (lambda (x) (* x 2)) xs))")([1, 2]) == [2, 4]
    # a Python function handed a procedure calls it, and hands it back as the procedure it was
    session.define("twice", lambda fn, x: fn(fn(x)))
    session.define("same", lambda fn: fn)
    assert session.eval("(twice (lambda (x) (* x 3)) 2)") == 18
    assert session.eval('((same greet) "bo")') == "hi bo"
    with pytest.raises(sexp_tasks.SexpError, match="car"):
        session.eval("car")(5)


def test_run_file_inputs_must_be_a_dict(project: Path) -> None:
    (project / "prog.sexp").write_text("(list x)\n")
    assert sexp_tasks.run_file("prog.sexp", inputs={"x": [1, None]}) == [[1, None]]
    not_a_dict = "inputs must be a dict of names to values, not list"
    with pytest.raises(sexp_tasks.SexpError, match=not_a_dict) as raised:
        sexp_tasks.run_file("prog.sexp", inputs=[("x", 1)])  # type: ignore[arg-type]
    assert raised.value.type == "CONFIGURATION_ERROR"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("if", "define: 'if' is a special form; it cannot be defined"),
        ("(x", "define: '\\(x' is not a name a program can use"),
        ("", "define: '' is not a name a program can use"),
        ("a b", "define: 'a b' is not a name a program can use"),
        (5, "define: a name is a string, not int"),
    ],
)
def test_define_takes_only_a_name_a_program_can_use(project: Path, name: Any, message: str) -> None:
    with pytest.raises(sexp_tasks.SexpError, match=message):
        sexp_tasks.Session().define(name, 1)
    (project / "prog.sexp").write_text("1\n")
    if isinstance(name, str):  # inputs are bound as define binds them
        with pytest.raises(sexp_tasks.SexpError, match=message):
            sexp_tasks.run_file("prog.sexp", inputs={name: 1})


def test_quiet_is_a_boolean(project: Path) -> None:
    with pytest.raises(sexp_tasks.SexpError, match="'quiet' has the wrong type \\(str\\); True or False"):
        sexp_tasks.Session(quiet="no")
    assert sexp_tasks.Session(quiet=True).settings.quiet is True
