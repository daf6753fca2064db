"""The Memory System (SPEC §5): `sexp index`, incremental indexing, ranking, get-context, refinement."""

from __future__ import annotations

import builtins
import io
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from conftest import run_python, scaled, spawn_sexp_pty
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from sexp_tasks.config import Settings
from sexp_tasks.memory import MemorySystem, RelevantFile, index_path, indexer, relevant_files
from sexp_tasks.memory.extract import describe
from sexp_tasks.memory.ranking import Document, rank, terms
from sexp_tasks.memory.relevant import read_ranking
from sexp_tasks.runs.store import Store
from sexp_tasks.runtime import Runtime

ROOT = Path(__file__).resolve().parent.parent

PARSER = '''"""Parse source text into a syntax tree of nodes with spans."""

import re


class Parser:
    """Recursive descent."""

    def parse_expression(self, text):
        return tokenize_source(text)


def tokenize_source(text):
    return re.findall(r"\\S+", text)
'''

README = """# Widget shop

[![build](https://example.com/badge.svg)](https://example.com)

A small shop that sells widgets and gadgets online.
It has a cart.

## Installing

Run the installer.

Payments
--------
"""

PAST = time.time() - 100  # files older than the racy window are trusted when unchanged


def make(root: Path, name: str, content: str | bytes, when: float = PAST) -> Path:
    """Write a file under root, with its mtime in the past unless told otherwise."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    os.utime(path, (when, when))
    return path


@pytest.fixture
def tree(workspace: Path) -> Path:
    """A project: text files to index and everything the indexer must leave out."""
    make(workspace, "README.md", README)
    make(workspace, "src/parser.py", PARSER)
    make(workspace, "src/cart.js", "// Shopping cart totals\nexport function cartTotal(items) { return 0 }\n")
    make(workspace, "lib/util.sexp", ";; List helpers\n(define (take-while pred xs) xs)\n")
    make(workspace, "image.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    make(workspace, "blob", b"text\0with a NUL byte")
    make(workspace, "huge.txt", "x" * (indexer.MAX_FILE_BYTES + 1))
    for skipped in [".git/config", ".sexp/notes.txt", ".venv/lib/site.py", "node_modules/left/pad.js"]:
        make(workspace, skipped, "parser parse parsing\n")
    make(workspace, "src/__pycache__/parser.cpython-312.pyc", "parser\n")
    make(workspace, "env/pyvenv.cfg", "home = /usr\n")
    make(workspace, "env/lib/mod.py", "parser\n")
    return workspace


def build(workspace: Path, target: Path | None = None, **options: Any) -> indexer.IndexReport:
    store = Store(workspace / ".sexp" / "store.db")
    try:
        return index_path(store, workspace, target or workspace, **options)
    finally:
        store.close()


def rows(workspace: Path) -> dict[str, dict[str, Any]]:
    store = Store(workspace / ".sexp" / "store.db")
    try:
        return {row["path"]: row for row in store.query("SELECT * FROM files")}
    finally:
        store.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the indexer reads, in order."""
    seen: list[str] = []
    original = indexer.read_file

    def counting(path: Path) -> bytes:
        seen.append(Path(path).name)
        return original(path)

    monkeypatch.setattr(indexer, "read_file", counting)
    return seen


# Indexing ----------------------------------------------------------------------------------------


def test_index_holds_text_files_only_with_their_metadata(tree: Path) -> None:
    report = build(tree)
    assert (report.files, report.read, report.unchanged, report.removed) == (4, 4, 0, 0)
    index = rows(tree)
    assert sorted(index) == ["README.md", "lib/util.sexp", "src/cart.js", "src/parser.py"]
    parser = index["src/parser.py"]
    assert parser["summary"] == "Parse source text into a syntax tree of nodes with spans."
    assert json.loads(parser["headings"]) == [
        "class Parser",
        "def Parser.parse_expression",
        "def tokenize_source",
    ]
    assert "tokenize_source" in json.loads(parser["identifiers"])
    assert parser["size"] == len(PARSER.encode()) and parser["last_commit"] is None
    readme = index["README.md"]
    assert readme["summary"] == "A small shop that sells widgets and gadgets online. It has a cart."
    assert json.loads(readme["headings"]) == ["Widget shop", "Installing", "Payments"]
    assert index["src/cart.js"]["summary"] == "Shopping cart totals"
    assert json.loads(index["src/cart.js"]["headings"]) == ["function cartTotal"]
    assert json.loads(index["lib/util.sexp"]["headings"]) == ["take-while"]


def test_unchanged_files_are_not_read_again(tree: Path, reads: list[str]) -> None:
    build(tree)
    assert sorted(reads) == ["README.md", "blob", "cart.js", "parser.py", "util.sexp"]
    reads.clear()
    report = build(tree)
    assert reads == ["blob"]  # never indexed: a binary file without a binary suffix is sniffed each time
    assert (report.files, report.read, report.unchanged, report.removed) == (4, 0, 4, 0)


def test_an_unreadable_unchanged_file_keeps_its_entry(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)

    def refuse(path: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(indexer, "read_file", refuse)  # as if every file were unreadable now
    assert build(tree).unchanged == 4
    assert len(rows(tree)) == 4


def test_changed_files_are_read_again_and_deleted_ones_removed(tree: Path, reads: list[str]) -> None:
    build(tree)
    reads.clear()
    make(tree, "src/parser.py", PARSER + "\ndef evaluate_tree(t):\n    return t\n")  # new size
    same_size = (tree / "src/cart.js").read_text().replace("totals", "TOTALS")
    make(tree, "src/cart.js", same_size, when=PAST + 10)  # same size, new mtime
    (tree / "README.md").unlink()
    report = build(tree)
    assert sorted(reads) == ["blob", "cart.js", "parser.py"]
    assert (report.files, report.read, report.unchanged, report.removed) == (3, 2, 1, 1)
    index = rows(tree)
    assert "README.md" not in index
    assert "def evaluate_tree" in json.loads(index["src/parser.py"]["headings"])
    assert index["src/cart.js"]["summary"] == "Shopping cart TOTALS"


def test_a_file_modified_just_before_it_was_read_is_read_again(workspace: Path, reads: list[str]) -> None:
    make(workspace, "fresh.txt", "just written", when=time.time())
    build(workspace)
    build(workspace)  # its mtime could hide a change made in the same clock tick
    assert reads == ["fresh.txt", "fresh.txt"]


def test_files_that_become_binary_or_huge_leave_the_index(tree: Path) -> None:
    build(tree)
    make(tree, "src/cart.js", b"\0binary now")
    make(tree, "lib/util.sexp", "y" * (indexer.MAX_FILE_BYTES + 10))
    report = build(tree)
    assert report.removed == 2 and sorted(rows(tree)) == ["README.md", "src/parser.py"]


def test_indexing_a_subdirectory_touches_only_its_entries(tree: Path) -> None:
    build(tree)
    (tree / "src" / "cart.js").unlink()
    (tree / "README.md").unlink()
    report = build(tree, tree / "src")
    assert (report.files, report.removed) == (1, 1)
    assert sorted(rows(tree)) == ["README.md", "lib/util.sexp", "src/parser.py"]  # README: not in scope
    report = build(tree, tree / "lib" / "util.sexp")
    assert (report.files, report.unchanged) == (1, 1)


def test_unreadable_changed_files_are_warned_about_and_skipped(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(indexer, "read_file", refuse)
    warnings: list[str] = []
    report = build(tree, warn=warnings.append)
    assert report.files == 0 and report.skipped >= 4
    assert "index: cannot read 'src/parser.py': Permission denied" in warnings


def git(workspace: Path, *args: str) -> str:
    if args[0] == "init":
        shutil.rmtree(workspace / ".git")  # the tree's stand-in .git directory
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_in_a_git_repository_files_get_their_last_commit_with_one_log_call(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(tree, ".gitignore", "ignored/\n")
    make(tree, "ignored/secret.txt", "not indexed")
    git(tree, "init", "-q")
    git(tree, "add", "README.md", "src/parser.py", ".gitignore")
    git(tree, "commit", "-qm", "first")
    git(tree, "add", "src/parser.py", "src/cart.js")
    make(tree, "src/parser.py", PARSER + "# more\n")
    git(tree, "add", "src/parser.py")
    git(tree, "commit", "-qm", "second")
    first = git(tree, "log", "-1", "--format=%h %cd", "--date=short", "--", "README.md")
    second = git(tree, "log", "-1", "--format=%h %cd", "--date=short", "--", "src/parser.py")
    assert first != second
    calls: list[list[str]] = []
    popen = subprocess.Popen

    def counting_popen(command: list[str], *args: Any, **kwargs: Any) -> Any:  # subprocess.run calls it too
        calls.append(command)
        return popen(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting_popen)  # in process/child_processes.py
    build(tree)
    assert [c[:2] for c in calls if c[1] == "log"] == [["git", "log"]]
    assert len(calls) == 3  # ls-files twice, log once: none per file
    index = rows(tree)
    assert "ignored/secret.txt" not in index  # git's ignore rules hold
    assert index["README.md"]["last_commit"] == first
    assert index["src/parser.py"]["last_commit"] == second
    assert index["lib/util.sexp"]["last_commit"] is None  # untracked
    git(tree, "add", "lib/util.sexp")
    git(tree, "commit", "-qm", "third")
    report = build(tree)  # a commit changes no file: the entry's commit is refreshed without reading
    assert report.read == 0
    assert rows(tree)["lib/util.sexp"]["last_commit"] == git(
        tree, "log", "-1", "--format=%h %cd", "--date=short"
    )


def test_a_subdirectory_of_a_repository_gets_commits_by_its_own_paths(tree: Path) -> None:
    git(tree, "init", "-q")
    git(tree, "add", "src")
    git(tree, "commit", "-qm", "src")
    build(tree, tree / "src")
    assert rows(tree)["src/parser.py"]["last_commit"] == git(
        tree, "log", "-1", "--format=%h %cd", "--date=short"
    )


def test_without_git_the_walk_still_indexes(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tree.parent / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert build(tree).files == 4
    assert all(row["last_commit"] is None for row in rows(tree).values())


# Metadata ----------------------------------------------------------------------------------------


def test_describe_reads_each_kind_of_file() -> None:
    markdown = describe(
        "doc.md", "# Title\n\n```\n# not a heading\n```\n\nFirst para\nline two.\n\nSecond.\n"
    )
    assert markdown.headings == ("Title",) and markdown.summary == "First para line two."
    template = describe(
        "t.xml", '<task name="summarize" type="atomic"><description>Summarise text</description></task>'
    )
    assert (template.summary, template.headings) == ("Summarise text", ("summarize",))
    script = describe(
        "run.sh", "#!/bin/sh\n# Copyright 2020 someone\n# Deploy the site to production\nset -e\n"
    )
    assert script.summary == "Deploy the site to production"
    config = describe("pyproject.toml", '[project]\ndescription = "A tool"\n[tool.ruff]\n')
    assert (config.summary, config.headings) == ("A tool", ("project", "tool.ruff"))
    broken = describe("bad.py", "# Half a program\ndef f(:\n")
    assert broken.summary == "Half a program"
    plain = describe("notes", "\n\n   Remember the milk\n")
    assert plain.summary == "Remember the milk" and plain.headings == ()
    long = describe("long.md", "word " * 200)
    assert len(long.summary) <= 200 and long.summary.endswith("…")


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("a.md", '"# a" + " " * 100_000 + "b"'),
        ("a.sexp", '"\\n" * 100_000'),
        ("a.xml", '"<task " * 15_000'),
        ("a.xml", '"<description>" * 8_000'),
        ("a.xml", '"<description>a" + " " * 100_000 + "b</description>"'),
        ("a.xml", '"<!--" * 25_000'),
        ("a.toml", '"[" * 100_000'),
        ("a.toml", '"\\n" * 100_000'),
        ("a.toml", '"description = a" + " " * 100_000 + "b"'),
        ("a.yaml", '"a" + " \\n" * 50_000'),
        ("a.js", '"static\\n" * 15_000'),
        ("a.js", '"\\n" * 100_000'),
    ],
)
def test_pathological_files_are_described_at_once(path: str, text: str) -> None:
    code = f"from sexp_tasks.memory.extract import describe\ndescribe({path!r}, {text})\n"
    run_python(code, timeout=10)  # each took from seconds to hours


OLD_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$")  # the reference: cubic in a line's length


@given(st.lists(st.sampled_from(["#", " ", "\t", "a", "C#", "\u00a0", "##", "b c"]), max_size=10))
@examples(max_examples=300, deadline=None)
def test_markdown_headings_agree_with_the_heading_pattern(parts: list[str]) -> None:
    line = "".join(parts)
    heading = OLD_ATX.match(line)
    assert describe("a.md", line).headings == ((heading.group(2),) if heading else ())


# Ranking -----------------------------------------------------------------------------------------


def test_terms_split_identifiers_and_fold_plurals() -> None:
    assert terms("runScript run_script the Files") == ["run", "script", "run", "script"]
    assert terms("libraries classes") == ["library", "classe"]


def test_ranking_puts_the_obviously_relevant_file_first(tree: Path) -> None:
    build(tree)
    store = Store(tree / ".sexp" / "store.db")
    memory = MemorySystem(store, tree)
    found = memory.relevant("parse the syntax tree")
    assert found[0] == RelevantFile(
        "src/parser.py", 1.0, "Parse source text into a syntax tree of nodes with spans."
    )
    assert memory.relevant("shopping cart total")[0].path == "src/cart.js"
    assert memory.relevant("widgets for sale")[0].path == "README.md"
    assert memory.relevant("tokenize")[0].path == "src/parser.py"  # an identifier, split and matched
    assert memory.relevant("quantum chromodynamics") == []
    everything = memory.relevant("parser cart widgets helpers", limit=10)
    assert len(everything) == 4
    scores = [f.score for f in everything]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    assert len(memory.relevant("parser cart widgets helpers", limit=2)) == 2
    store.close()


def test_scores_stay_in_the_unit_interval_and_partial_matches_score_less() -> None:
    docs = [
        Document("a/reader.py", "Read text into nodes", ["def read"], ["reader"]),
        Document("b/printer.py", "Print values", ["def print"], ["printer"]),
        Document("c/other.py", "", [], []),
    ]
    ranked = rank("reader printer", docs)
    assert {d.path for _, d in ranked[:2]} == {"a/reader.py", "b/printer.py"}
    assert ranked[2][1].path == "c/other.py"
    assert all(0 <= score <= 1 for score, _ in ranked)
    assert ranked[0][0] < 1.0  # it matches only half the query
    assert ranked[-1][0] == 0
    assert rank("", docs)[0][0] == 0 and rank("x", []) == []


def test_nothing_reads_file_contents_at_query_time(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    store = Store(tree / ".sexp" / "store.db")

    def no_reading(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"read at query time: {args}")

    monkeypatch.setattr(builtins, "open", no_reading)
    monkeypatch.setattr(io, "open", no_reading)
    monkeypatch.setattr(Path, "read_text", no_reading)
    monkeypatch.setattr(Path, "read_bytes", no_reading)
    assert MemorySystem(store, tree).relevant("parser")[0].path == "src/parser.py"
    monkeypatch.undo()
    store.close()


def test_files_deleted_since_indexing_are_not_offered(tree: Path) -> None:
    build(tree)
    (tree / "src" / "parser.py").unlink()
    store = Store(tree / ".sexp" / "store.db")
    assert "src/parser.py" not in [f.path for f in MemorySystem(store, tree).relevant("parser syntax")]
    store.close()


# get-context -------------------------------------------------------------------------------------


def evaluate(runtime: Runtime, text: str) -> Any:
    return runtime.run_source(text)


def test_get_context_without_an_index_warns_and_gives_nothing(runtime: Runtime, workspace: Path) -> None:
    assert evaluate(runtime, '(get-context "parser")') == []
    assert "run `sexp index` to build one" in runtime.err.getvalue()
    assert not (workspace / ".sexp" / "store.db").exists()  # asking created no store
    Store(workspace / ".sexp" / "store.db").close()
    assert evaluate(runtime, '(get_context "parser")') == []
    assert "get-context: the file index at '.sexp/store.db' is empty" in runtime.err.getvalue()


def test_get_context_returns_paths_scores_and_summaries(tree: Path, runtime: Runtime) -> None:
    build(tree)
    found = evaluate(runtime, '(get-context "parse syntax tree" :limit 1)')
    assert found == [
        {
            "path": "src/parser.py",
            "score": 1.0,
            "summary": "Parse source text into a syntax tree of nodes with spans.",
        }
    ]
    paths = evaluate(runtime, '(map (lambda (f) (get f "path")) (get-context "shopping cart"))')
    assert paths == ["src/cart.js", "README.md"]  # the README mentions a cart too
    assert runtime.err.getvalue() == ""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("(get-context 5)", "get-context: expected a string, got 5"),
        ('(get-context "q" :limit 0)', "get-context: :limit must be a positive integer, got 0"),
        ('(get-context "q" :limit "2")', 'get-context: :limit must be a positive integer, got "2"'),
        ('(get-context "q" :top 3)', "get-context: unexpected argument :top; the only option is :limit n"),
        ('(get-context "q" :limit)', "get-context: :limit needs a value"),
    ],
)
def test_get_context_argument_errors(runtime: Runtime, call: str, message: str) -> None:
    from sexp_tasks.errors import SexpError

    with pytest.raises(SexpError, match=message.replace("(", r"\(")):
        evaluate(runtime, call)


def model_runtime(workspace: Path, replies: list[Any]) -> Runtime:
    (workspace / "replies.json").write_text(json.dumps(replies))
    settings = Settings(
        workspace=str(workspace), model="mock/x", mock_responses=str(workspace / "replies.json")
    )
    return Runtime(settings, out=io.StringIO(), err=io.StringIO())


def test_a_configured_model_refines_the_ranking_with_associative_matching(tree: Path) -> None:
    build(tree)
    answer = {"ranked": [{"path": "src/cart.js", "score": 0.9}, {"path": "lib/util.sexp"}, {"path": "nope"}]}
    runtime = model_runtime(tree, [f"<output>{json.dumps(answer)}</output>"])
    found = evaluate(runtime, '(get-context "checkout")')  # no word in common: the model associates
    assert [(f["path"], f["score"]) for f in found] == [("src/cart.js", 0.9), ("lib/util.sexp", 0.667)]
    assert found[0]["summary"] == "Shopping cart totals"
    assert runtime.err.getvalue() == ""
    assert runtime.tasks.library.get("associative_matching") is not None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("<output>not json at all</output>", "output_format_failure"),
        ('<output>{"files": []}</output>', 'the answer has no "ranked" list'),
        ('<output>{"ranked": ["elsewhere.py"]}</output>', "the answer names none of the candidate files"),
    ],
)
def test_a_junk_answer_falls_back_to_the_lexical_ranking(tree: Path, reply: str, reason: str) -> None:
    build(tree)
    runtime = model_runtime(tree, [reply])
    found = evaluate(runtime, '(get-context "parse syntax tree")')
    assert found[0]["path"] == "src/parser.py" and found[0]["score"] == 1.0
    warning = runtime.err.getvalue()
    assert warning.startswith("warning: get-context: associative matching failed (")
    assert reason in warning and warning.rstrip().endswith("using the lexical ranking")


def test_read_ranking_accepts_paths_and_orders_by_score() -> None:
    candidates = {p: RelevantFile(p, 0.1, p.upper()) for p in ["a.py", "b.py", "c.py"]}
    assert read_ranking(["./b.py", "a.py", "b.py", 7], candidates) == [
        RelevantFile("b.py", 1.0, "B.PY"),
        RelevantFile("a.py", 0.75, "A.PY"),
    ]
    found = read_ranking(
        {"ranked": [{"path": "a.py", "score": 3}, {"path": "c.py", "score": True}]}, candidates
    )
    assert found == [RelevantFile("a.py", 1.0, "A.PY"), RelevantFile("c.py", 0.5, "C.PY")]
    assert read_ranking({"ranked": []}, candidates) == []  # the model may find nothing relevant


def test_the_model_is_offered_every_file_of_a_small_index_and_its_answer_is_cut_to_the_limit(
    tree: Path,
) -> None:
    from sexp_tasks.results import TaskResult

    build(tree)
    asked: list[dict[str, Any]] = []

    class Tasks:
        def task(self, name: str) -> Any:
            assert name == "associative_matching"
            return self

        def call_named(self, named: dict[str, Any]) -> TaskResult:
            asked.append(named)
            ranked = [{"path": c["path"], "score": 0.5} for c in named["candidates"]]
            return TaskResult(content="", parsed_content={"ranked": ranked})

    settings = Settings(workspace=str(tree), model_override="mock/x")
    found = relevant_files("checkout", 2, settings, Tasks(), warn=pytest.fail)
    assert len(found) == 2 and all(f.score == 0.5 for f in found)
    offered = asked[0]["candidates"]
    assert asked[0]["query"] == "checkout"
    assert sorted(c["path"] for c in offered) == [
        "README.md",
        "lib/util.sexp",
        "src/cart.js",
        "src/parser.py",
    ]
    assert set(offered[0]) == {"path", "summary", "score"}  # metadata only, never contents


def test_relevant_files_is_the_interface_for_fresh_context(tree: Path) -> None:
    build(tree)
    warnings: list[str] = []
    settings = Settings(workspace=str(tree))
    found = relevant_files("shopping cart", 3, settings, tasks=None, warn=warnings.append)
    assert [f.path for f in found] == ["src/cart.js", "README.md"] and warnings == []


# The command line --------------------------------------------------------------------------------


def test_sexp_index_reports_what_it_did(tree: Path, cli: Any) -> None:
    assert cli("index") == (0, "indexed 4 files (4 read, 0 unchanged, 0 removed)\n", "")
    (tree / "README.md").unlink()
    assert cli("index") == (0, "indexed 3 files (0 read, 3 unchanged, 1 removed)\n", "")
    assert cli("index", "src", "-q") == (0, "", "")
    code, out, err = cli("eval", '(get (first (get-context "parse syntax tree")) "path")')
    assert (code, out, err) == (0, '"src/parser.py"\n', "")


def test_sexp_index_with_its_own_store_and_workspace(tree: Path, cli: Any) -> None:
    code, out, err = cli("index", "--store", "other.db", "--workspace", "src")
    assert (code, out, err) == (0, "indexed 2 files (2 read, 0 unchanged, 0 removed)\n", "")
    store = Store(tree / "other.db")
    assert sorted(r["path"] for r in store.query("SELECT path FROM files")) == ["cart.js", "parser.py"]
    store.close()


def test_sexp_index_usage_and_store_errors(tree: Path, cli: Any) -> None:
    code, out, err = cli("index", "missing")
    assert (code, out) == (2, "") and err == "error: index: no such file or directory 'missing'\n"
    code, out, err = cli("index", str(tree.parent))
    assert code == 2 and "is outside the workspace" in err
    code, out, err = cli("index", "--bogus")
    assert code == 2 and "unrecognized arguments: --bogus" in err
    make(tree, "corrupt.db", "this is not a database " * 100)
    code, out, err = cli("index", "--store", "corrupt.db")
    assert (code, out) == (1, "")
    assert "corrupt.db' is corrupt or not a sexp store" in err and "Traceback" not in err
    code, out, err = cli("eval", "--store", "corrupt.db", '(get-context "x")')
    assert code == 1 and "is corrupt or not a sexp store" in err and "Traceback" not in err


def test_get_context_imports_neither_litellm_nor_lxml(tree: Path, cli: Any) -> None:
    assert cli("index")[0] == 0
    code, out, err = cli("eval", '(length (get-context "parser"))', python_flags=("-X", "importtime"))
    assert (code, out) == (0, "1\n")
    assert "litellm" not in err and "lxml" not in err and "tiktoken" not in err


def spawn(args: list[str], cwd: Path) -> pexpect.spawn:
    return spawn_sexp_pty(*args, cwd=cwd)


def test_sexp_index_shows_a_bar_on_a_terminal_and_is_silent_when_piped(workspace: Path, cli: Any) -> None:
    for i in range(300):
        make(workspace, f"docs/note{i}.md", f"# Note {i}\n\nAbout topic {i}.\n")
    child = spawn(["index"], workspace)
    child.expect(r"index \[[#-]+\] \d+/300", timeout=scaled(30))
    child.expect(pexpect.EOF, timeout=scaled(60))
    child.close()
    assert child.exitstatus == 0
    summary = "\rindexed 300 files (300 read, 0 unchanged, 0 removed)\r\n"
    assert child.before.endswith(summary), repr(child.before)  # the bar erased, then the summary
    child = spawn(["index", "-q"], workspace)
    child.expect(pexpect.EOF, timeout=scaled(60))
    child.close()
    assert child.exitstatus == 0 and child.before == ""
    code, out, err = cli("index")
    assert (code, out, err) == (0, "indexed 300 files (0 read, 300 unchanged, 0 removed)\n", "")
