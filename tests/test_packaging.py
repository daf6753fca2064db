"""The wheel carries grammar/ and stdlib/ inside the package, and works from there."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import scaled

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("sexp_tasks-*.whl")
    return built


def test_wheel_ships_grammar_and_stdlib(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "sexp_tasks/grammar/sexp.lark" in names
    assert "sexp_tasks/stdlib/prelude.sexp" in names
    assert "sexp_tasks/starter/tasks/summarize.xml" in names


def test_wheel_is_typed(wheel: Path) -> None:
    """The Python API is typed (SPEC §10.4): the wheel ships the py.typed marker."""
    assert "sexp_tasks/py.typed" in zipfile.ZipFile(wheel).namelist()


def test_installed_package_runs_from_its_own_data(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    result = subprocess.run(
        [sys.executable, "-m", "sexp_tasks", "eval", "(take 2 (list 1 2 3))"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "(1 2)\n"
    assert str(ROOT) not in result.stderr


def test_installed_package_finds_its_schema_and_process_launcher(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    (tmp_path / "tasks").mkdir()

    def sexp(program: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sexp_tasks", "eval", program],
            cwd=tmp_path,
            env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=scaled(60),
        )

    script = sexp('(get-field (system:run_script (command "echo hi")) "stdout")')
    assert (script.returncode, script.stdout) == (0, '"hi\\n"\n'), script.stderr
    (tmp_path / "tasks" / "bad.xml").write_text('<task name="bad" type="atomic"><nonsense/></task>\n')
    template = sexp("1")
    assert template.returncode == 1
    assert "tasks/bad.xml:1:1: error: schema: Element 'nonsense'" in template.stderr
    assert str(ROOT) not in script.stderr + template.stderr


def test_installed_package_writes_a_starter_project_that_runs(wheel: Path, tmp_path: Path) -> None:
    """`sexp init` copies its files from inside the installed package (sexp_tasks/starter/)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    environment = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}

    def sexp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sexp_tasks", *args]
        return subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=scaled(60)
        )

    made = sexp("init", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    offline = ["--model", "mock/starter", "--mock-responses", "mock_responses.json"]
    ran = sexp("run", "main.sexp", *offline, cwd=tmp_path / "demo")
    assert (ran.returncode, ran.stdout.splitlines()[0]) == (0, "March support: 18% more tickets"), ran.stderr
    assert str(ROOT) not in made.stderr + ran.stderr


def test_modules_stay_small_and_named_apart() -> None:
    # A module holds one thing (at most 400 lines), is named for it, shares its name with no other
    # module of the package and shadows no standard-library module (issue 11).
    modules = [p for p in (ROOT / "sexp_tasks").rglob("*.py") if p.stem not in ("__init__", "__main__")]
    lines = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in modules}
    assert {name: n for name, n in lines.items() if n > 400} == {}
    stems = [path.stem for path in modules]
    assert sorted({stem for stem in stems if stems.count(stem) > 1}) == []
    assert sorted(set(stems) & sys.stdlib_module_names) == []


def test_the_package_root_holds_at_most_twelve_modules() -> None:
    # The root holds the composition root and the few modules every stage shares; everything else
    # lives in the folder of its stage (issue 11, ARCHITECTURE.md).
    root = sorted(p.name for p in (ROOT / "sexp_tasks").glob("*.py"))
    assert len(root) <= 12, root
