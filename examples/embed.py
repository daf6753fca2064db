"""A workflow called from Python, with a Python function as the model's tool.

The template examples/embed_tasks/answer_customer.xml lists `lookup_order` in its <tools>; the
session below offers the Python function of that name, so the model looks the order up (in this
process, with checked arguments) before it answers. Offline, from its recorded cassette:
    python examples/embed.py
Against a real provider (OPENAI_API_KEY set):  python examples/embed.py --live
Re-record the cassette, offline:  python examples/record_embed.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import sexp_tasks

HERE = Path(__file__).resolve().parent
CASSETTE = HERE / "embed.cassette.jsonl"
MESSAGE = "Hi! I ordered a desk lamp last week (order A-1042) and it has not arrived. Where is it?"

ORDERS: dict[str, dict[str, Any]] = {
    "A-1042": {
        "item": "desk lamp",
        "status": "shipped",
        "shipped_on": "2025-03-03",
        "carrier": "UPS",
        "tracking": "1Z999AA10123456784",
        "expected_by": "2025-03-07",
    },
}


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its id: its item, status, carrier, tracking number and expected date.

    Args:
        order_id: The order's id, like "A-1042".
    """
    print(f"lookup_order({order_id!r})")
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return ORDERS[order_id]


def main(argv: list[str]) -> int:
    """Answer MESSAGE: offline from the cassette, --live against the provider, --record FILE to record."""
    settings: dict[str, Any] = {"replay": str(CASSETTE)}
    if "--live" in argv:
        settings = {}
    elif "--record" in argv:
        settings = {"record": argv[argv.index("--record") + 1]}
    templates = [str(HERE / "embed_tasks")]
    session = sexp_tasks.Session(model="openai/gpt-4o-mini", templates=templates, **settings)
    session.tool(lookup_order)
    try:
        result = session.call("answer-customer", message=MESSAGE)
    except sexp_tasks.SexpError as err:  # a setting, a template, a cassette without this request...
        print(f"error: {err.message}", file=sys.stderr)
        return 1
    if result.failed:
        print(f"failed: {result.error}", file=sys.stderr)
        return 1
    print(result.content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
