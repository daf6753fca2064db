"""What programs and models can reach: files inside the workspace only, never through a planted
symlink, a FIFO or a huge file, and a program's own regex stays interruptible (SPEC §10.1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, Cli, scaled, spawn_sexp

from sexp_tasks.handler.tools import ToolBox

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

KEY = "sk-confined-canary-0123456789"


def toolbox(workspace: Path, *names: str) -> ToolBox:
    return ToolBox(names, workspace, 10.0, None)


# Writes ------------------------------------------------------------------------------------------


def test_write_file_never_follows_a_planted_temporary_symlink(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (workspace / ".notes.txt.sexp-tmp").symlink_to("../victim.txt")
    status, out, err = cli("eval", '(write-file "notes.txt" "X")')
    assert (status, out, err) == (0, '"notes.txt"\n', "")
    assert victim.read_text() == "untouched"
    notes = workspace / "notes.txt"
    assert not notes.is_symlink() and notes.read_text() == "X"


def test_write_file_tool_never_follows_a_planted_temporary_symlink(workspace: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (workspace / "README.md").write_text("readme")
    (workspace / ".README.md.sexp-tmp").symlink_to(victim)
    answer = toolbox(workspace, "write_file").run("write_file", {"path": "README.md", "content": "X"})
    assert answer == "wrote 1 characters to README.md"
    assert victim.read_text() == "untouched"
    readme = workspace / "README.md"
    assert not readme.is_symlink() and readme.read_text() == "X"


def test_a_target_that_links_out_is_refused(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (workspace / "out.txt").symlink_to(victim)
    status, _, err = cli("eval", '(write-file "out.txt" "X")')
    assert status == 1 and "'out.txt' is outside the workspace" in err
    answer = toolbox(workspace, "write_file").run("write_file", {"path": "out.txt", "content": "X"})
    assert answer.startswith("error: write-file: 'out.txt' is outside the workspace")
    assert victim.read_text() == "untouched" and (workspace / "out.txt").is_symlink()


def test_write_file_keeps_the_mode_and_leaves_no_temporary(cli: Cli, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    assert cli("eval", '(write-file "run.sh" "new")')[0] == 0
    assert script.read_text() == "new" and script.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]


# load ----------------------------------------------------------------------------------------------


def test_load_is_confined_like_read_file(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (tmp_path / "outside.sexp").write_text('(print "outside ran")\n')
    (workspace / ".sexp").mkdir()
    (workspace / ".sexp" / "x.sexp").write_text("'inside-store\n")
    status, out, err = cli("eval", '(load ".env")')
    assert (status, out) == (1, "") and "load: '.env' holds secrets" in err and KEY not in err
    status, out, err = cli("eval", '(load ".sexp/x.sexp")')
    assert (status, out) == (1, "") and "holds secrets" in err
    status, out, err = cli("eval", '(load "../outside.sexp")')
    assert (status, out) == (1, "") and "load: '../outside.sexp' is outside the workspace" in err
    status, out, err = cli("eval", '(load "/proc/self/environ")', env={"CANARY_TOKEN": KEY})
    assert (status, out) == (1, "") and "'/proc/self/environ' is not open to programs" in err
    assert KEY not in err


def test_load_refuses_proc_even_when_the_workspace_holds_it(cli: Cli) -> None:
    status, out, err = cli(
        "eval", "--workspace", "/", '(load "/proc/self/environ")', env={"CANARY_TOKEN": KEY}
    )
    assert (status, out) == (1, "") and "'/proc/self/environ' is not open to programs" in err
    assert KEY not in err


def test_error_excerpts_are_scrubbed_of_keys(cli: Cli, workspace: Path) -> None:
    (workspace / "config.sexp").write_text(f'(define key "{KEY}"\n')
    status, _, err = cli("eval", '(load "config.sexp")')
    assert status == 2 and "unclosed" in err and KEY not in err and "sk-***" in err
    plain = "plainvalue-9f8e7d6c5b"  # a key without the sk- shape, known by its variable's name
    (workspace / "creds.sexp").write_text(f"(list 1 2)\n(undefined-thing {plain})\n")
    status, _, err = cli("eval", '(load "creds.sexp")', env={"SERVICE_PASSWORD": plain})
    assert status == 1 and "creds.sexp:2" in err and plain not in err


# Reads of FIFOs and huge files -----------------------------------------------------------------


def test_read_file_refuses_a_fifo_at_once(cli: Cli, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    started = time.monotonic()
    status, _, err = cli("eval", '(read-file "pipe")', timeout=20)
    assert status == 1 and "read-file: 'pipe' is not a regular file" in err
    assert time.monotonic() - started < scaled(15)
    started = time.monotonic()
    answer = toolbox(workspace, "read_file").run("read_file", {"path": "pipe"})
    assert answer == "error: read-file: 'pipe' is not a regular file"
    assert time.monotonic() - started < scaled(2)


# probe.py COMMAND...: runs COMMAND with at most 3 GiB of address space (so a test that fails
# cannot take the machine's memory) and prints [its exit status, its stdout, its peak RSS in KiB].
PROBE = """
import json, resource, subprocess, sys
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
p = subprocess.run(sys.argv[1:], preexec_fn=limit, capture_output=True, text=True)
sys.stderr.write(p.stderr)
print(json.dumps([p.returncode, p.stdout, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
"""


def peak_rss_kib(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """Run `python -m sexp_tasks ARGS`; (exit status, stdout, peak RSS in KiB)."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, sys.executable, "-m", "sexp_tasks", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    status, out, rss = json.loads(completed.stdout)
    return status, out, rss


@pytest.fixture
def sparse(workspace: Path) -> Path:
    """A 2 GiB file of zero bytes that takes no disk."""
    path = workspace / "big.txt"
    with open(path, "wb") as handle:
        handle.truncate(2 << 30)
    return path


def test_read_file_of_a_huge_file_reads_a_bounded_prefix(workspace: Path, sparse: Path) -> None:
    program = '(let ((text (read-file "big.txt"))) (list (length text) (string-contains? text "not read")))'
    status, out, rss = peak_rss_kib(["eval", program], workspace)
    assert status == 0, out
    length, noted = out.strip().strip("()").split()
    assert noted == "true" and 1_000_000 <= int(length) <= 20_000_000
    assert rss < 400 * 1024, f"peak RSS {rss} KiB"


def test_read_file_tool_on_a_huge_file_reads_a_bounded_prefix(workspace: Path, sparse: Path) -> None:
    replies = [
        {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]},
        "<output>done</output>",
    ]
    (workspace / "replies.json").write_text(json.dumps(replies))
    (workspace / "p.sexp").write_text(
        '(defatom reader (instructions "Read big.txt") (tools read_file))\n(reader)\n'
    )
    args = ["run", "--model", "mock/m", "--mock-responses", "replies.json", "p.sexp"]
    status, out, rss = peak_rss_kib(args, workspace)
    assert status == 0, out
    assert rss < 600 * 1024, f"peak RSS {rss} KiB"
    answer = toolbox(workspace, "read_file").run("read_file", {"path": "big.txt"})
    assert len(answer) < 100_000 and "not read" in answer


# A program's own regular expressions ---------------------------------------------------------


def test_ctrl_c_stops_a_catastrophic_regex(workspace: Path) -> None:
    program = '(progn (log-message "matching") (regex-match "(a|aa)+$" (string-append "{}" "b")))'.format(
        "a" * 60
    )
    process = spawn_sexp("eval", program, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        assert process.stderr.readline() == "log: matching\n"
        deadline = time.monotonic() + scaled(10)  # until the match has burnt some CPU, so it is under way
        while cpu_seconds(process.pid) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=scaled(8)) == 130
        assert "interrupted" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_regex_keeps_python_re_syntax(cli: Cli) -> None:
    assert cli("eval", '(regex-match "(?P<word>\\\\w+) (?P=word)" "say hello hello")') == (
        0,
        '("hello hello" "hello")\n',
        "",
    )
    status, _, err = cli("eval", '(regex-match "\\\\p{L}+" "abc")')  # regex-module syntax, not re's
    assert status == 1 and "regex-match: invalid pattern" in err
