"""Whether a Ray cluster's address answers, asked before Ray is: Ray itself retries an address
that nothing listens at for minutes before it says so."""

from __future__ import annotations

import re
import socket

PROBE_SECONDS = 5.0  # how long a cluster's address may take to accept a connection


def probe(address: str) -> None:
    """ConnectionError when nothing listens at a `host:port` (or `ray://host:port`) address;
    nothing for "auto" and other forms (Ray's own resolution)."""
    found = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)/?", address)
    if found is None:
        return
    try:
        socket.create_connection((found.group(1), int(found.group(2))), timeout=PROBE_SECONDS).close()
    except OSError as err:
        raise ConnectionError(err.strerror or str(err)) from None
