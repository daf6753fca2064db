"""Generate a large, realistic sexp-tasks program for reader benchmarks.

The mix imitates real workflow files: comments, task definitions whose instructions are
prose, helper procedures with nested control flow, and calls with keyword arguments.
"""

from __future__ import annotations

import random

WORDS = (
    "summarise review the following text file code report issue plan step answer result "
    "model task context notes feedback attempt score draft section heading paragraph"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _expr(rng: random.Random, depth: int) -> str:
    if depth > 3 or rng.random() < 0.25:
        return rng.choice(["x", "acc", "(length items)", "threshold", '"done"', "42", "3.5", "nil", ":key"])
    op = rng.choice(["+", "if", "let", "map", "string-append", "get-field", "cond", "when"])
    if op == "if":
        return f"(if (> {_expr(rng, depth + 1)} 0) {_expr(rng, depth + 1)} {_expr(rng, depth + 1)})"
    if op == "let":
        return f"(let ((y {_expr(rng, depth + 1)}) (z {_expr(rng, depth + 1)})) (list y z))"
    if op == "map":
        return f"(map (lambda (item) {_expr(rng, depth + 1)}) items)"
    if op == "get-field":
        return f'(get-field {_expr(rng, depth + 1)} "content")'
    if op == "cond":
        return f"(cond ((null? x) {_expr(rng, depth + 1)}) (else {_expr(rng, depth + 1)}))"
    if op == "when":
        return f"(when (task-ok? x) (log-message \"step\" {_expr(rng, depth + 1)}))"
    return f"({op} {_expr(rng, depth + 1)} {_expr(rng, depth + 1)})"


def _chunk(rng: random.Random, i: int) -> str:
    kind = rng.random()
    if kind < 0.3:
        return (
            f";; Task {i}: {_sentence(rng, 8)}\n"
            f"(defatom summarize-{i} (params (text string) (style string))\n"
            f'  (instructions "{_sentence(rng, 30)}\\n{{{{text}}}}\\nStyle: {{{{style}}}}")\n'
            f'  (description "{_sentence(rng, 6)}"))\n'
        )
    if kind < 0.8:
        return (
            f";; {_sentence(rng, 10)}\n"
            f"(define (helper-{i} x items threshold &optional (acc 0))\n"
            f"  {_expr(rng, 0)})\n"
        )
    return f'(define result-{i} (summarize-{i % 50} :text "{_sentence(rng, 12)}" :style "brief"))\n'


def generate_program(size_bytes: int, seed: int = 7) -> str:
    """Return program text of at least `size_bytes` characters."""
    rng = random.Random(seed)
    parts: list[str] = []
    total, i = 0, 0
    while total < size_bytes:
        chunk = _chunk(rng, i)
        parts.append(chunk)
        total += len(chunk)
        i += 1
    return "".join(parts)
