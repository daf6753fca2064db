"""Re-record examples/summarize_dir/summarize_dir.cassette.jsonl, offline.

The scripted model summarises each document (the slower the earlier it comes, so the concurrent
calls finish out of order), answers the raw deploy log with prose instead of the JSON asked for
(so that element is FAILED in its place; the summaries are asked for with the JSON Schema as
response_format, so they come as bare JSON), and writes the digest from the other four summaries.
Run from the checkout root:  .venv/bin/python examples/record_summarize_dir.py
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from recording import Scripted, answer, record, user_message

SUMMARIES = {
    "customer-feedback-q1.txt": {
        "title": "Q1 customer feedback: checkout reliability tops the complaints",
        "summary": "Satisfaction fell to 4.1 of 5 over 412 responses, driven by the 14 March checkout "
        "outage, poor search for misspelled names and missing PDF invoices. Delivery speed and "
        "returns were praised.",
        "actions": [
            "Publish a status page (support team)",
            "Add spelling tolerance to search",
            "Send PDF invoices automatically to business accounts",
        ],
    },
    "incident-2024-03-14-checkout-outage.md": {
        "title": "Checkout outage of 14 March: connection pool exceeded the database limit",
        "summary": "Payments 2.31 raised the pool to 80 connections per instance, 960 in all against a "
        "limit of 500, and checkout failed for 47 minutes for about 3,100 customers. Alerting on the "
        "gateway and a slow rebuild-based rollback made it last longer.",
        "actions": [
            "Cap the connection pool per instance (Priya, 22 March)",
            "Alert on the payments service's error rate (Tomás, 20 March)",
            "Make rollbacks reuse the previous image (platform team, 5 April)",
        ],
    },
    "platform-sync-2024-04-02.md": {
        "title": "Platform sync: Kubernetes 1.29 on 16 April, v1 API ends 30 June",
        "summary": "The team set the Kubernetes upgrade (staging on 9 April), the end of the v1 API and a "
        "Tuesday on-call handover. CI has slowed from 15 to 24 minutes because the integration suite "
        "runs twice.",
        "actions": [
            "Draft the v1 deprecation email (Tomás, 4 April)",
            "Staging plan for Kubernetes 1.29 (Priya, 5 April)",
            "Proposal to split the integration suite (Aisha, 9 April)",
        ],
    },
    "rfc-012-api-rate-limits.md": {
        "title": "RFC 012: per-key rate limits for the public API",
        "summary": "Proposes a 600 requests/minute token bucket per API key (60 for bulk endpoints) with "
        "HTTP 429 and Retry-After, enforced in the gateway after two weeks in report-only mode. "
        "Comments are open until 12 April.",
        "actions": ["Comment on the RFC by 12 April", "Decide plan-based limits and whether webhooks count"],
    },
}

PROSE = (
    "This file is a deployment log rather than a document: web 3.14.0 was rolled out to 12 "
    "production instances in 6m39s, and web-04 failed one health check before recovering."
)

DIGEST = """The week was shaped by the 14 March checkout outage: its review traces the 47 minutes \
to an oversized connection pool, and it is also what customers mentioned most in Q1, pulling \
satisfaction down to 4.1. The platform team set the Kubernetes 1.29 upgrade for 16 April and the \
end of the v1 API for 30 June, while RFC 012 proposes per-key rate limits to keep bulk imports \
from slowing everyone else. A status page, better search and automatic invoices are the \
customer-facing follow-ups.

- Alert on the payments service's error rate (Tomás, 20 March)
- Cap the connection pool per instance (Priya, 22 March)
- Draft the v1 deprecation email (Tomás, 4 April)
- Make rollbacks reuse the previous image (platform team, 5 April)
- Staging plan for Kubernetes 1.29 (Priya, 5 April)
- Proposal to split the integration suite (Aisha, 9 April)
- Comment on RFC 012 (by 12 April)"""


def route(body: dict[str, Any]) -> Scripted | str:
    """A summary for each document (prose for the log), the digest for the reduce step."""
    text = user_message(body)
    document = re.search(r"^Document (\S+):$", text, re.MULTILINE)
    if document is None:
        return answer(DIGEST, "the four summaries")
    name = document.group(1)
    delay = 0.05 * (len(SUMMARIES) - sorted([*SUMMARIES, name]).index(name))
    # The JSON Schema goes as response_format (gpt-4o-mini takes it): the answer is bare JSON.
    native = "response_format" in body
    if name not in SUMMARIES:
        return Scripted(content=PROSE if native else answer(PROSE, "the deploy log"), delay=delay)
    summary = json.dumps(SUMMARIES[name])
    return Scripted(content=summary if native else answer(summary, f"the document {name}"), delay=delay)


if __name__ == "__main__":
    sys.exit(
        record(
            "examples/summarize_dir/summarize_dir.sexp",
            "examples/summarize_dir/tasks",
            "examples/summarize_dir/summarize_dir.cassette.jsonl",
            route,
        )
    )
