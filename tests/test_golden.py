"""Language-level golden tests: every case in tests/golden/*.sexp, plus checks that they cover the language.

A golden file is a sequence of cases. A case is one or more forms followed by expectation lines:

    ;=> <printed value>      the printer's form (`to_repr`) of the last form's value
    ;!! <error text>         running the case raises a language error whose
                             `file:line:col: error: message` line contains this text
    ;>> <stdout line>        one line the case prints (several lines in order)
    ;2> <stderr line>        one line the case writes to stderr (log-message, warnings)

A case's stdout and stderr must be exactly its ;>> and ;2> lines: a case without them prints
nothing.
    ;xfail: BUG: <reason>    (anywhere before the expectations) a known bug: the case is
                             expected to fail, strictly

Cases in a file run in order in one Runtime, like a REPL session: definitions persist. Each
file has its own workspace directory, which is also the working directory while it runs.
Case code is padded with blank lines so error positions are the file's own line numbers.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from sexp_tasks.config import Settings
from sexp_tasks.errors import SexpError
from sexp_tasks.lang.deepstack import run_with_deep_stack
from sexp_tasks.lang.printer import to_repr
from sexp_tasks.lang.values import Primitive
from sexp_tasks.runtime import Runtime
from sexp_tasks.syntax.nodes import DictNode, FunctionCallNode, ListNode, Node, Symbol
from sexp_tasks.syntax.reader import read

GOLDEN = Path(__file__).resolve().parent / "golden"
PRELUDE = Path(__file__).resolve().parent.parent / "stdlib" / "prelude.sexp"

# Forms the spec names that are not built yet; the meta-test does not ask for them.
NOT_YET_BUILT: set[str] = set()

REQUIRED_FILES = [
    "reading",
    "quote",
    "if_cond",
    "let",
    "define_bind_set",
    "lambda",
    "closures",
    "tail_calls",
    "recursion",
    "and_or",
    "loops",
    "try_catch",
    "quasiquote",
    "arithmetic",
    "comparison",
    "equality",
    "predicates",
    "lists",
    "strings",
    "format",
    "dicts",
    "json",
    "regex",
    "files",
    "load",
    "print",
    "errors",
    "prelude",
    "compat",
    "tasks",
    "pmap",
    "scripts",
    "task_loops",
    "sequential",
]

_MARKERS = (";=>", ";!!", ";>>", ";2>")


@dataclass(frozen=True)
class Case:
    """One golden case: code and what running it must give."""

    file: str
    index: int
    line: int  # the line of the first expectation, for the test id
    code: str  # padded with newlines so that spans carry the file's line numbers
    value: str | None = None
    error: str | None = None
    stdout: str = ""
    stderr: str = ""
    xfail: str | None = None

    @property
    def id(self) -> str:
        return f"{self.file.removesuffix('.sexp')}@{self.line}"


class GoldenFileError(Exception):
    """A golden file that does not follow the format."""


def _has_code(lines: list[str]) -> bool:
    return any(line.strip() and not line.strip().startswith(";") for line in lines)


def _expectation_text(line: str) -> str:
    text = line[3:]
    return text[1:] if text.startswith(" ") else text


def parse_golden(path: Path) -> list[Case]:
    """The cases of one golden file, in order."""
    cases: list[Case] = []
    code: list[str] = []
    code_start = 1
    expectations: list[tuple[int, str]] = []
    xfail: str | None = None

    def close() -> None:
        nonlocal code, expectations, xfail, code_start
        first_line = expectations[0][0]
        if not _has_code(code):
            raise GoldenFileError(f"{path.name}:{first_line}: expectation with no code before it")
        fields: dict[str, str | None] = {"value": None, "error": None}
        out_lines: list[str] = []
        err_lines: list[str] = []
        for number, line in expectations:
            marker, text = line[:3], _expectation_text(line)
            if marker in (";=>", ";!!"):
                if fields["value"] is not None or fields["error"] is not None:
                    raise GoldenFileError(f"{path.name}:{number}: a case has one ;=> or ;!! at most")
                fields["value" if marker == ";=>" else "error"] = text.strip()
            elif marker == ";>>":
                out_lines.append(text)
            else:
                err_lines.append(text)
        stdout = "".join(line + "\n" for line in out_lines)
        stderr = "".join(line + "\n" for line in err_lines)
        padded = "\n" * (code_start - 1) + "\n".join(code)
        cases.append(
            Case(
                path.name,
                len(cases),
                first_line,
                padded,
                fields["value"],
                fields["error"],
                stdout,
                stderr,
                xfail,
            )
        )
        code, expectations, xfail = [], [], None

    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if line.startswith(_MARKERS):
            expectations.append((number, line))
            continue
        if expectations:
            close()
        if not code:
            code_start = number
        if line.startswith(";xfail:"):
            xfail = line.removeprefix(";xfail:").strip()
            code.append("")
            continue
        code.append(line)
    if expectations:
        close()
    if _has_code(code):
        raise GoldenFileError(f"{path.name}:{code_start}: forms with no expectation after them")
    return cases


def golden_files() -> list[Path]:
    return sorted(GOLDEN.glob("*.sexp"))


def _all_cases() -> list[Case]:
    return [case for path in golden_files() for case in parse_golden(path)]


ALL_CASES = _all_cases()
CASES_BY_FILE: dict[str, list[Case]] = {}
for _case in ALL_CASES:
    CASES_BY_FILE.setdefault(_case.file, []).append(_case)


def _params() -> list[object]:
    params = []
    for case in ALL_CASES:
        marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


# Running cases --------------------------------------------------------------------------


@dataclass
class Session:
    """One golden file's Runtime, its captured streams, its workspace, and how far it has run."""

    runtime: Runtime
    out: io.StringIO
    err: io.StringIO
    workspace: Path
    next_index: int = 0


_SESSIONS: dict[str, Session] = {}


@dataclass
class Outcome:
    value: object = None
    error: SexpError | None = None
    stdout: str = ""
    stderr: str = ""


def _run(session: Session, case: Case) -> Outcome:
    """Run one case in its session; language errors are part of the outcome, others propagate."""
    out_start, err_start = len(session.out.getvalue()), len(session.err.getvalue())
    outcome = Outcome()
    try:
        outcome.value = run_with_deep_stack(lambda: session.runtime.run_source(case.code, case.file))
    except SexpError as err:
        outcome.error = err
    finally:
        session.next_index = case.index + 1
        outcome.stdout = session.out.getvalue()[out_start:]
        outcome.stderr = session.err.getvalue()[err_start:]
    return outcome


def _session_for(case: Case, factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Session:
    """The file's session, positioned just before `case` (replaying earlier cases when needed)."""
    session = _SESSIONS.get(case.file)
    if session is not None and session.next_index == case.index:
        monkeypatch.chdir(session.workspace)
        return session
    workspace = factory.mktemp(f"golden-{case.file.removesuffix('.sexp')}")
    out, err = io.StringIO(), io.StringIO()
    runtime = Runtime(Settings(workspace=str(workspace)), out=out, err=err)
    session = _SESSIONS[case.file] = Session(runtime, out, err, workspace)
    monkeypatch.chdir(workspace)
    for earlier in CASES_BY_FILE[case.file][: case.index]:
        try:
            _run(session, earlier)
        except Exception:  # noqa: BLE001  (the earlier case reports its own failure)
            pass
    return session


def _describe(err: SexpError) -> str:
    """The `file:line:col: error: message` line of an error."""
    return f"{err.span}: error: {err.message}" if err.span is not None else f"error: {err.message}"


@pytest.mark.parametrize("case", _params())
def test_golden(
    case: Case, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _session_for(case, tmp_path_factory, monkeypatch)
    outcome = _run(session, case)
    if case.error is not None:
        assert outcome.error is not None, (
            f"expected an error containing {case.error!r}, got the value {to_repr(outcome.value)}"
        )
        assert case.error in _describe(outcome.error)
    else:
        if outcome.error is not None:
            pytest.fail(f"unexpected error: {_describe(outcome.error)}")
        if case.value is not None:
            assert to_repr(outcome.value) == case.value
    assert outcome.stdout == case.stdout
    assert outcome.stderr == case.stderr


# The golden files cover the language ----------------------------------------------------------


def _symbols(node: Node, found: set[str]) -> None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Symbol):
            found.add(item.name)
        elif isinstance(item, FunctionCallNode):
            found.add(item.head.name)
            stack.extend(item.args)
        elif isinstance(item, (ListNode, DictNode)):
            stack.extend(item.items)


def _symbols_in(cases: list[Case]) -> set[str]:
    found: set[str] = set()
    for case in cases:
        try:
            forms = read(case.code, case.file)
        except Exception:  # noqa: BLE001  (a case about a syntax error, or a reader bug)
            continue
        for form in forms:
            _symbols(form, found)
    return found


def test_every_required_golden_file_exists_and_has_cases() -> None:
    missing = [name for name in REQUIRED_FILES if not CASES_BY_FILE.get(f"{name}.sexp")]
    assert not missing


def test_every_primitive_appears_in_a_golden_file(runtime: Runtime) -> None:
    used = _symbols_in(ALL_CASES)
    primitives = {name for name, value in runtime.globals.values.items() if isinstance(value, Primitive)}
    assert len(primitives) > 50
    assert sorted(primitives - used) == []


def test_every_special_form_appears_in_a_golden_file(runtime: Runtime) -> None:
    used = _symbols_in(ALL_CASES)
    forms = set(runtime.compiler.forms) - NOT_YET_BUILT
    assert {"if", "let", "lambda", "try", "quasiquote"} <= forms
    assert sorted(forms - used) == []


def test_every_prelude_procedure_appears_in_the_prelude_golden_file() -> None:
    defined: set[str] = set()
    for form in read(PRELUDE.read_text(encoding="utf-8"), str(PRELUDE)):
        if isinstance(form, FunctionCallNode) and form.name == "define" and form.args:
            target = form.args[0]
            defined.add(
                target.head.name if isinstance(target, FunctionCallNode) else getattr(target, "name", "")
            )
    assert len(defined) > 20
    used = _symbols_in(CASES_BY_FILE.get("prelude.sexp", []))
    assert sorted(defined - used) == []


def test_golden_parser_reads_every_kind_of_expectation(tmp_path: Path) -> None:
    path = tmp_path / "sample.sexp"
    path.write_text(
        ';; a comment\n(+ 1 2)\n;=> 3\n(print "a")\n(print "b")\n;>> a\n;>> b\n;=> nil\n'
        ";xfail: BUG: example\n(car 5)\n;!! expected a list\n(log-message 1)\n;2> log: 1\n",
        encoding="utf-8",
    )
    cases = parse_golden(path)
    assert [(c.line, c.value, c.error, c.stdout, c.stderr, c.xfail) for c in cases] == [
        (3, "3", None, "", "", None),
        (6, "nil", None, "a\nb\n", "", None),
        (11, None, "expected a list", "", "", "BUG: example"),
        (13, None, None, "", "log: 1\n", None),
    ]
    assert cases[1].code.split("\n")[3] == '(print "a")'  # padded to the file's line numbers


@pytest.mark.parametrize(
    "text, problem",
    [(";=> 1\n", "no code"), ("(+ 1 2)\n", "no expectation"), ("1\n;=> 1\n;!! x\n", "one ;=> or ;!!")],
)
def test_golden_parser_refuses_malformed_files(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.sexp"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoldenFileError, match=problem):
        parse_golden(path)
