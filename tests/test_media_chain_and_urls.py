"""Images and PDFs with a fallback chain and behind secret URLs (SPEC §11.4), against the local
OpenAI-compatible server: every model of a call's chain is checked before any request (an input
is refused, a file of `:files` left out, naming the model that cannot take it), and an image's
URL is sent as it is but kept and shown with its credentials and signed query masked (the store's
bytes, `sexp trace`, `sexp tasks render`)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, store_rows, write
from llm_server import LLMServer, attached
from test_image_inputs import DESCRIBE, SUMMARIZE  # the same two templates

from sexp_tasks.handler.data_urls import elide_messages, elided_url

KEY = "sk-fake-media-chain-7d3e1f"
CHAIN = "openai/gpt-4o-mini,openai/gpt-3.5-turbo"  # the second takes no images (supports_vision false)
LOOK = """<task name="look" type="atomic">
  <description>Look at the files</description>
  <instructions>What do the files show?</instructions>
</task>
"""
PASSWORD = "imgpass-7c1e0b"
SIGNATURE = "deadbeefcafe0123456789"
TOKEN = "tok-5a5a5a5a9e"
SECRET_URL = (
    f"https://imguser:{PASSWORD}@img.example.com/cats/cat.png"
    f"?X-Amz-Signature={SIGNATURE}&token={TOKEN}&size=2"
)
MASKED_URL = "https://imguser:***@img.example.com/cats/cat.png?X-Amz-Signature=***&token=***&size=2"
SECRETS = (PASSWORD, SIGNATURE, TOKEN)


def png() -> bytes:
    """A minimal valid PNG: one red pixel."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def tasks(workspace: Path) -> Path:
    write(workspace / "tasks" / "describe.xml", DESCRIBE)
    write(workspace / "tasks" / "summarize.xml", SUMMARIZE)
    write(workspace / "tasks" / "look.xml", LOOK)
    write(workspace / "notes.txt", "some notes")
    (workspace / "photo.png").write_bytes(png())
    (workspace / "doc.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    return workspace


def run_program(cli: Cli, workspace: Path, server: LLMServer, source: str, model: str = CHAIN) -> Any:
    write(workspace / "p.sexp", source)
    env = {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": model, "OPENAI_API_KEY": KEY}
    return cli("run", "p.sexp", env=env)


# Every model of the chain ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            '(describe :photo "photo.png")',
            "task 'describe': input 'photo' (photo.png): model openai/gpt-3.5-turbo does not take images"
            " (litellm's supports_vision is false for it)",
        ),
        (
            '(summarize :doc "doc.pdf")',
            "task 'summarize': input 'doc' (doc.pdf): model openai/gpt-3.5-turbo does not take PDFs"
            " (litellm's supports_pdf_input is false for it)",
        ),
    ],
)
def test_an_input_a_later_model_of_the_chain_cannot_take_is_an_error_before_any_request(
    cli: Cli, tasks: Path, server: LLMServer, call: str, message: str
) -> None:
    status, _, err = run_program(cli, tasks, server, call)
    assert status == 1
    assert "input_validation_failure" in err and message in err and "Traceback" not in err
    assert server.requests == []


def test_a_file_a_later_model_of_the_chain_cannot_take_is_left_out_naming_that_model(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    source = '(task-content (look :files (list "notes.txt" "photo.png")))'
    status, out, err = run_program(cli, tasks, server, source)
    assert (status, out) == (0, '"ok"\n')
    assert (
        "look: file 'photo.png' not included: model openai/gpt-3.5-turbo does not take images"
        " (litellm's supports_vision is false for it)"
    ) in err
    [request] = server.requests  # the first model answered, without the image its fallback cannot take
    assert request.body["model"] == "gpt-4o-mini"
    assert attached(request.body) == [] and "some notes" in json.dumps(request.body)


def test_a_file_every_model_of_the_chain_takes_is_sent_with_a_warning_per_unknown_model(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    source = '(task-content (look :files (list "photo.png")))'
    status, _, err = run_program(
        cli, tasks, server, source, model="openai/gpt-4o-mini,openai/our-local-vision"
    )
    assert status == 0
    assert "litellm does not know model openai/our-local-vision, nor whether it takes images" in err
    assert attached(server.requests[0].body) == [("image/png", png())]


# Secret URLs ---------------------------------------------------------------------------------------


def test_a_secret_url_is_sent_as_it_is_but_kept_and_shown_masked(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    server.script("<output>a cat</output>")
    status, _, err = run_program(
        cli, tasks, server, f'(describe :photo "{SECRET_URL}")', model="openai/gpt-4o-mini"
    )
    assert (status, err) == (0, "")
    [request] = server.requests
    assert attached(request.body) == [("url", SECRET_URL)]  # the model gets the real URL
    text = request.body["messages"][-1]["content"][0]["text"]
    assert text == f"Describe [image: {MASKED_URL}] in one sentence."  # the label: masked
    store = b"".join(
        path.read_bytes() for path in (tasks / ".sexp").glob("store.db*") if path.is_file()
    )  # with its WAL
    assert MASKED_URL.encode() in store and not any(secret.encode() in store for secret in SECRETS)
    [(run_id,)] = store_rows(tasks, "SELECT id FROM runs")
    for args in (("trace", run_id), ("trace", run_id, "--full"), ("trace", run_id, "--json")):
        status, out, _ = cli(*args)
        assert status == 0 and not any(secret in out for secret in SECRETS), args
    status, out, _ = cli("trace", run_id, "--full")
    assert MASKED_URL in out


@pytest.mark.parametrize("task", ["describe", "summarize"])
def test_render_masks_a_secret_url(cli: Cli, tasks: Path, task: str) -> None:
    name = "photo" if task == "describe" else "doc"
    url = SECRET_URL.replace("cat.png", "report") if task == "summarize" else SECRET_URL
    for extra in ((), ("--json",)):
        status, out, err = cli(
            "tasks", "render", task, "--model", "openai/gpt-4o-mini", "--set", f"{name}={url}", *extra
        )
        assert status == 0, err
        assert not any(secret in out for secret in SECRETS) and "imguser:***@img.example.com" in out


def test_an_elided_record_masks_urls_and_stays_as_it_is_when_elided_again() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": SECRET_URL}},
                {"type": "file", "file": {"file_id": SECRET_URL.replace("cat.png", "r.pdf")}},
            ],
        }
    ]
    once = elide_messages(messages)
    assert once[0]["content"][1]["image_url"]["url"] == MASKED_URL
    assert once[0]["content"][2]["file"]["file_id"] == MASKED_URL.replace("cat.png", "r.pdf")
    assert elide_messages(once) == once and elided_url(MASKED_URL) == MASKED_URL
    assert messages[0]["content"][1]["image_url"]["url"] == SECRET_URL  # the request sent: untouched


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (SECRET_URL, f"input 'photo' ({MASKED_URL}): model openai/gpt-3.5-turbo does not take images"),
        (SECRET_URL.replace("cat.png", "cat.pdf"), f"'{MASKED_URL.replace('cat.png', 'cat.pdf')}' is a PDF"),
        (SECRET_URL.replace("https", "ftp"), f"'{MASKED_URL.replace('https', 'ftp')}' is neither a path"),
    ],
)
def test_an_error_names_a_secret_url_masked(
    cli: Cli, tasks: Path, server: LLMServer, url: str, shown: str
) -> None:
    status, _, err = run_program(cli, tasks, server, f'(describe :photo "{url}")')
    assert status == 1 and shown in err and not any(secret in err for secret in SECRETS)
    assert server.requests == []
