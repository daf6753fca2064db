"""Re-record examples/fix_tests/fix_tests.cassette.jsonl, offline.

The scripted model fixes the discount on its first attempt but misses the clamp at zero and the
free-shipping boundary, so the loop really iterates; its second attempt (in a Markdown fence, as
models often answer) makes every test pass. pytest runs for real in between.
Run from the checkout root:  .venv/bin/python examples/record_fix_tests.py [--set python=PATH]
"""

from __future__ import annotations

import sys
from typing import Any

from recording import ROOT, answer, record, user_message

BUGGY = (ROOT / "examples" / "fix_tests" / "project" / "pricing.py").read_text(encoding="utf-8")
FIRST = BUGGY.replace("return amount - percent", "return amount * (1 - percent / 100)")
SECOND = FIRST.replace(
    "return amount * (1 - percent / 100)", "return max(0.0, amount * (1 - percent / 100))"
).replace("amount > FREE_SHIPPING_FROM", "amount >= FREE_SHIPPING_FROM")


def route(body: dict[str, Any]) -> str:
    """The first attempt for the original module, the right one once the discount is a percentage."""
    if "return amount - percent" in user_message(body):
        return answer(FIRST, "the module, its tests and pytest's report")
    return answer(f"```python\n{SECOND}```", "the module, its tests and pytest's report")


if __name__ == "__main__":
    sys.exit(
        record(
            "examples/fix_tests/fix_tests.sexp",
            "examples/fix_tests/tasks",
            "examples/fix_tests/fix_tests.cassette.jsonl",
            route,
            *sys.argv[1:],
        )
    )
