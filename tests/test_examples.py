"""The example workflows in examples/, run through the CLI from their cassettes the way the README
and their header comments say, in a copy of examples/ (they write files); a changed request is
refused by the replay, loudly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, scaled

ROOT = Path(__file__).resolve().parent.parent
MODEL = ("--model", "openai/gpt-4o-mini")
NO_REPLY = "has no recorded reply for this request"

# name: (the `sexp run` arguments without --replay, the cassette, a template the program calls)
EXAMPLES = {
    "release_review": (
        ("examples/release_review.sexp", "--templates", "examples/tasks"),
        "examples/release_review.cassette.jsonl",
        "examples/tasks/write_summary.xml",
    ),
    "fix_tests": (
        ("examples/fix_tests/fix_tests.sexp", "--templates", "examples/fix_tests/tasks", *MODEL),
        "examples/fix_tests/fix_tests.cassette.jsonl",
        "examples/fix_tests/tasks/propose_fix.xml",
    ),
    "summarize_dir": (
        ("examples/summarize_dir/summarize_dir.sexp", "--templates", "examples/summarize_dir/tasks", *MODEL),
        "examples/summarize_dir/summarize_dir.cassette.jsonl",
        "examples/summarize_dir/tasks/summarize_doc.xml",  # a miss inside pmap stops the run too
    ),
    "structured_extraction": (
        ("examples/structured_extraction/structured_extraction.sexp", *MODEL),  # loads its own tasks/
        "examples/structured_extraction/structured_extraction.cassette.jsonl",
        "examples/structured_extraction/tasks/extract_order.xml",
    ),
    "planner": (
        ("examples/planner/planner.sexp", "--templates", "examples/planner/tasks", *MODEL),
        "examples/planner/planner.cassette.jsonl",
        "examples/planner/tasks/outline_plan.xml",
    ),
}
# The fix_tests loop runs pytest with the Python running these tests (it has pytest).
EXTRA = {"fix_tests": ("--set-str", f"python={sys.executable}")}


@pytest.fixture
def examples(workspace: Path) -> Path:
    """A copy of examples/ in the test's directory, without anything a run left behind."""
    ignore = shutil.ignore_patterns("__pycache__", "work", ".sexp")
    return Path(shutil.copytree(ROOT / "examples", workspace / "examples", ignore=ignore))


def replay(cli: Cli, name: str, cassette: str | None = None) -> tuple[int, str, str]:
    arguments, recorded, _ = EXAMPLES[name]
    return cli("run", *arguments, *EXTRA.get(name, ()), "--replay", cassette or recorded, timeout=300)


def test_release_review_replays(cli: Cli, examples: Path) -> None:
    status, out, err = replay(cli, "release_review")
    assert (status, err) == (0, "")
    assert "5  Concurrent maps over tasks\n" in out
    assert "2  A failed task in a concurrent map is a value in its place\n" in out
    assert "Release 0.4 runs tasks concurrently" in out
    assert out.endswith('{"changes" 5 "important" 4}\n')


@pytest.mark.slow
def test_fix_tests_iterates_until_pytest_passes(cli: Cli, examples: Path) -> None:
    status, out, err = replay(cli, "fix_tests")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[:3] == [
        "test_pricing.py in examples/fix_tests/work: 4 failed, 2 passed",
        "attempt 1: 2 failed, 4 passed",
        "attempt 2: 6 passed",
    ]
    assert "The tests pass after 2 attempts. The fix, in examples/fix_tests/work/pricing.py:" in lines
    assert "+    return max(0.0, amount * (1 - percent / 100))" in lines
    fixed = (examples / "fix_tests" / "work" / "pricing.py").read_text()
    assert "amount >= FREE_SHIPPING_FROM" in fixed and "```" not in fixed
    pristine = (ROOT / "examples" / "fix_tests" / "project" / "pricing.py").read_text()
    assert (examples / "fix_tests" / "project" / "pricing.py").read_text() == pristine
    # The work copy is made afresh: a second run asks the same questions and prints the same.
    assert replay(cli, "fix_tests") == (status, out, err)


def test_summarize_dir_keeps_a_failed_summary_in_its_place(cli: Cli, examples: Path) -> None:
    status, out, err = replay(cli, "summarize_dir")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Summarised 4 of 5 documents in examples/summarize_dir/docs:"
    assert [line.split()[:2] for line in lines[1:7] if line.split()[0] in ("ok", "FAILED")] == [
        ["ok", "customer-feedback-q1.txt"],
        ["FAILED", "deploy-log-2024-04-03.txt"],
        ["ok", "incident-2024-03-14-checkout-outage.md"],
        ["ok", "platform-sync-2024-04-02.md"],
        ["ok", "rfc-012-api-rate-limits.md"],
    ]
    assert "output_format_failure" in lines[2]
    assert "the model answered: This file is a deployment log" in lines[3]
    assert "- Cap the connection pool per instance (Priya, 22 March)" in lines
    assert out.endswith('{"documents" 5 "summarised" 4 "digest" true}\n')


def test_summarize_dir_replay_does_not_depend_on_the_order_of_the_calls(cli: Cli, examples: Path) -> None:
    cassette = examples / "summarize_dir" / "summarize_dir.cassette.jsonl"
    lines = cassette.read_text().splitlines()
    assert len(lines) == 6
    (examples / "reversed.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    assert replay(cli, "summarize_dir", "examples/reversed.jsonl") == replay(cli, "summarize_dir")


def test_planner_spawns_two_subtasks_and_writes_the_plan(cli: Cli, examples: Path) -> None:
    status, out, err = replay(cli, "planner")
    assert (status, err) == (0, "")
    assert out.splitlines()[:4] == [
        'Planned "Move the team\'s CI from Jenkins to GitHub Actions within one quarter" with 2 subtasks:',
        "  COMPLETE  research-topic",
        "  COMPLETE  outline-plan",
        "",
    ]
    assert "# Plan: CI from Jenkins to GitHub Actions (by 30 June)" in out
    assert "## Done when" in out


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_changed_request_is_refused_by_the_replay(cli: Cli, examples: Path, name: str) -> None:
    template = examples.parent / EXAMPLES[name][2]
    text = template.read_text()
    assert text.count("</instructions>") == 1
    template.write_text(text.replace("</instructions>", " Be brief.</instructions>"))
    status, out, err = replay(cli, name)
    assert status == 1
    assert NO_REPLY in err and "record it again with --record" in err
    assert "Traceback" not in err


def test_a_cassette_for_another_model_is_refused(cli: Cli, examples: Path) -> None:
    arguments, cassette, _ = EXAMPLES["planner"]
    status, _, err = cli("run", *arguments, "--model", "openai/gpt-4o", "--replay", cassette)
    assert status == 1 and f"{NO_REPLY} to openai/gpt-4o" in err


def run_embed(examples: Path) -> subprocess.CompletedProcess[str]:
    """examples/embed.py (from the examples' copy) run as its docstring says."""
    return subprocess.run(
        [sys.executable, "examples/embed.py"],
        cwd=examples.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )


def test_embed_calls_a_workflow_with_a_python_tool(examples: Path) -> None:
    """examples/embed.py, run as its docstring says: the model calls the Python function, and the
    answer uses what it returned; replayed from the cassette, so no key is needed."""
    assert "OPENAI_API_KEY" not in os.environ
    done = run_embed(examples)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "lookup_order('A-1042')",
        "Your desk lamp shipped on 2025-03-03 with UPS (tracking number 1Z999AA10123456784). It should"
        " arrive by 2025-03-07; if it has not by then, reply here and we will look into it.",
    ]


def test_embed_replay_refuses_a_changed_tool_result(examples: Path) -> None:
    """The cassette holds the tool's result in the second request: another result is refused."""
    script = examples / "embed.py"
    script.write_text(script.read_text().replace('"UPS"', '"DHL"'))
    done = run_embed(examples)
    assert done.returncode == 1 and NO_REPLY in done.stderr
    assert done.stderr.startswith("error: replay: cassette") and "Traceback" not in done.stderr


def test_structured_extraction_repairs_one_answer_natively(cli: Cli, examples: Path) -> None:
    """The JSON Schema goes as response_format (gpt-4o-mini takes it); the first answer for
    Ada's email breaks it, is sent back with its violation, and the repaired one is right."""
    status, out, err = replay(cli, "structured_extraction")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "Ada Lovelace <ada@example.org>: MUG-204 x2, TEA-101 x1 (repairs: 1)",
        "Charles Babbage <charles@example.org>: NBK-310 x12, PEN-020 x3, LMP-777 x1 (repairs: 0)",
        '{"orders" 2 "extracted" 2 "items" 19 "repairs" 1}',
    ]
    cassette = (examples / "structured_extraction" / "structured_extraction.cassette.jsonl").read_text()
    assert len(cassette.splitlines()) == 3  # two emails, one repair
