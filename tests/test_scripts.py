"""system:run_script and the process runner behind it, with real processes (SPEC §2.8, §9).

Every process a test starts carries a unique token on its command line; after each scenario
/proc is searched for that token, so a survivor of any kind fails the test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scaled

from sexp_tasks.config import Settings
from sexp_tasks.diagnostics import failed_result_line
from sexp_tasks.errors import FormError, SexpError
from sexp_tasks.process import child_processes as commands
from sexp_tasks.process.child_processes import run_command
from sexp_tasks.process.output_capture import OutputCapture
from sexp_tasks.results import COMPLETE, FAILED, ScriptResult
from sexp_tasks.runtime import Runtime

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

# spawn.py TOKEN FLAG...: forks a grandchild that sleeps with TOKEN on its command line, writes its
# pid to TOKEN.pid, then prints "ready". Flags: setsid, double (fork twice), ignore-term (the
# grandchild), handle-term (the grandchild writes TOKEN.term and exits on SIGTERM), quiet (the
# grandchild closes its output), stay (the script sleeps too), stay-ignoring (and ignores SIGTERM).
SPAWN = r"""
import os, signal, sys, time
token, flags = sys.argv[1], set(sys.argv[2:])
if os.fork() == 0:
    if "setsid" in flags:
        os.setsid()
    if "double" in flags and os.fork():
        os._exit(0)
    if "quiet" in flags:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    if "ignore-term" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "handle-term" in flags:
        code = "import signal,sys,time\n"
        code += "def h(*a):\n open(sys.argv[1] + '.term', 'w').close(); sys.exit(0)\n"
        code += "signal.signal(signal.SIGTERM, h)\n"
        code += "open(sys.argv[1] + '.pid', 'w').write(str(__import__('os').getpid()))\n"
        code += "time.sleep(300)\n"
        os.execv(sys.executable, [sys.executable, "-c", code, token])
    with open(token + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(token + ".tmp", token + ".pid")
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", token])
while not os.path.exists(token + ".pid"):
    time.sleep(0.01)
print("ready", flush=True)
if "stay-ignoring" in flags:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "stay" in flags or "stay-ignoring" in flags:
    time.sleep(300)
"""


def survivors(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds token."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


@pytest.fixture
def token() -> Iterator[str]:
    """A unique marker for this test's processes; any still alive at the end fail the test."""
    value = "tok" + uuid.uuid4().hex[:12]
    yield value
    deadline = time.monotonic() + scaled(5)  # a process killed just now may take a moment to be gone
    while (left := survivors(value)) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes survived: {left}"


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Half a second between SIGTERM and SIGKILL, so scenarios that need SIGKILL stay quick."""
    monkeypatch.setattr(commands, "GRACE_SECONDS", 0.5)


@pytest.fixture
def spawn(workspace: Path, runtime: Runtime) -> str:
    """spawn.py in the workspace; PY is bound to this Python in the runtime."""
    (workspace / "spawn.py").write_text(SPAWN)
    runtime.define("PY", sys.executable)
    return "spawn.py"


def run(runtime: Runtime, text: str) -> ScriptResult:
    result = runtime.run_source(text)
    assert isinstance(result, ScriptResult)
    return result


def field(runtime: Runtime, text: str, name: str) -> object:
    return runtime.run_source(f'(get-field {text} "{name}")')


# Exit codes, output, stdin -------------------------------------------------------------------


def test_output_and_fields(runtime: Runtime) -> None:
    result = run(runtime, "(system:run_script (command \"sh -c 'echo out; echo err >&2'\"))")
    assert (result.status, result.content, result.stdout, result.stderr, result.exit_code) == (
        COMPLETE,
        "out\n",
        "out\n",
        "err\n",
        0,
    )
    assert runtime.run_source('(get-field (system:run_script (command "echo hi")) "stdout")') == "hi\n"
    assert runtime.run_source('(get-field (system:run_script (command "echo hi")) "exitCode")') == 0
    notes = result.notes
    assert notes["stdout_truncated_bytes"] == 0 and notes["stderr_truncated_bytes"] == 0
    assert 0 < notes["duration_ms"] < 30_000


def test_non_zero_exit_is_complete_with_the_code(runtime: Runtime) -> None:
    result = run(runtime, '(system:run_script (command "sh") (args (list "-c" "echo partial; exit 3")))')
    assert (result.status, result.exit_code, result.content, result.error) == (COMPLETE, 3, "partial\n", None)
    assert runtime.run_source('(task-ok? (system:run_script (command "false")))') in (True, False)


def test_killed_by_a_signal_is_complete_with_a_negative_code(runtime: Runtime) -> None:
    result = run(runtime, "(system:run_script (command \"sh -c 'kill -KILL $$'\"))")
    assert (result.status, result.exit_code, result.notes["signal"]) == (COMPLETE, -9, "SIGKILL")


def test_keyword_syntax_and_command_as_list(runtime: Runtime) -> None:
    assert runtime.run_source(
        '(get-field (system:run_script :command "echo" :args (list "a b" 2)) "stdout")'
    ) == ("a b 2\n")
    assert runtime.run_source('(get-field (system:run_script (command (list "echo" "x  y"))) "stdout")') == (
        "x  y\n"
    )
    runtime.run_source('(define (run-it c) (system:run_script (command c) (args (list "z"))))')
    assert runtime.run_source('(get-field (run-it "echo") "content")') == "z\n"


def test_stdin(runtime: Runtime) -> None:
    assert runtime.run_source(
        '(get-field (system:run_script (command "cat") (input "line 1\\nzwei ☃")) "stdout")'
    ) == ("line 1\nzwei ☃")
    # Without input the command reads end of file at once, never the terminal.
    assert runtime.run_source('(get-field (system:run_script (command "cat")) "stdout")') == ""


def test_large_stdin_through_and_unread(workspace: Path) -> None:
    data = "x" * (3 * 1024 * 1024)
    outcome = run_command("wc -c", workspace, 30, input=data)
    assert outcome.stdout.strip() == str(len(data))
    started = time.monotonic()
    outcome = run_command("true", workspace, 30, input=data)  # never reads: no hang, no error
    assert outcome.exit_code == 0 and time.monotonic() - started < 10


# Environment and working directory -----------------------------------------------------------


def test_environment_is_scrubbed(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "canary-anthropic-456")
    monkeypatch.setenv("SOME_SETTING", "not-kept")
    monkeypatch.setenv("LC_MESSAGES", "C")
    monkeypatch.setenv("TZ", "UTC")
    output = runtime.run_source('(get-field (system:run_script (command "env")) "stdout")')
    assert isinstance(output, str)
    assert "canary" not in output and "not-kept" not in output
    names = {line.split("=", 1)[0] for line in output.splitlines()}
    allowed = {"PATH", "HOME", "LANG", "TMPDIR", "TZ", "USER", "VIRTUAL_ENV", "PYTHONPATH", "SEXP_SCRIPT_ID"}
    assert names - allowed == {n for n in names if n.startswith("LC_")}
    assert {"PATH", "HOME", "TZ", "LC_MESSAGES"} <= names


def test_env_passes_what_the_program_gives(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai-123")
    output = runtime.run_source(
        '(get-field (system:run_script (command "env") (env (dict "OPENAI_API_KEY" "passed" :N 5))) "stdout")'
    )
    assert isinstance(output, str)
    assert "OPENAI_API_KEY=passed" in output.splitlines() and "N=5" in output.splitlines()
    assert "canary" not in output
    output = runtime.run_source(
        '(get-field (system:run_script (command "env") (env (dict "TZ" nil))) "stdout")'
    )
    assert "TZ=" not in str(output)


def test_cwd(runtime: Runtime, workspace: Path, tmp_path: Path) -> None:
    (workspace / "sub" / "dir").mkdir(parents=True)
    assert runtime.run_source('(get-field (system:run_script (command "pwd")) "stdout")') == f"{workspace}\n"
    result = run(runtime, '(system:run_script (command "pwd") (cwd "sub/dir"))')
    assert result.stdout == f"{workspace / 'sub' / 'dir'}\n"
    runtime.define("OUTSIDE", str(tmp_path))
    assert runtime.run_source('(get-field (system:run_script (command "pwd") (cwd OUTSIDE)) "stdout")') == (
        f"{tmp_path}\n"
    )


def test_missing_cwd_is_execution_halted(runtime: Runtime) -> None:
    result = run(runtime, '(system:run_script (command "pwd") (cwd "no/such/dir"))')
    assert result.status == FAILED and result.error is not None
    assert result.error.reason == "execution_halted" and "no/such/dir" in result.error.message


def test_workspace_is_the_default_cwd_even_elsewhere(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    runtime = Runtime(Settings(workspace=str(workspace)), out=io.StringIO(), err=io.StringIO())
    assert runtime.run_source('(get-field (system:run_script (command "pwd")) "stdout")') == f"{workspace}\n"


# Shell or not ---------------------------------------------------------------------------------


def test_no_shell_unless_asked(runtime: Runtime) -> None:
    assert runtime.run_source('(get-field (system:run_script (command "echo a; echo b")) "stdout")') == (
        "a; echo b\n"
    )
    assert (
        runtime.run_source('(get-field (system:run_script (command "echo $HOME *")) "stdout")') == "$HOME *\n"
    )
    assert runtime.run_source(
        '(get-field (system:run_script (command "echo a; echo b") (shell true)) "stdout")'
    ) == ("a\nb\n")
    assert runtime.run_source(
        '(get-field (system:run_script (command "echo \\"$1\\"") (args (list "x y")) (shell true)) "stdout")'
    ) == ("x y\n")
    assert runtime.run_source(
        '(get-field (system:run_script (command "echo a; echo b") (shell false)) "stdout")'
    ) == ("a; echo b\n")


# Commands that cannot start ------------------------------------------------------------------


def test_command_not_found_is_execution_halted(runtime: Runtime) -> None:
    result = run(runtime, '(system:run_script (command "no-such-command-xyz --flag"))')
    assert (result.status, result.content, result.exit_code) == (FAILED, "", None)
    assert result.error is not None and result.error.type == "TASK_FAILURE"
    assert result.error.reason == "execution_halted"
    assert result.error.message == "cannot start 'no-such-command-xyz': command not found"
    assert failed_result_line(result) == (
        "error: TASK_FAILURE execution_halted: cannot start 'no-such-command-xyz': command not found"
    )
    error = runtime.run_source('(get-field (system:run_script (command "no-such-command-xyz")) "error")')
    assert isinstance(error, dict) and error["reason"] == "execution_halted"


def test_command_not_executable(runtime: Runtime, workspace: Path) -> None:
    (workspace / "plain.txt").write_text("echo hi\n")
    result = run(runtime, '(system:run_script (command "./plain.txt"))')
    assert result.error is not None and result.error.reason == "execution_halted"
    assert result.error.message == "cannot start './plain.txt': permission denied"


# Timeouts and every kind of descendant ----------------------------------------------------------


def test_timeout_is_failed_with_partial_output(runtime: Runtime, token: str) -> None:
    # The token is sh's $0, on its command line until exec; then sleep is killed by the launcher.
    started = time.monotonic()
    result = run(
        runtime,
        '(system:run_script (command "sh") (timeout 0.5)'
        f' (args (list "-c" "echo partial; echo e >&2; exec sleep 30" "{token}")))',
    )
    assert time.monotonic() - started < 5
    assert (result.status, result.content, result.stdout, result.stderr) == (
        FAILED,
        "partial\n",
        "partial\n",
        "e\n",
    )
    assert result.exit_code is None and result.error is not None
    assert result.error.reason == "execution_timeout" and "timed out after 0.5 s" in result.error.message
    assert "TASK_FAILURE execution_timeout" in str(failed_result_line(result))


def test_default_timeout_comes_from_settings(workspace: Path, token: str) -> None:
    import io

    runtime = Runtime(
        Settings(workspace=str(workspace), script_timeout=0.5), out=io.StringIO(), err=io.StringIO()
    )
    runtime.define("PY", sys.executable)
    result = run(
        runtime, f'(system:run_script (command (list PY "-c" "import time; time.sleep(30)" "{token}")))'
    )
    assert result.error is not None and result.error.reason == "execution_timeout"


def test_sigterm_comes_first(runtime: Runtime, spawn: str, token: str, workspace: Path) -> None:
    result = run(
        runtime,
        f'(system:run_script (command (list PY "{spawn}" "{token}" "handle-term" "stay")) (timeout 1))',
    )
    assert result.error is not None and result.error.reason == "execution_timeout"
    assert result.stdout == "ready\n"
    assert (workspace / f"{token}.term").exists()  # the grandchild had its SIGTERM before any SIGKILL


@pytest.mark.parametrize(
    "flags",
    [
        ("ignore-term", "stay-ignoring"),
        ("setsid", "stay"),
        ("setsid", "double", "ignore-term", "stay-ignoring"),
        ("setsid", "quiet", "ignore-term", "stay"),
    ],
    ids=["sigterm-ignored", "setsid", "daemonized-ignoring", "setsid-quiet"],
)
def test_timeout_kills_every_descendant(
    runtime: Runtime, spawn: str, token: str, workspace: Path, flags: tuple[str, ...]
) -> None:
    started = time.monotonic()
    quoted = " ".join(f'"{f}"' for f in flags)
    result = run(runtime, f'(system:run_script (command (list PY "{spawn}" "{token}" {quoted})) (timeout 1))')
    assert time.monotonic() - started < 8
    assert (result.status, result.stdout) == (FAILED, "ready\n")
    assert result.error is not None and result.error.reason == "execution_timeout"
    assert not survivors(token)


@pytest.mark.parametrize(
    "flags",
    [(), ("setsid",), ("ignore-term",), ("setsid", "double", "ignore-term"), ("setsid", "quiet")],
    ids=["background", "setsid", "sigterm-ignored", "daemonized-ignoring", "setsid-quiet"],
)
def test_nothing_outlives_a_script_that_exits(
    runtime: Runtime, spawn: str, token: str, flags: tuple[str, ...]
) -> None:
    # Without "quiet" the grandchild holds the stdout pipe open: the read must not wait for it.
    started = time.monotonic()
    quoted = " ".join(f'"{f}"' for f in flags)
    result = run(
        runtime, f'(system:run_script (command (list PY "{spawn}" "{token}" {quoted})) (timeout 30))'
    )
    assert time.monotonic() - started < 8
    assert (result.status, result.exit_code, result.stdout) == (COMPLETE, 0, "ready\n")
    assert not survivors(token)


def test_shell_background_job_holding_the_pipe(runtime: Runtime, token: str) -> None:
    started = time.monotonic()
    result = run(runtime, f'(system:run_script (command "sleep 300 {token} & echo done") (shell true))')
    assert (result.status, result.stdout) == (COMPLETE, "done\n")
    assert time.monotonic() - started < 5
    assert not survivors(token)


def test_concurrent_scripts_in_pmap(runtime: Runtime, spawn: str, token: str) -> None:
    runtime.define("TOKENS", [f"{token}-{i}" for i in range(4)])
    results = runtime.run_source(
        f'(pmap (lambda (t) (system:run_script (command (list PY "{spawn}" t "setsid" "stay")) (timeout 1)))'
        " TOKENS)"
    )
    assert isinstance(results, list) and len(results) == 4
    assert all(r.status == FAILED and r.stdout == "ready\n" for r in results)
    assert not survivors(token)


def test_interrupt_stops_the_script(workspace: Path, token: str) -> None:
    (workspace / "spawn.py").write_text(SPAWN)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_command([sys.executable, "spawn.py", token, "setsid", "ignore-term", "stay"], workspace, 60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not survivors(token)


def test_scripts_die_with_the_interpreter(workspace: Path, token: str) -> None:
    """Even a kill -9 of sexp itself leaves nothing behind: the launcher gets SIGTERM from the kernel."""
    (workspace / "spawn.py").write_text(SPAWN)
    code = (
        "import sys; from pathlib import Path; from sexp_tasks.process.child_processes import run_command; "
        f"run_command([sys.executable, 'spawn.py', '{token}', 'setsid', 'ignore-term', 'stay'],"
        " Path('.'), 60)"
    )
    root = str(Path(__file__).resolve().parent.parent)
    parent = subprocess.Popen(
        [sys.executable, "-c", code], cwd=workspace, env={**os.environ, "PYTHONPATH": root}
    )
    deadline = time.monotonic() + scaled(20)
    while not (workspace / f"{token}.pid").exists():
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + scaled(10)  # the launcher's own grace (2 s) then SIGKILL
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not survivors(token)


def test_a_script_that_kills_its_launcher_leaves_nothing(runtime: Runtime, token: str) -> None:
    """The setsid grandchild is init's once the launcher is gone: sexp finds it by its marker."""
    runtime.define("PY", sys.executable)
    runtime.define("TOKEN", token)
    command = '"setsid \\"$1\\" -c \'import time; time.sleep(1001)\' \\"$2\\" & kill -9 $PPID"'
    result = run(runtime, f"(system:run_script (command {command}) (args (list PY TOKEN)) (shell true))")
    assert result.status == FAILED and result.error is not None
    assert result.error.reason == "execution_halted"
    deadline = time.monotonic() + scaled(5)
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not survivors(token)


def test_output_read_is_bounded_even_if_the_launcher_dies(workspace: Path, token: str) -> None:
    """A process that escaped the launcher and holds the pipe cannot hang the read, and is killed."""
    from sexp_tasks.process.script_runner import ScriptRequest, run_script

    (workspace / "spawn.py").write_text(SPAWN)
    outcome: list[ScriptResult] = []

    def target() -> None:
        request = ScriptRequest((sys.executable, "spawn.py", token, "setsid", "ignore-term", "stay"))
        outcome.append(run_script(request, workspace, Settings()))

    thread = threading.Thread(target=target)
    thread.start()
    deadline = time.monotonic() + scaled(20)
    while not (workspace / f"{token}.pid").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    grandchild = int((workspace / f"{token}.pid").read_text())
    launchers = [
        p for p in survivors(token) if b"process/launcher.py" in Path(f"/proc/{p}/cmdline").read_bytes()
    ]
    assert len(launchers) == 1
    os.kill(grandchild, signal.SIGSTOP)  # out of the launcher's reach: stopped, then orphaned
    os.kill(launchers[0], signal.SIGKILL)
    started = time.monotonic()
    thread.join(scaled(30))
    assert not thread.is_alive() and time.monotonic() - started < scaled(10)
    assert grandchild not in survivors(token)  # found by its marker once the launcher was gone
    [result] = outcome
    assert (result.status, result.stdout) == (FAILED, "ready\n")
    assert result.error is not None and result.error.reason == "execution_halted"
    assert "was stopped before it reported how it ended" in result.error.message


# Output caps ----------------------------------------------------------------------------------


def test_huge_output_keeps_head_and_tail(workspace: Path) -> None:
    import io

    runtime = Runtime(
        Settings(workspace=str(workspace), script_output_limit=1000), out=io.StringIO(), err=io.StringIO()
    )
    runtime.define("PY", sys.executable)
    program = "import sys; sys.stdout.write('HEAD' + 'x' * 100000 + 'TAIL')\n"
    program += "sys.stderr.write('h' + 'y' * 5000 + 't')"
    runtime.define("PROGRAM", program)
    result = run(runtime, '(system:run_script (command (list PY "-c" PROGRAM)))')
    assert result.status == COMPLETE and result.content == result.stdout
    assert result.stdout.startswith("HEAD" + "x" * 496 + "\n[... 99008 bytes dropped ...]\n")
    assert result.stdout.endswith("\n" + "x" * 496 + "TAIL")
    assert result.notes["stdout_truncated_bytes"] == 100008 - 1000
    assert result.notes["stderr_truncated_bytes"] == 5002 - 1000
    assert result.stderr.startswith("h") and result.stderr.endswith("t")


def test_default_cap_is_one_mebibyte_per_stream(runtime: Runtime) -> None:
    runtime.define("PY", sys.executable)
    result = run(
        runtime, '(system:run_script (command (list PY "-c" "print(\'z\' * (3 * 1024 * 1024 - 1))")))'
    )
    assert result.notes["stdout_truncated_bytes"] == 2 * 1024 * 1024
    kept = result.stdout.replace("\n[... 2097152 bytes dropped ...]\n", "")
    assert len(kept) == 1024 * 1024 and kept.endswith("z\n")


def test_cap_cuts_between_characters() -> None:
    capture = OutputCapture(7)
    capture.add("ééééé".encode())  # 10 bytes; 3 kept at the head, 4 at the tail
    text, dropped = capture.text()
    assert (text, dropped) == ("é\n[... 4 bytes dropped ...]\néé", 4)


def test_run_command_for_the_model_tool(workspace: Path) -> None:
    outcome = run_command("sh -c 'echo hi; exit 2'", workspace, 10)
    assert (outcome.exit_code, outcome.stdout, outcome.timed_out) == (2, "hi\n", False)
    outcome = run_command("sleep 30", workspace, 0.3)
    assert outcome.timed_out and outcome.exit_code is None
    with pytest.raises(FileNotFoundError):
        run_command("no-such-command-xyz", workspace, 10)
    assert len(run_command("head -c 200000 /dev/zero", workspace, 10).stdout) < 70_000


# The form's shape and its values --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('(system:run_script (comand "ls"))', "unknown parameter 'comand'; did you mean 'command'?"),
        (
            '(system:run_script (command "ls") (timout 5))',
            "parameters: command, args, timeout, cwd, input, env, shell",
        ),
        ("(system:run_script (args (list)))", "missing (command ...)"),
        ("(system:run_script)", "missing (command ...)"),
        ('(system:run_script (command "ls") (command "pwd"))', "parameter 'command' given twice"),
        ('(system:run_script (command "ls" "-l"))', "(command ...) takes one expression"),
        ('(system:run_script "ls")', "expected (parameter expr) or :parameter expr"),
        ("(system:run_script :command)", ":command needs a value"),
        ('(system:run_script :command "ls" :bogus 1)', "unknown parameter 'bogus'"),
    ],
)
def test_malformed_forms(runtime: Runtime, text: str, message: str) -> None:
    with pytest.raises(FormError) as caught:
        runtime.run_source(f"\n  {text}")
    assert message in caught.value.message
    assert caught.value.span is not None and caught.value.span.line == 2


@pytest.mark.parametrize(
    ("arguments", "kind", "message"),
    [
        ("(command 5)", "TYPE_ERROR", "command must be a string or a list of strings, got 5"),
        ("(command (list))", "TYPE_ERROR", "command must be a string or a list of strings, got ()"),
        ('(command "")', "VALUE_ERROR", "the command is empty"),
        ('(command "echo \\"unclosed")', "VALUE_ERROR", "cannot split the command"),
        ('(command "ls") (args "-l")', "TYPE_ERROR", 'args must be a list of strings, got "-l"'),
        ('(command "ls") (args (list "-l" nil))', "TYPE_ERROR", "args must be a list of strings"),
        ('(command "ls") (timeout "10")', "TYPE_ERROR", 'timeout must be a number of seconds, got "10"'),
        ('(command "ls") (timeout true)', "TYPE_ERROR", "timeout must be a number of seconds"),
        ('(command "ls") (timeout 0)', "VALUE_ERROR", "timeout must be positive, got 0"),
        ('(command "ls") (cwd 5)', "TYPE_ERROR", "cwd must be a string, got 5"),
        ('(command "cat") (input (list "a"))', "TYPE_ERROR", "input must be a string"),
        ('(command "ls") (env (list "A=1"))', "TYPE_ERROR", "env must be a dict of names to strings"),
        ('(command "ls") (env (dict "A" (list 1)))', "TYPE_ERROR", "the value of A must be a string"),
        ('(command "ls") (env (dict "A=B" "1"))', "VALUE_ERROR", "is not an environment variable name"),
        ('(command "ls") (shell "yes")', "TYPE_ERROR", 'shell must be true or false, got "yes"'),
    ],
)
def test_wrong_values_are_catchable_errors(runtime: Runtime, arguments: str, kind: str, message: str) -> None:
    caught = runtime.run_source(f"(try\n   (system:run_script {arguments})\n (catch err err))")
    assert isinstance(caught, dict)
    assert caught["type"] == kind and message in caught["message"]
    assert (caught["line"], caught["column"]) == (2, 4)
    with pytest.raises(SexpError):
        runtime.run_source(f"(system:run_script {arguments})")


def test_nil_parameters_take_their_defaults(runtime: Runtime) -> None:
    result = run(
        runtime,
        '(system:run_script (command "echo x") (args nil) (timeout nil) (cwd nil) (input nil) (env nil)'
        " (shell nil))",
    )
    assert (result.status, result.stdout) == (COMPLETE, "x\n")


def test_parameters_are_evaluated_once_in_order(runtime: Runtime) -> None:
    runtime.run_source("(define seen (list))")
    runtime.run_source(
        '(system:run_script (command (progn (set! seen (append seen (list 1))) "echo"))'
        ' (args (progn (set! seen (append seen (list 2))) (list "a"))))'
    )
    assert runtime.run_source("seen") == [1, 2]


# Command line ------------------------------------------------------------------------------------


def test_cli_failed_script_exits_1_with_the_error_line(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    (workspace / "prog.sexp").write_text('(system:run_script (command "no-such-command-xyz"))\n')
    status, out, err = cli("run", "prog.sexp")
    assert status == 1
    assert (
        "error: TASK_FAILURE execution_halted: cannot start 'no-such-command-xyz': command not found" in err
    )
    status, out, err = cli("eval", '(get-field (system:run_script (command "sh -c \'exit 4\'")) "exitCode")')
    assert (status, out.strip()) == (0, "4")
    status, out, err = cli("eval", "--json", '(system:run_script (command "echo hi"))')
    value = json.loads(out)
    assert value["status"] == "COMPLETE" and value["content"] == "hi\n"


def test_check_accepts_the_form(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    (workspace / "prog.sexp").write_text(
        '(define r (system:run_script (command "echo hi") (args (list "x")) (timeout 5)\n'
        '  (env (dict "A" "b"))))\n'
        '(system:run_script :command "ls" :args (list "-l") :shell false)\n'
        '(print (get-field r "stdout"))\n'
    )
    status, out, err = cli("check", "prog.sexp")
    assert (status, err) == (0, "")


def test_check_reports_a_malformed_form(cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    (workspace / "prog.sexp").write_text('(system:run_script (comand "ls"))\n')
    status, out, err = cli("check", "prog.sexp")
    assert status == 1 and "unknown parameter 'comand'" in err
