"""A support service in plain asyncio: customers' messages are answered concurrently on one event
loop, each with a time limit, and a customer who hangs up has their request cancelled.

Every message goes through `Session.acall("answer-customer", ...)`: the template
(tasks/answer_customer.xml) has the model look the order up with `lookup_order`, a Python tool of
this file, then answer. Orders kept by the legacy warehouse never come back (its lookup hangs), so
one of those requests hits the service's time limit and the other is cancelled when its customer
hangs up; the calls in flight are interrupted, and the other requests are answered meanwhile.
Results are printed as they finish.

Offline, from its recorded cassette (no key needed), from the checkout root:
    python examples/async_service/service.py
Against a real provider (OPENAI_API_KEY set; the first calls import litellm, which takes seconds):
    python examples/async_service/service.py --live --timeout 30
Re-record the cassette, offline:  python examples/record_async_service.py
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sexp_tasks

HERE = Path(__file__).resolve().parent
CASSETTE = HERE / "service.cassette.jsonl"


@dataclass(frozen=True)
class Request:
    """A customer's message, as the service receives it."""

    id: str
    message: str


INCOMING = [
    Request("r1", "Hi, where is my order A-1042? It was a desk lamp."),
    Request("r2", "Has order B-2210 shipped yet?"),
    Request("r3", "I ordered a bookcase, order L-7001. When will it come?"),
    Request("r4", "Where is order L-7002, please?"),
    Request("r5", "Can you check order A-1043 for me?"),
]
# r3's customer hangs up when told that their order is being looked up in the legacy warehouse
HANGS_UP = ("r3", "L-7001")

ORDERS: dict[str, dict[str, Any]] = {
    "A-1042": {"item": "desk lamp", "status": "shipped", "carrier": "UPS", "expected_by": "2025-03-07"},
    "A-1043": {"item": "mug (2)", "status": "delivered", "carrier": "DHL", "delivered_on": "2025-03-02"},
    "B-2210": {"item": "office chair", "status": "packing", "ships_on": "2025-03-10"},
}


class LegacyWarehouse:
    """The legacy warehouse's client, whose lookups never answer (as a socket read that waits would
    not): a cancelled call interrupts one at its next Python instruction. `on_wait(order_id)` is
    told, from the tool's thread, when a lookup starts waiting."""

    def __init__(self) -> None:
        self.on_wait: Callable[[str], None] = lambda order_id: None

    def lookup(self, order_id: str) -> dict[str, Any]:
        self.on_wait(order_id)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
        raise TimeoutError(f"the legacy warehouse did not answer about {order_id}")


LEGACY = LegacyWarehouse()


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its id: its item, status, carrier and dates.

    Args:
        order_id: The order's id, like "A-1042".
    """
    if order_id.startswith("L-"):
        return LEGACY.lookup(order_id)
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return ORDERS[order_id]


class SupportService:
    """Requests from an inbox, answered by `workers` tasks at once, each within `timeout` seconds."""

    def __init__(self, session: sexp_tasks.Session, timeout: float, workers: int) -> None:
        self.session = session
        self.timeout = timeout
        self.workers = workers
        self.inbox: asyncio.Queue[Request] = asyncio.Queue()
        self.in_flight: dict[str, asyncio.Task[tuple[str, str]]] = {}
        self.hung_up: set[str] = set()
        self.outcomes: dict[str, str] = {}

    async def serve(self) -> None:
        """Answer every request put in the inbox, then stop the workers."""
        workers = [asyncio.create_task(self.worker()) for _ in range(self.workers)]
        await self.inbox.join()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    def hang_up(self, request_id: str) -> None:
        """The customer left: cancel their request, in flight or still waiting in the inbox."""
        self.hung_up.add(request_id)
        task = self.in_flight.get(request_id)
        if task is not None:
            task.cancel()  # interrupts the model call, or the tool, it is waiting on

    async def worker(self) -> None:
        while True:
            request = await self.inbox.get()
            try:
                self.report(request, *await self.handle(request))
            finally:
                self.inbox.task_done()

    async def handle(self, request: Request) -> tuple[str, str]:
        """What became of request: its outcome ("answered", "failed", "timed out", "cancelled",
        "error") and a line of text."""
        if request.id in self.hung_up:
            return "cancelled", "the customer hung up before it started"
        answering = asyncio.create_task(self.answer(request))
        self.in_flight[request.id] = answering
        try:
            return await answering
        except sexp_tasks.SexpError as err:  # a setting, a cassette without this request...
            return "error", err.message
        except TimeoutError:
            return "timed out", f"no answer within {self.timeout:g} s; a person will follow up"
        except asyncio.CancelledError:
            if not answering.cancelled():  # this worker itself is being stopped
                raise
            return "cancelled", "the customer hung up"
        finally:
            del self.in_flight[request.id]

    async def answer(self, request: Request) -> tuple[str, str]:
        async with asyncio.timeout(self.timeout):
            result = await self.session.acall("answer-customer", message=request.message)
        if result.failed:
            error = result.error or {}
            return "failed", f"{error.get('reason')}: {error.get('message')}"
        return "answered", result.content

    def report(self, request: Request, outcome: str, text: str) -> None:
        self.outcomes[request.id] = outcome
        print(f"{request.id} {outcome}: {text}", flush=True)


async def serve(session: sexp_tasks.Session, timeout: float, workers: int) -> SupportService:
    """Receive INCOMING and answer it all; HANGS_UP's customer leaves while the legacy warehouse
    looks their order up."""
    service = SupportService(session, timeout, workers)
    loop = asyncio.get_running_loop()
    request_id, order_id = HANGS_UP

    def waiting(waited_for: str) -> None:  # in the tool's thread: the loop's objects are not safe here
        if waited_for == order_id:
            loop.call_soon_threadsafe(service.hang_up, request_id)

    LEGACY.on_wait = waiting
    for request in INCOMING:
        service.inbox.put_nowait(request)
    await service.serve()
    return service


def main(argv: list[str]) -> int:
    """Serve INCOMING: offline from the cassette, --live against the provider, --record FILE to record."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--live", action="store_true", help="call the provider (OPENAI_API_KEY)")
    mode.add_argument("--record", metavar="FILE", help="call the provider and record a cassette")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds a request may take")
    parser.add_argument("--workers", type=int, default=4, help="requests answered at once")
    args = parser.parse_args(argv)
    settings: dict[str, Any] = {"replay": str(CASSETTE)}
    if args.live:
        settings = {}
    elif args.record:
        settings = {"record": args.record}
    try:
        session = sexp_tasks.Session(templates=[str(HERE / "tasks")], quiet=True, **settings)
    except sexp_tasks.SexpError as err:
        print(f"error: {err.message}", file=sys.stderr)
        return 1
    session.tool(lookup_order)
    began = time.monotonic()
    service = asyncio.run(serve(session, args.timeout, args.workers))
    outcomes = list(service.outcomes.values())
    summary = ", ".join(f"{outcomes.count(outcome)} {outcome}" for outcome in sorted(set(outcomes)))
    print(f"{len(outcomes)} requests in {time.monotonic() - began:.1f} s: {summary}")
    return 1 if "error" in outcomes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
