"""Documentation (SPEC §10.3): every name bound at start-up has a signature, a description and an
example that runs; `(help NAME)` prints what `sexp doc NAME` prints (lang/documentation.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import Cli

from sexp_tasks.config import Settings
from sexp_tasks.errors import FormError, NameError_
from sexp_tasks.lang.documentation import Doc, example_steps, parse_doc, render_doc
from sexp_tasks.lang.interpreter import Interpreter
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.lang.values import Primitive
from sexp_tasks.runtime import Runtime


def fresh(workspace: Path) -> Runtime:
    """A runtime as at start-up, without templates, its output captured."""
    settings = Settings(workspace=str(workspace))
    return Runtime(settings, out=io.StringIO(), err=io.StringIO(), load_templates=False)


def bound_at_start_up(runtime: Runtime) -> set[str]:
    """Every name a fresh runtime binds: its special forms, primitives and library procedures."""
    env = runtime.globals
    return set(runtime.compiler.forms) | set(env.values) | set(env.pending)


STARTUP_DOCS = fresh(Path.cwd()).docs()


def test_every_name_bound_at_start_up_is_documented(workspace: Path) -> None:
    runtime = fresh(workspace)
    docs = runtime.docs()
    names = bound_at_start_up(runtime)
    assert names - set(docs) == set()
    assert list(docs) == sorted(docs)
    undocumented = [n for n in names if not (docs[n].signatures and docs[n].text.strip() and docs[n].example)]
    assert undocumented == []
    for name, doc in docs.items():
        assert doc.name == name
        assert all(s.startswith(f"({name}") for s in doc.signatures), doc.signatures
    kinds = {docs[n].kind for n in ("if", "map", "take", "defatom", "pmap", "refine", "get-context")}
    assert kinds == {"special form", "primitive", "procedure"}


@pytest.mark.parametrize("name", [name for name, doc in STARTUP_DOCS.items() if doc.example])
def test_every_example_gives_its_value(name: str, workspace: Path) -> None:
    """Each example runs in a fresh Runtime; each expression's printed value is the one given."""
    runtime = fresh(workspace)
    example = STARTUP_DOCS[name].example
    assert example is not None
    for code, expected in example_steps(example):
        value = runtime.run_source(code, f"<example of {name}>")
        if expected:
            assert to_repr(value) == expected, code


def test_a_docstring_splits_into_text_and_example() -> None:
    text, example = parse_doc(
        """Fold from the left.

        Calls (f acc x)
        for each x.

        (reduce + 0 (list 1 2))
        ;; => 3
        (reduce +
                (list 1 2))
        ;=> 3
        """
    )
    assert text == "Fold from the left.\n\nCalls (f acc x) for each x."
    assert example == "(reduce + 0 (list 1 2))\n;; => 3\n(reduce +\n        (list 1 2))\n;; => 3"
    assert example_steps(example) == [
        ("(reduce + 0 (list 1 2))", "3"),
        ("(reduce +\n        (list 1 2))", "3"),
    ]
    assert parse_doc("Only a summary.") == ("Only a summary.", None)


def test_render_shows_name_kind_signatures_text_and_example() -> None:
    doc = Doc("take", "procedure", ("(take n xs)",), "The first n elements.", "(take 1 '(1 2))\n;; => (1)")
    assert render_doc(doc).splitlines() == [
        "take (procedure)",
        "  (take n xs)",
        "",
        "The first n elements.",
        "",
        "Example:",
        "  (take 1 '(1 2))",
        "  ;; => (1)",
    ]


def test_a_library_doc_comment_gives_text_example_and_signature() -> None:
    docs = STARTUP_DOCS
    assert docs["take"].signatures == ("(take n xs)",)
    assert docs["refine"].signatures[0].startswith("(refine :director")
    assert "(refine-check role f)" in docs["refine-check"].signatures


def test_help_prints_what_render_doc_gives_for_a_bare_name_a_string_or_a_quoted_symbol(
    runtime: Runtime,
) -> None:
    expected = render_doc(runtime.docs()["map"]) + "\n"
    for form in ("(help map)", '(help "map")', "(help 'map)"):
        runtime.out.truncate(0)
        runtime.out.seek(0)
        assert runtime.run_source(form) is None
        assert runtime.out.getvalue() == expected
    runtime.out.truncate(0)
    runtime.out.seek(0)
    runtime.run_source("(help if) (help refine)")
    assert runtime.out.getvalue() == "\n".join(render_doc(runtime.docs()[n]) for n in ("if", "refine")) + "\n"


def test_help_of_a_task_a_defatom_and_a_procedure_the_program_defined(runtime: Runtime) -> None:
    runtime.run_source(
        '(defatom greet (params name (times int)) (instructions "Hi {{name}}") (model "mock/m"))'
        "(define (twice f &optional (n 2) &key verbose) f)"
        "(help greet) (help twice)"
    )
    out = runtime.out.getvalue()
    assert "greet (template)\n  (greet :name any :times integer)\n" in out
    assert "Model: mock/m" in out and "Output: text" in out
    assert "twice (procedure)\n  (twice f &optional (n 2) &key verbose)\n" in out


def test_help_of_a_redefined_library_name_describes_the_new_definition(runtime: Runtime) -> None:
    runtime.run_source("(define (take a b c) a) (help take)")
    assert "(take a b c)" in runtime.out.getvalue()
    assert "take (procedure)" in runtime.out.getvalue()


def test_help_errors(runtime: Runtime) -> None:
    with pytest.raises(NameError_, match=r"help: no documentation for 'mpa'; did you mean .*'map'"):
        runtime.run_source("(help mpa)")
    with pytest.raises(NameError_, match="no documentation for 'x'"):
        runtime.run_source("(define x 1) (help x)")
    for bad in ("(help 1)", "(help a b)", "(help (f))"):
        with pytest.raises(FormError, match=r"help: expected \(help name\)"):
            runtime.run_source(bad)


def test_help_with_no_name_says_how(runtime: Runtime) -> None:
    runtime.run_source("(help)")
    assert "(help NAME)" in runtime.out.getvalue()


def test_help_in_the_core_alone_documents_the_core() -> None:
    core = Interpreter()
    docs = core.documentation.all()
    assert "map" in docs and "take" in docs and "defatom" not in docs and "refine" not in docs


def test_a_primitive_defined_from_python_is_documented_by_its_docstring(runtime: Runtime) -> None:
    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    runtime.define("double", Primitive("double", double, 1, 1, "Twice x.", ("(double x)",)))
    assert runtime.docs()["double"] == Doc("double", "primitive", ("(double x)",), "Twice x.", None)


# `sexp doc` ------------------------------------------------------------------------------------

TEMPLATE = """<task name="write-description" type="atomic">
  <description>Write a product description</description>
  <model>mock/writer</model>
  <instructions>Describe {{product}} in {{words}} words.</instructions>
  <inputs>
    <input name="product" type="string">what is sold</input>
    <input name="words" type="integer" required="false" default="50">how long</input>
  </inputs>
  <output_format type="json" schema="object"/>
</task>
"""


def test_sexp_doc_lists_every_documented_name_one_per_line(cli: Cli, workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "describe.xml").write_text(TEMPLATE, encoding="utf-8")
    code, out, err = cli("doc")
    assert (code, err) == (0, "")
    names = out.splitlines()
    assert names == sorted(names)
    expected = set(fresh(workspace).docs()) | {"write-description", "associative_matching"}
    assert set(names) == expected
    code, out, _ = cli("doc", "--long")
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert set(rows) == expected
    summary = "(f x) for each element; with several lists, (f x y ...) up to the shortest"
    assert rows["map"].split(None, 2)[1:] == ["primitive", summary]
    assert "template" in rows["write-description"] and "special form" in rows["if"]


def test_sexp_doc_name_prints_what_help_prints(cli: Cli) -> None:
    for name in ("map", "refine", "if", "take"):
        code, out, err = cli("doc", name)
        assert (code, err) == (0, "")
        assert out == render_doc(STARTUP_DOCS[name]) + "\n"
        assert cli("eval", f"(help {name})")[1] == out + "nil\n"


def test_sexp_doc_of_a_template_shows_its_description_inputs_model_output(cli: Cli, workspace: Path) -> None:
    (workspace / "tasks").mkdir()
    (workspace / "tasks" / "describe.xml").write_text(TEMPLATE, encoding="utf-8")
    code, out, err = cli("doc", "write-description")
    assert (code, err) == (0, "")
    assert out.splitlines()[:10] == [
        "write-description (template)",
        "  (write-description :product string [:words integer])",
        "",
        "Write a product description",
        "",
        "Inputs:",
        "  product (string): what is sold",
        "  words (integer, optional, default '50'): how long",
        "",
        "Model: mock/writer",
    ]
    assert "Output: json, schema object" in out


def test_sexp_doc_of_an_unknown_name_exits_1_naming_close_ones(cli: Cli) -> None:
    code, out, err = cli("doc", "string-apend")
    assert (code, out) == (1, "")
    assert err.startswith("error: no documentation for 'string-apend'; did you mean 'string-append'")
    assert err.count("\n") == 1
