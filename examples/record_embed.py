"""Re-record examples/embed.cassette.jsonl, offline.

The scripted model calls lookup_order with the order id the customer's message names, then
answers from what the tool returned. Run from the checkout root:
    .venv/bin/python examples/record_embed.py
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from recording import Scripted, answer, record_script, user_message

CASSETTE = "examples/embed.cassette.jsonl"


def route(body: dict[str, Any]) -> Scripted | str:
    """A lookup_order call for the order the message names; then the answer from its result."""
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if not results:
        order_id = re.search(r"\b[A-Z]-\d+\b", user_message(body))
        arguments = {"order_id": order_id.group(0) if order_id else "?"}
        return Scripted(content=None, tool_calls=[{"name": "lookup_order", "arguments": arguments}])
    order = json.loads(results[-1])
    reply = (
        f"Your {order['item']} shipped on {order['shipped_on']} with {order['carrier']} "
        f"(tracking number {order['tracking']}). It should arrive by {order['expected_by']}; "
        "if it has not by then, reply here and we will look into it."
    )
    return answer(reply, "the lookup_order result for the order")


if __name__ == "__main__":
    sys.exit(record_script("examples/embed.py", CASSETTE, route))
