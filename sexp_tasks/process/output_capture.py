"""What is kept of a command's output stream: its first and last halves, cut between characters,
with a line saying how much of the middle was dropped."""

from __future__ import annotations

CHUNK = 64 * 1024  # bytes read from a pipe at once


class OutputCapture:
    """One output stream: its first half-limit bytes, its last half-limit bytes, and its size."""

    def __init__(self, limit: int) -> None:
        limit = max(limit, 0)
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_limit + CHUNK:  # trim now and then, not at every chunk
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> tuple[str, int]:
        """The text kept, with a line saying how much was dropped if any was; the bytes dropped."""
        if self.total <= self.head_limit + self.tail_limit:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace"), 0
        head = _whole_characters_before(bytes(self.head))
        tail = _whole_characters_after(bytes(self.tail[len(self.tail) - self.tail_limit :]))
        dropped = self.total - len(head) - len(tail)
        return f"{_decode(head)}\n[... {dropped} bytes dropped ...]\n{_decode(tail)}", dropped


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _whole_characters_before(data: bytes) -> bytes:
    """data without a UTF-8 sequence cut off at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xC0:
            length = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if length == back else data[:-back]
        return data
    return data


def _whole_characters_after(data: bytes) -> bytes:
    """data without the continuation bytes of a UTF-8 sequence cut off at its start."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]
