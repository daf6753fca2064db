"""Interpreter benchmarks: the DSL next to the same programs in CPython, compile time, and reader throughput.

Run from the checkout root: `.venv/bin/python bench/interp.py [--quick] [--patience N]`.
Each DSL run and its CPython counterpart are timed in turn, round after round until the best times
stop falling, and the best (minimum) of each is reported: on a shared, noisy machine the minimum
is the least disturbed run.
Goals are reported, not asserted: the exit status is 0 unless a DSL result is wrong.
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.program_gen import generate_program  # noqa: E402
from sexp_tasks.lang.deepstack import run_with_deep_stack  # noqa: E402
from sexp_tasks.lang.environment import TOP_FRAME  # noqa: E402
from sexp_tasks.runtime import Runtime  # noqa: E402
from sexp_tasks.syntax.reader import Reader  # noqa: E402

PARSE_GOAL_MB_S = 1.5
NESTED_DEPTH = 1_000
# Noise on a shared machine comes in bursts, so timing goes on while the best times still fall:
# it stops after `patience` rounds with no best improving by IMPROVEMENT, or at the cap.
IMPROVEMENT = 0.02
MAX_ROUNDS_PER_PATIENCE = 4

# One token per match, after any whitespace and comments: the terminals of grammar/sexp.lark,
# counted here rather than by asking the reader, whose lexer is private and changes.
TOKEN = re.compile(
    r"""(?:\s+|;[^\n]*)*(?:"[^"\\]*(?:\\.[^"\\]*)*"|,@|#[tf]|[(){}'`,]|[\w\-+*/<>=!?:.%&^~$]+|[^\s;])""",
    re.S,
)


@dataclass(frozen=True)
class Comparison:
    """One program written twice: DSL definitions plus a timed expression, and a Python callable."""

    name: str
    definitions: str
    expression: str
    python: Callable[[], object]
    max_ratio: float | None


@dataclass(frozen=True)
class Timing:
    """The best DSL and CPython times of one comparison, and how many rounds found them."""

    dsl: float
    python: float
    rounds: int

    @property
    def ratio(self) -> float:
        """How many times slower the DSL is than CPython."""
        return self.dsl / self.python


# The CPython side ------------------------------------------------------------------------
def py_fib(n: int) -> int:
    """Return the nth Fibonacci number, by the same doubly recursive definition as the DSL's."""
    return n if n < 2 else py_fib(n - 1) + py_fib(n - 2)


def py_count_to(n: int, acc: int = 0) -> int:
    """Return acc + n, counting down one step at a time (a while loop: CPython has no tail calls)."""
    while n != 0:
        n, acc = n - 1, acc + 1
    return acc


def py_map_filter_reduce(n: int) -> int:
    """Return the sum of the even squares of 0..n-1, by map, filter and reduce with lambdas."""
    squares = map(lambda x: x * x, range(n))
    evens = filter(lambda x: x % 2 == 0, squares)
    return functools.reduce(lambda a, b: a + b, evens, 0)


COMPARISONS = (
    Comparison(
        "fib(25)",
        "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))",
        "(fib 25)",
        lambda: py_fib(25),
        25.0,
    ),
    Comparison(
        "tail loop, 1,000,000 steps",
        "(define (count-to n acc) (if (= n 0) acc (count-to (- n 1) (+ acc 1))))",
        "(count-to 1000000 0)",
        lambda: py_count_to(1_000_000),
        30.0,
    ),
    Comparison(
        "map/filter/reduce, 100,000",
        "",
        # even? is the prelude's (= (mod n 2) 0): a DSL closure, like the Python side's lambda.
        "(reduce + 0 (filter even? (map (lambda (x) (* x x)) (range 100000))))",
        lambda: py_map_filter_reduce(100_000),
        None,
    ),
)


# Measuring -------------------------------------------------------------------------------
def timed(fn: Callable[[], object]) -> float:
    """Return the seconds one call of fn takes, starting from a freshly collected heap."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    del result  # freeing what fn built (a 5 MB program's AST) is not part of the time
    return elapsed


def best_times(fns: Sequence[Callable[[], object]], patience: int) -> tuple[list[float], int]:
    """Time fns in turn, round after round, until no best improves for `patience` rounds; bests, rounds."""
    best = [math.inf] * len(fns)
    stale = rounds = 0
    while stale < patience and rounds < MAX_ROUNDS_PER_PATIENCE * patience:
        times = [timed(fn) for fn in fns]
        improved = any(t < b * (1 - IMPROVEMENT) for t, b in zip(times, best, strict=True))
        best = [min(t, b) for t, b in zip(times, best, strict=True)]
        stale = 0 if improved else stale + 1
        rounds += 1
    return best, rounds


def verdict(met: bool) -> str:
    """The status column for a goal."""
    return "met" if met else "MISSED"


# Reporting -------------------------------------------------------------------------------
def header(patience: int) -> str:
    """The lines saying where and how the figures were taken."""
    return (
        f"sexp-tasks interpreter benchmarks: {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs\n"
        f"DSL and CPython timed in turn; each figure is the best of its rounds, which stop after "
        f"{patience} without a new best (at most {MAX_ROUNDS_PER_PATIENCE * patience})"
    )


def ms(seconds: float) -> str:
    """Seconds as right-aligned milliseconds."""
    return f"{seconds * 1000:>10,.1f} ms"


def run_comparison(rt: Runtime, c: Comparison, patience: int) -> bool:
    """Check the DSL result against Python's, then time both and print one row; False on a mismatch."""
    rt.run_source(c.definitions, f"<bench {c.name}>")
    expected = c.python()
    got = rt.run_source(c.expression, f"<bench {c.name}>")
    if got != expected:
        print(f"{c.name:<28} WRONG RESULT: DSL gave {got!r}, CPython {expected!r}; not timed")
        return False
    (dsl, python), rounds = best_times([lambda: rt.run_source(c.expression, "<bench>"), c.python], patience)
    t = Timing(dsl, python, rounds)
    goal = f"<= {c.max_ratio:g}x" if c.max_ratio is not None else "(none)"
    status = verdict(t.ratio <= c.max_ratio) if c.max_ratio is not None else ""
    print(f"{c.name:<28}{ms(t.dsl)}{ms(t.python)}{t.ratio:>9.1f}x{t.rounds:>8}   {goal:<10}{status}".rstrip())
    return True


def count_tokens(text: str) -> int:
    """Return how many of grammar/sexp.lark's terminals text holds, not counting whitespace and comments."""
    return sum(1 for _ in TOKEN.finditer(text))


def run_parse(size_bytes: int, patience: int) -> None:
    """Time reading a generated program; print MB/s (and tokens/s) against the goal."""
    text = generate_program(size_bytes)
    reader = Reader()
    forms = len(reader.read(text, "<generated>"))
    tokens = count_tokens(text)
    (best,), rounds = best_times([lambda: reader.read(text, "<generated>")], patience)
    mb = len(text.encode("utf-8")) / 1e6
    rate = mb / best
    print(f"parse generate_program({size_bytes:,}): {mb:.2f} MB, {tokens:,} tokens, {forms:,} forms")
    goal = f"goal >= {PARSE_GOAL_MB_S:g} MB/s   {verdict(rate >= PARSE_GOAL_MB_S)}"
    print(f"  best of {rounds}: {best:.3f} s, {rate:.2f} MB/s, {tokens / best:,.0f} tokens/s   {goal}")


def run_compile_nested(rt: Runtime, depth: int, patience: int) -> bool:
    """Time compiling `(+ 1 (+ 1 ... 0))` nested depth deep (linear in depth, SPEC §10.1); False
    if it does not give depth."""
    (form,) = Reader().read("(+ 1 " * depth + "0" + ")" * depth, "<nested>")
    got = rt.compiler.compile(form, None)(TOP_FRAME)
    if got != depth:
        print(f"compile nested (+ 1 ...), depth {depth:,}: WRONG RESULT {got!r}; not timed")
        return False
    (best,), rounds = best_times([lambda: rt.compiler.compile(form, None)], patience)
    print(f"compile nested (+ 1 ...), depth {depth:,}: {best * 1000:.1f} ms (best of {rounds})")
    return True


def run_all(patience: int, program_bytes: int) -> bool:
    """Print every benchmark; False if any DSL result was wrong."""
    print(header(patience))
    print()
    print(f"{'benchmark':<28}{'DSL':>13}{'CPython':>13}{'ratio':>10}{'rounds':>8}   {'goal':<10}status")
    rt = Runtime()
    correct = [run_comparison(rt, c, patience) for c in COMPARISONS]
    print()
    correct.append(run_compile_nested(rt, NESTED_DEPTH, patience))
    print()
    run_parse(program_bytes, patience)
    return all(correct)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line: --quick for CI smoke runs, --patience to set how long timing goes on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="patience 1 and a 500 kB program")
    help_patience = "stop timing after this many rounds without a new best (default 5, quick 1)"
    parser.add_argument("--patience", type=int, help=help_patience)
    args = parser.parse_args(argv)
    if args.patience is not None and args.patience < 1:
        parser.error("--patience must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; 0 unless a DSL result disagreed with CPython's."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    patience = args.patience or (1 if args.quick else 5)
    program_bytes = 500_000 if args.quick else 5_000_000
    # Both sides run in the deep-stack thread, so they are timed under the same conditions.
    correct = run_with_deep_stack(lambda: run_all(patience, program_bytes))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
