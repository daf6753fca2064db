"""Re-record examples/async_service/service.cassette.jsonl, offline.

The scripted model calls lookup_order with the order id the customer's message names, then
answers from what the tool returned. The legacy warehouse's orders never get that far (their
lookup hangs until the service gives up on them), so the cassette holds only their first turn.
Run from the checkout root:
    .venv/bin/python examples/record_async_service.py
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from recording import Scripted, answer, record_script, user_message

CASSETTE = "examples/async_service/service.cassette.jsonl"


def route(body: dict[str, Any]) -> Scripted | str:
    """A lookup_order call for the order the message names; then the answer from its result."""
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if not results:
        order_id = re.search(r"\b[A-Z]-\d+\b", user_message(body))
        arguments = {"order_id": order_id.group(0) if order_id else "?"}
        return Scripted(content=None, tool_calls=[{"name": "lookup_order", "arguments": arguments}])
    order = json.loads(results[-1])
    if order["status"] == "shipped":
        reply = f"Your {order['item']} is on its way with {order['carrier']}"
        reply += f" and should arrive by {order['expected_by']}."
    elif order["status"] == "delivered":
        reply = f"Your {order['item']} was delivered by {order['carrier']} on {order['delivered_on']}."
    else:
        reply = f"Your {order['item']} is being packed and ships on {order['ships_on']}."
    return answer(reply, "the lookup_order result for the order")


if __name__ == "__main__":
    # The time limit leaves room for litellm's first import (seconds; a replayed run makes none).
    sys.exit(record_script("examples/async_service/service.py", CASSETTE, route, "--timeout", "15"))
