"""The live region of a terminal's stderr (sexp_tasks/tasks/live_region.py, SPEC §11.3): progress
bars and the answers of model calls in flight, drawn on lines of their own and erased when they
end. Against a fake terminal: a stream that says it is a tty, and an emulator of the few escapes
the region writes, so a test reads the screen as a user would."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled, wait_for
from llm_server import LLMServer, Scripted

from sexp_tasks.config import Settings
from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt
from sexp_tasks.runtime import Runtime
from sexp_tasks.tasks.live_region import LiveRegion, live_region
from sexp_tasks.tasks.progress import Progress


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal; `frames` holds where each write ended."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[int] = []

    def write(self, text: str) -> int:
        written = super().write(text)
        self.frames.append(self.tell())
        return written

    def isatty(self) -> bool:
        return True


class Broken(Terminal):
    """A terminal that went away: every write fails."""

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def screen(written: str) -> list[str]:
    """The lines a terminal shows after written (\\r, \\n, cursor up `ESC[nA`, erase down `ESC[J`)."""
    lines, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[(\d*)([AJ])|(\r)|(\n)|([^\x1b\r\n])", written):
        count, code, cr, nl, char = token
        if code == "A":
            row -= int(count or 1)
        elif code == "J":
            lines[row] = lines[row][:col]
            del lines[row + 1 :]
        elif cr:
            col = 0
        elif nl:
            row, col = row + 1, 0
            if row == len(lines):
                lines.append("")
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + char + line[col + 1 :]
            col += 1
    return [line.rstrip() for line in lines if line.strip()]


def region(
    columns: int = 40, rows: int = 10, clock: Clock | None = None, interval: float = 0.05
) -> tuple[Terminal, LiveRegion]:
    terminal = Terminal()
    return terminal, LiveRegion(terminal, interval, clock or Clock(), size=lambda: (columns, rows))


class Bar:
    def __init__(self, text: str) -> None:
        self.text = text

    def line(self) -> str:
        return self.text


def test_an_answer_is_shown_as_it_arrives_and_erased_when_it_ends() -> None:
    terminal, live = region()
    answer = live.open("greet")
    answer.write("Hello")
    assert screen(terminal.getvalue()) == ["greet: Hello"]
    answer.write(" there")
    answer.close()
    assert screen(terminal.getvalue()) == []
    answer.write(" late")  # a closed answer shows nothing more
    assert screen(terminal.getvalue()) == []


def test_one_answer_takes_the_last_lines_that_fit_its_newlines_kept() -> None:
    terminal, live = region(columns=21, rows=5)  # 20 columns used, 3 lines of room
    answer = live.open("poem")
    answer.write("one\ntwo\nthree\nfour is a rather long line")
    assert screen(terminal.getvalue()) == ["three", "four is a rather lon", "g line"]


def test_several_answers_take_a_line_each_their_tails_fitted_to_the_width() -> None:
    terminal, live = region(columns=21, rows=10, interval=0.0)  # the layout, not the pace
    live.add(Bar("pmap [--] 0/3"))
    first, second = live.open("a"), live.open("b")
    first.write("line one\nline two and more")
    second.write("short")
    assert screen(terminal.getvalue()) == ["pmap [--] 0/3", "a: …ine two and more", "b: short"]
    assert all(len(line) <= 20 for line in screen(terminal.getvalue()))
    first.close()
    assert screen(terminal.getvalue()) == ["pmap [--] 0/3", "b: short"]


def test_answers_that_do_not_fit_are_counted_in_a_more_line() -> None:
    terminal, live = region(columns=40, rows=5, interval=0.0)  # 3 lines: a bar, an answer, and `… 2 more`
    live.add(Bar("pmap"))
    answers = [live.open(f"t{i}") for i in range(3)]
    for i, answer in enumerate(answers):
        answer.write(f"text {i}")
    assert screen(terminal.getvalue()) == ["pmap", "t0: text 0", "… 2 more"]
    answers[0].close()
    answers[1].close()
    assert screen(terminal.getvalue()) == ["pmap", "t2: text 2"]


def test_wide_characters_are_fitted_by_the_columns_they_take() -> None:
    terminal, live = region(columns=11, rows=10, interval=0.0)  # 10 columns used
    first, second = live.open("t"), live.open("u")
    first.write("日本語のテキスト")  # 16 columns of 8 characters
    second.write("ok")
    line = screen(terminal.getvalue())[0]
    assert line == "t: …キスト" and sum(2 if ord(c) > 0x2E80 else 1 for c in line) <= 10
    second.close()
    assert screen(terminal.getvalue()) == ["t: 日本語", "のテキスト"]


def test_control_characters_in_an_answer_are_shown_as_spaces() -> None:
    terminal, live = region()
    live.open("t").write("a\x1b[2Jb\tc")
    assert screen(terminal.getvalue()) == ["t: a [2Jb c"]


def test_text_is_drawn_at_most_every_interval_and_a_timer_draws_the_last_piece() -> None:
    clock = Clock()
    terminal, live = region(clock=clock)
    answer = live.open("t")
    answer.write("a")  # the first drawing
    answer.write("b")  # too soon: drawn later, by the timer
    assert screen(terminal.getvalue()) == ["t: a"]
    clock.now = 1.0  # the timer fires on real time; by then the clock has moved
    wait_for(lambda: screen(terminal.getvalue()) == ["t: ab"], scaled(5), "the timer's drawing")


def test_a_bar_alone_is_drawn_in_place_as_before() -> None:
    terminal = Terminal()
    with Progress("work", 2, terminal, enabled=True, clock=Clock()) as bar:
        bar.advance(2)
    assert "\x1b" not in terminal.getvalue()  # one line: a carriage return and spaces, no escapes
    assert terminal.getvalue().endswith("\r") and screen(terminal.getvalue()) == []


def test_a_bar_and_an_answer_share_the_stream_s_one_region() -> None:
    terminal = Terminal()
    assert live_region(terminal) is live_region(terminal)
    with Progress("pmap", 3, terminal, enabled=True, clock=Clock()):
        answer = live_region(terminal).open("greet")
        answer.write("Hi")  # just after the bar's drawing: drawn by the timer
        wait_for(lambda: screen(terminal.getvalue())[1:] == ["greet: Hi"], scaled(5), "the answer's line")
        assert screen(terminal.getvalue())[0].startswith("pmap [")
        answer.close()
    assert screen(terminal.getvalue()) == []


def test_answers_written_from_many_threads_never_share_a_line() -> None:
    terminal, live = region(columns=80, rows=30, interval=0.0)

    def call(i: int) -> None:
        answer = live.open(f"t{i}")
        for _ in range(50):
            answer.write(str(i))
        answer.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    frames = terminal.getvalue()
    for cut in terminal.frames:  # the screen after each of the region's writes
        for line in screen(frames[:cut]):
            label, _, text = line.partition(": ")
            assert set(text) <= {label[1:]}, line  # each line holds its own call's text alone
    assert screen(frames) == []


def test_a_broken_terminal_stops_the_drawing_not_the_work() -> None:
    live = LiveRegion(Broken(), size=lambda: (80, 24))
    answer = live.open("t")
    answer.write("text")  # the write fails: nothing raised
    answer.write("more")
    answer.close()
    assert live.enabled is False


def test_what_the_program_prints_goes_above_the_region(workspace: Path) -> None:
    terminal = Terminal()
    runtime = Runtime(Settings(workspace=str(workspace)), out=terminal, err=terminal)
    assert runtime.live is not None
    answer = runtime.live.open("t")
    answer.write("streaming")
    runtime.write_output("printed\n")
    assert screen(terminal.getvalue()) == ["printed", "t: streaming"]
    answer.close()
    assert screen(terminal.getvalue()) == ["printed"]


@pytest.mark.parametrize(
    "settings, terminal, shown",
    [
        ({}, True, True),
        ({"stream": False}, True, False),
        ({"quiet": True}, True, False),
        ({}, False, False),
    ],
)
def test_the_runtime_streams_to_its_region_only_on_a_terminal_with_stream_on_and_not_quiet(
    workspace: Path, settings: dict[str, Any], terminal: bool, shown: bool
) -> None:
    err = Terminal() if terminal else io.StringIO()
    runtime = Runtime(Settings(workspace=str(workspace), **settings), err=err, show_answers=True)
    assert (runtime.tasks.open_stream is not None) == shown


# The handler's side: a stream per request sent, closed when it ends --------------------------------


class Opened:
    """An open_stream hook that keeps every stream it opened: its label, text and whether it closed."""

    def __init__(self) -> None:
        self.streams: list[dict[str, Any]] = []

    def __call__(self, label: str) -> Opened.Stream:
        stream = Opened.Stream(label)
        self.streams.append(stream.seen)
        return stream

    class Stream:
        def __init__(self, label: str) -> None:
            self.seen: dict[str, Any] = {"label": label, "text": "", "closed": False}

        def write(self, text: str) -> None:
            assert not self.seen["closed"]
            self.seen["text"] += text

        def close(self) -> None:
            self.seen["closed"] = True


def test_each_request_sent_opens_a_stream_closed_when_it_ends_a_broken_one_too(
    server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-display")
    pieces = ["<output>", "Hello", " there", "</output>"]
    server.script(Scripted(pieces=pieces, drop_after=2), Scripted(pieces=pieces))
    opened = Opened()
    config = HandlerConfig(api_base=server.base_url, num_retries=1, retry_delay=0.01, timeout=scaled(10))
    prompt = TaskPrompt("greet", "Say hello.", models=("openai/test-model",))
    result = Handler(config, HandlerServices(open_stream=opened)).run(prompt)
    assert result.content == "Hello there"
    assert opened.streams == [
        {"label": "greet", "text": "<output>", "closed": True},  # broken, then sent again
        {"label": "greet", "text": "".join(pieces), "closed": True},
    ]
