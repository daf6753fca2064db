"""The user documentation (docs/, built into a site by mkdocs): every code example in it runs,
the references cover everything they must, and the site builds with `mkdocs build --strict`.

How a page's code blocks are run (docs/README.md says the same for writers). Each page runs in
a fresh directory of its own, its blocks in page order:

- a block with a title (```xml title="tasks/summarize.xml"```) is a file: it is written there,
  relative to the directory the page's commands are in at that point;
- a ```scheme block is a golden test, in the format of tests/golden (`;=> value`, `;!! error`,
  `;>> stdout line`, `;2> stderr line` after the forms they check); a page's scheme blocks run
  in one Runtime, in order, like a REPL session;
- a ```console block holds commands (`$ ` lines; a line ending in `\\` goes on) each followed by
  what it prints, stdout and stderr together as a terminal shows them. They run with bash, the
  checkout's `sexp` (and `python`) first on PATH, no provider key and no network model. In the
  expected output `...` alone on a line stands for any lines, `...` inside a line for any text;
  the `run: ...` lines `sexp run` writes on stderr are compared only where a page shows them;
  a run id (12 hex digits) stands for the real one, which later commands and outputs of the
  page then use in its place. `cd` carries over to the page's next commands;
- a ```sh block holds commands whose output is not shown: each must exit 0;
- ```text blocks are output or prose, shown as they are;
- any other block, or one that cannot run here (it needs the network or a real model), is
  preceded by `<!-- docs-test: skip REASON -->`, and is shown, not run.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest
from conftest import scaled
from test_golden import Case, parse_golden

from sexp_tasks.config import TOML_KEYS, Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.lang.deepstack import run_with_deep_stack
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.runtime import Runtime

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(path for path in DOCS.rglob("*.md") if path.name != "README.md" and "hooks" not in path.parts)
XSD = ROOT / "sexp_tasks" / "schemas" / "task.xsd"
HEX_ID = re.compile(r"\b[0-9a-f]{12}\b")
COMMAND_TIMEOUT = 300


# Reading a page's code blocks -------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<language>[\w+-]*)(?P<info>[^\n]*)$")
_TITLE = re.compile(r'title="([^"]*)"')
_SKIP = re.compile(r"^\s*<!-- docs-test: skip(?P<reason>[^>]*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # the line of its opening fence
    language: str
    text: str
    title: str | None = None
    skip: str | None = None  # the reason it is not run, when the page gives one

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"


def shown(path: Path) -> str:
    """A page's path as messages give it: from the checkout's root (a test's sample: its name)."""
    return str(path.relative_to(ROOT)) if ROOT in path.parents else path.name


def read_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, in order (indented ones, in admonitions, too)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    skip: str | None = None
    number = 0
    while number < len(lines):
        line = lines[number]
        opening = _FENCE.match(line)
        marker = _SKIP.match(line)
        if marker:
            skip = marker.group("reason").strip()
            if not skip:
                raise AssertionError(f"{shown(page)}:{number + 1}: a skip needs a reason")
        elif opening:
            indent, fence = opening.group("indent"), opening.group("fence")
            start = number + 1  # the opening fence's line, counting from 1
            body: list[str] = []
            number += 1
            while number < len(lines) and not re.match(
                rf"^{re.escape(indent)}{fence[0]}{{{len(fence)},}}\s*$", lines[number]
            ):
                body.append(lines[number].removeprefix(indent))
                number += 1
            if number == len(lines):
                raise AssertionError(f"{shown(page)}:{start}: an unclosed code block")
            title = _TITLE.search(opening.group("info"))
            text = "\n".join(body) + "\n"
            language = opening.group("language")
            blocks.append(Block(page, start, language, text, title.group(1) if title else None, skip))
            skip = None
        elif line.strip() and skip is not None:
            raise AssertionError(f"{shown(page)}:{number + 1}: a skip marker not before a block")
        number += 1
    return blocks


def kind(block: Block) -> str:
    """What the test does with a block: file, golden, console, commands, text or skip."""
    if block.skip is not None:
        return "skip"
    if block.title is not None:
        return "file"
    kinds = {"scheme": "golden", "console": "console", "sh": "commands", "text": "text"}
    if block.language not in kinds:
        raise AssertionError(
            f'{block.where}: a ```{block.language} block must be a file (title="PATH"), a scheme,'
            " console, sh or text block, or say why it is not run (<!-- docs-test: skip REASON -->)"
        )
    return kinds[block.language]


# Commands and what they print -------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    line: int
    command: str
    expected: list[str]


def console_commands(block: Block) -> list[Command]:
    """The `$ ` commands of a console block, each with the lines it is shown to print."""
    commands: list[Command] = []
    lines = block.text.rstrip("\n").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            raise AssertionError(f"{block.where}: output before any `$ ` command: {line!r}")
        start = block.line + 1 + index
        command = line[2:]
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command = command + "\n" + lines[index]  # backslash-newline: bash goes on, as a shell would
        index += 1
        expected: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            expected.append(lines[index])
            index += 1
        commands.append(Command(start, command, expected))
    return commands


def shell_commands(block: Block) -> list[Command]:
    """The commands of an sh block (comments and blank lines left out)."""
    commands: list[Command] = []
    pending = ""
    for offset, line in enumerate(block.text.split("\n")):
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line
        if pending.endswith("\\"):
            pending += "\n"  # backslash-newline: bash goes on with the next line
            continue
        commands.append(Command(block.line + 1 + offset, pending, []))
        pending = ""
    return commands


def expected_pattern(expected: list[str], ids: dict[str, str]) -> re.Pattern[str]:
    """A pattern for a command's whole output: `...` lines and inline `...` are wildcards, run ids
    already met stand for their real ones and new ones are captured; unshown `run:` lines may
    come anywhere."""
    optional_run_lines = r"(?:run: [^\n]*\n)*?"
    groups: dict[str, str] = {}
    parts: list[str] = []
    for line in expected:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pattern = ""
        for piece in re.split(r"(\.\.\.|\b[0-9a-f]{12}\b)", line):
            if piece == "...":
                pattern += r"[^\n]*?"
            elif HEX_ID.fullmatch(piece):
                if piece in ids:
                    pattern += re.escape(ids[piece])
                elif piece in groups:
                    pattern += f"(?P={groups[piece]})"
                else:
                    groups[piece] = f"id_{piece}"
                    pattern += f"(?P<id_{piece}>[0-9a-f]{{12}})"
            else:
                pattern += re.escape(piece)
        parts.append(optional_run_lines + pattern + r"\n")
    return re.compile("".join(parts) + r"(?:run: [^\n]*\n)*", re.DOTALL)


@dataclass
class PageRun:
    """A page's directory, its commands' environment and working directory, and its run ids."""

    root: Path
    env: dict[str, str]
    cwd: Path
    ids: dict[str, str] = field(default_factory=dict)
    runtime: Runtime | None = None
    out: io.StringIO = field(default_factory=io.StringIO)
    err: io.StringIO = field(default_factory=io.StringIO)

    def shell(self, command: str) -> tuple[int, str]:
        """Run command with bash in the current directory; its status and output (both streams)."""
        for placeholder, real in self.ids.items():
            command = re.sub(rf"\b{placeholder}\b", real, command)
        after = self.root / ".docs-test-cwd"
        script = 'cd "$1" || exit 99; eval "$2"; status=$?; pwd > "$3"; exit $status'
        completed = subprocess.run(
            ["bash", "-c", script, "bash", str(self.cwd), command, str(after)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            env=self.env,
            timeout=scaled(COMMAND_TIMEOUT),
        )
        if after.is_file():
            self.cwd = Path(after.read_text(encoding="utf-8").strip())
            after.unlink()
        return completed.returncode, completed.stdout


def page_environment(root: Path) -> dict[str, str]:
    """What a reader's shell would have after installing the checkout: `sexp` and `python` on
    PATH, no provider key (the isolated fixture took them out), output as a terminal shows it."""
    bin_dir = root.parent / "docs-bin"
    bin_dir.mkdir(exist_ok=True)
    for name, target in (("sexp", f'"{sys.executable}" -m sexp_tasks'), ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = dict(os.environ)
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",  # stdout and stderr reach the pipe in the order they were written
        PYTHONIOENCODING="utf-8",
        COLUMNS="100",
    )
    env.pop("PYTHONSTARTUP", None)
    return env


def run_console(run: PageRun, block: Block) -> None:
    for command in console_commands(block):
        status, output = run.shell(command.command)
        if output and not output.endswith("\n"):
            output += "\n"  # as the page shows it: a last line without a newline is a line
        pattern = expected_pattern(command.expected, run.ids)
        found = pattern.fullmatch(output)
        if found is None:
            expected = "\n".join(command.expected)
            pytest.fail(
                f"{block.page.relative_to(ROOT)}:{command.line}: `{command.command}` (exit {status}) printed"
                f"\n---\n{output}---\nbut the page shows\n---\n{expected}\n---"
            )
        for name, real in found.groupdict().items():
            run.ids[name.removeprefix("id_")] = real


def run_commands(run: PageRun, block: Block) -> None:
    for command in shell_commands(block):
        status, output = run.shell(command.command)
        assert status == 0, (
            f"{block.page.relative_to(ROOT)}:{command.line}: `{command.command}` exited {status}:\n{output}"
        )


def run_golden(run: PageRun, block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block's golden cases, in the page's Runtime (made at its first scheme block)."""
    monkeypatch.chdir(run.cwd)
    if run.runtime is None:
        run.runtime = Runtime(Settings(workspace=str(run.cwd)), out=run.out, err=run.err)
    source = tmp_path / f"{block.page.stem}.sexp"
    source.write_text("\n" * block.line + block.text, encoding="utf-8")  # errors name the page's lines
    for case in parse_golden(source):
        check_case(run, case, block)


def check_case(run: PageRun, case: Case, block: Block) -> None:
    assert run.runtime is not None
    where = f"{block.page.relative_to(ROOT)}:{case.line}"
    out_start, err_start = len(run.out.getvalue()), len(run.err.getvalue())
    value, error = None, None
    try:
        value = run_with_deep_stack(lambda: run.runtime.run_source(case.code, block.page.name))  # type: ignore[union-attr]
    except SexpError as raised:
        error = f"{raised.span}: error: {raised.message}" if raised.span else f"error: {raised.message}"
    if case.error is not None:
        assert error is not None and case.error in error, (
            f"{where}: expected the error {case.error!r}, got {error}"
        )
    else:
        assert error is None, f"{where}: {error}"
        if case.value is not None:
            assert to_repr(value) == case.value, f"{where}: expected {case.value}, got {to_repr(value)}"
    assert run.out.getvalue()[out_start:] == case.stdout, f"{where}: what it printed"
    assert run.err.getvalue()[err_start:] == case.stderr, f"{where}: what it wrote to stderr"


def write_file(run: PageRun, block: Block) -> None:
    assert block.title is not None
    path = run.cwd / block.title
    assert run.root in path.resolve().parents, f"{block.where}: {block.title} is outside the page's directory"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.text, encoding="utf-8")


def _page_id(page: Path) -> str:
    return str(page.relative_to(DOCS))


def _runs_commands(page: Path) -> bool:
    """Whether a page runs commands (its test is slow); a page that breaks the rules counts as
    one, so that its own test, not the collection, says what is wrong."""
    try:
        return any(kind(block) in ("console", "commands") for block in read_blocks(page))
    except AssertionError:
        return True


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(page, id=_page_id(page), marks=[pytest.mark.slow] if _runs_commands(page) else [])
        for page in PAGES
    ],
)
def test_every_example_on_the_page_runs(
    page: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = PageRun(workspace, page_environment(workspace), workspace)
    actions = {
        "file": write_file,
        "console": run_console,
        "commands": run_commands,
        "golden": lambda run, block: run_golden(run, block, tmp_path, monkeypatch),
    }
    for block in read_blocks(page):
        action = actions.get(kind(block))
        if action is not None:
            action(run, block)


def test_every_program_a_page_writes_is_run_by_it() -> None:
    """A .sexp file a page shows is run (or checked) by a later command of that page."""
    unrun = []
    for page in PAGES:
        blocks = read_blocks(page)
        for index, block in enumerate(blocks):
            if kind(block) != "file" or not block.title.endswith(".sexp"):  # type: ignore[union-attr]
                continue
            name = Path(block.title).name  # type: ignore[arg-type]
            later = [b.text for b in blocks[index + 1 :] if kind(b) in ("console", "commands")]
            if not any(name in text for text in later):
                unrun.append(block.where)
    assert unrun == []


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    assert [_page_id(page) for page in PAGES if _page_id(page) not in nav] == []


# The test's own rules -------------------------------------------------------------------------


def test_blocks_are_read_with_their_titles_skips_and_indentation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '# A page\n\n```xml title="tasks/t.xml"\n<task/>\n```\n\n'
        "<!-- docs-test: skip needs a key -->\n\n```console\n$ sexp run real.sexp\n```\n\n"
        "!!! note\n\n    ```scheme\n    (+ 1 2)\n    ;=> 3\n    ```\n",
        encoding="utf-8",
    )
    blocks = [(b.language, b.title, b.skip, b.text, b.line) for b in read_blocks(page)]
    assert blocks == [
        ("xml", "tasks/t.xml", None, "<task/>\n", 3),
        ("console", None, "needs a key", "$ sexp run real.sexp\n", 9),
        ("scheme", None, None, "(+ 1 2)\n;=> 3\n", 15),
    ]


def test_expected_output_wildcards_ids_and_run_lines() -> None:
    ids: dict[str, str] = {}
    pattern = expected_pattern(["5d41b2c0a9e3  completed ...", "...", "done"], ids)
    found = pattern.fullmatch("run: 0123456789ab\n0123456789ab  completed  1 step\nmore\nlines\ndone\n")
    assert found is not None and found.group("id_5d41b2c0a9e3") == "0123456789ab"
    ids["5d41b2c0a9e3"] = "0123456789ab"
    assert expected_pattern(["trace 5d41b2c0a9e3"], ids).fullmatch("trace 0123456789ab\n")
    assert not expected_pattern(["trace 5d41b2c0a9e3"], ids).fullmatch("trace 999999999999\n")
    assert not expected_pattern(["a"], {}).fullmatch("a\nb\n")  # nothing unshown but run: lines
    assert expected_pattern(["run: 5d41b2c0a9e3", "hi"], {}).fullmatch("run: 0123456789ab\nhi\n")


def test_a_block_that_cannot_run_must_say_why(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1)\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="say why it is not run"):
        [kind(block) for block in read_blocks(page)]


# What the reference pages must cover -------------------------------------------------------------


def xsd_names() -> tuple[set[str], set[str]]:
    """The element names and attribute names the template schema declares."""
    ns = "{http://www.w3.org/2001/XMLSchema}"
    tree = ElementTree.parse(XSD)
    elements = {e.get("name") for e in tree.iter(f"{ns}element")}
    attributes = {a.get("name") for a in tree.iter(f"{ns}attribute")}
    return {e for e in elements if e}, {a for a in attributes if a}


def test_the_template_reference_shows_every_element_and_attribute_of_the_schema() -> None:
    page = (DOCS / "reference" / "templates.md").read_text(encoding="utf-8")
    elements, attributes = xsd_names()
    assert len(elements) > 20 and {"name", "type", "schema"} <= attributes
    assert sorted(e for e in elements if f"<{e}" not in page) == []
    assert sorted(a for a in attributes if f"{a}=" not in page) == []


def test_the_configuration_page_names_every_setting_and_environment_variable() -> None:
    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    variables = set()
    for source in (ROOT / "sexp_tasks").rglob("*.py"):
        variables |= set(re.findall(r"\bSEXP_[A-Z_]+\b", source.read_text(encoding="utf-8")))
    assert {"SEXP_MODEL", "SEXP_API_BASE", "SEXP_TEMPLATES"} <= variables
    assert sorted(v for v in variables if f"`{v}`" not in page) == []
    assert sorted(key for key in TOML_KEYS if f"`{key}`" not in page) == []


def test_no_page_and_not_the_readme_cites_the_spec() -> None:
    """A user's checkout has no SPEC: the pages say what they mean instead."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in [*PAGES, ROOT / "README.md"]}
    assert sorted(name for name, text in texts.items() if "SPEC" in text) == []


# The generated pages ---------------------------------------------------------------------------


def hook() -> ModuleType:
    """docs/hooks/reference.py, the mkdocs hook that generates the reference pages."""
    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class FakeDoc:
    """The shape of sexp_tasks' Doc, for testing the generator on its own."""

    name: str
    kind: str
    signatures: tuple[str, ...]
    text: str
    example: str | None = None


FAKE_DOCS = {
    "if": FakeDoc("if", "special form", ("(if test then [else])",), "The `then` value when test is true."),
    "<=": FakeDoc(
        "<=", "primitive", ("(<= a b ...)",), "Whether each <= the next & *so* on.", "(<= 1 2)\n;; => true"
    ),
    "*loop-config*": FakeDoc("*loop-config*", "primitive", (), "A [loop]'s settings."),
    "take": FakeDoc(
        "take", "procedure", ("(take n xs)",), "The first n elements.", "(take 1 '(1 2))\n;; => (1)"
    ),
    "summarize": FakeDoc(
        "summarize",
        "template",
        ("(summarize :text string [:max_words integer])",),
        "Summarise <text>.\n\nInputs:\n  text (string): the text\n  max_words (integer, optional)"
        "\n\nModel: mock/x\nOutput: json",
    ),
}


def test_the_language_reference_groups_names_by_kind_with_their_docs() -> None:
    page = hook().language_reference(FAKE_DOCS)
    headings = re.findall(r"^##+ (.*)$", page, re.MULTILINE)
    assert headings == [
        "Special forms { #special-forms }",
        "`if` { #if }",
        "Primitives { #primitives }",
        "`*loop-config*` { #star-loop-config-star }",
        "`<=` { #lt-eq }",
        "Library procedures { #library-procedures }",
        "`take` { #take }",
        "Task templates { #task-templates }",
        "`summarize` { #summarize }",
    ]
    assert "[`<=`](#lt-eq)" in page and "```scheme\n(<= a b ...)\n```" in page
    assert "```scheme\n(<= 1 2)\n;; => true\n```" in page
    # Text shows as written: no HTML, emphasis or links made of it; code spans kept.
    assert "Whether each &lt;= the next &amp; \\*so\\* on." in page
    assert "A \\[loop\\]'s settings." in page
    # Paragraphs stay paragraphs, a paragraph's lines stay lines, indented lines are a list.
    assert (
        "Summarise &lt;text&gt;.\n\nInputs:\n\n- text (string): the text\n- max\\_words (integer, optional)"
        "\n\nModel: mock/x  \nOutput: json\n"
    ) in page
    assert "The `then` value when test is true." in page


def test_the_language_reference_names_what_is_missing() -> None:
    reference = hook()
    with pytest.raises(reference.ReferenceUnavailable, match="'x' has the kind 'macro'"):
        reference.language_reference({"x": FakeDoc("x", "macro", (), "")})
    with pytest.raises(reference.ReferenceUnavailable, match="documents no names"):
        reference.language_reference({})


def test_a_checkout_without_the_documentation_api_is_a_clear_build_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = hook()
    monkeypatch.delattr(Runtime, "docs", raising=False)
    with pytest.raises(reference.ReferenceUnavailable, match=r"Runtime.docs\(\).*has no docs\(\) method"):
        reference.generate("# Language\n<!-- generated: language -->\n", "reference/language.md")
    with pytest.raises(reference.ReferenceUnavailable, match="no generator named 'nothing'"):
        reference.generate("<!-- generated: nothing -->\n", "page.md")


def test_the_language_reference_documents_every_name_sexp_doc_lists() -> None:
    if not hasattr(Runtime, "docs"):
        pytest.skip("this checkout has no Runtime.docs() yet: the language reference cannot be generated")
    docs = Runtime(Settings(), load_templates=False).docs()
    page = hook().generate("<!-- generated: language -->\n", "reference/language.md")
    assert sorted(name for name in docs if f"### `{name}` {{ #" not in page) == []
    assert "SPEC" not in page  # a user's checkout has no SPEC to look things up in


def test_the_cli_reference_shows_every_command_and_option() -> None:
    from sexp_tasks.cli.main import build_parser

    page = hook().generate("<!-- generated: cli -->\n", "reference/cli.md")
    import argparse

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        yield path
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, (*path, name))
            elif action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
                for option in action.option_strings:
                    assert f"`{option}" in page or f", {option}" in page, (path, option)

    commands = list(walk(build_parser(), ("sexp",)))
    assert {("sexp", "run"), ("sexp", "tasks", "show"), ("sexp", "config")} <= set(commands)
    assert [c for c in commands if f"## `{' '.join(c)}`" not in page] == []
    assert "usage: sexp run [-h]" in page and "&lt;model&gt;" in page
    assert "SPEC" not in page


# The site builds -----------------------------------------------------------------------------------


def test_the_site_builds_with_strict_checks(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed here (pip install -e '.[docs]' installs it)")
    if not hasattr(Runtime, "docs"):
        pytest.skip("this checkout has no Runtime.docs() yet: the language reference cannot be generated")
    site = tmp_path / "site"
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=scaled(300),
    )
    assert completed.returncode == 0, completed.stderr
    built = {str(path.relative_to(site)) for path in site.rglob("index.html")}
    for page in PAGES:  # each page where the site's links expect it: tutorial.md at tutorial/
        name = _page_id(page).removesuffix(".md").removesuffix("index")
        assert str(Path(name) / "index.html") in built, page
    language = (site / "reference" / "language" / "index.html").read_text(encoding="utf-8")
    assert 'id="refine"' in language and 'id="special-forms"' in language
