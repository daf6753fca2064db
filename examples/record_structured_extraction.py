"""Re-record examples/structured_extraction/structured_extraction.cassette.jsonl, offline.

The scripted model answers each email with bare JSON (the request carries the JSON Schema as its
response_format). For Ada's email its first answer gives a quantity as a string, so the Handler
sends the violation back (retries="2") and the repaired answer is right: the cassette holds one
repair. Charles's email is answered right at once.
Run from the checkout root:  .venv/bin/python examples/record_structured_extraction.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

from recording import record

ORDERS = {
    "Ada Lovelace": {
        "customer": "Ada Lovelace",
        "email": "ada@example.org",
        "items": [{"sku": "MUG-204", "quantity": 2}, {"sku": "TEA-101", "quantity": 1}],
    },
    "Charles Babbage": {
        "customer": "Charles Babbage",
        "email": "charles@example.org",
        "items": [
            {"sku": "NBK-310", "quantity": 12},
            {"sku": "PEN-020", "quantity": 3},
            {"sku": "LMP-777", "quantity": 1},
        ],
    },
}
# What a model often does at first: a quantity written out as a string.
FIRST_TRY = {
    **ORDERS["Ada Lovelace"],
    "items": [{"sku": "MUG-204", "quantity": "two"}, {"sku": "TEA-101", "quantity": 1}],
}


def route(body: dict[str, Any]) -> str:
    """The order of the email the request is about; Ada's first answer breaks the schema."""
    if "response_format" not in body:
        raise SystemExit("expected the JSON Schema as response_format (native auto with gpt-4o-mini)")
    email = next(m["content"] for m in body["messages"] if m["role"] == "user")
    name = next(name for name in ORDERS if name in email)
    repairing = body["messages"][-1]["role"] == "user" and len(body["messages"]) > 2
    if name == "Ada Lovelace" and not repairing:
        return json.dumps(FIRST_TRY)
    return json.dumps(ORDERS[name])


if __name__ == "__main__":
    sys.exit(
        record(
            "examples/structured_extraction/structured_extraction.sexp",
            "examples/structured_extraction/tasks",
            "examples/structured_extraction/structured_extraction.cassette.jsonl",
            route,
        )
    )
