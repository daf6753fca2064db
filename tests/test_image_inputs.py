"""Images and PDFs as inputs (SPEC §11.4): `image` and `file` inputs, and images or PDFs among a
call's files, sent as content parts of the user message to the local OpenAI-compatible server;
every refusal (missing, outside the workspace, too large, not an image, a model that takes no
images) before any request; the data elided wherever a request is shown or kept; resume, reuse
and replay of a run that sent one."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, store_rows, write
from llm_server import LLMServer, attached, describe_attached

import sexp_tasks
from sexp_tasks.handler import Handler, HandlerConfig, HandlerServices, TaskPrompt
from sexp_tasks.handler.attachments import MAX_ATTACHMENT_BYTES, Attachment, sniff
from sexp_tasks.handler.data_urls import describe_part, elided_url, format_size
from sexp_tasks.handler.model_request import ModelRequest

KEY = "sk-fake-images-1a2b3c"
DESCRIBE = """<task name="describe" type="atomic">
  <description>Describe a picture</description>
  <inputs><input name="photo" type="image">the picture</input></inputs>
  <instructions>Describe {{photo}} in one sentence.</instructions>
</task>
"""
SUMMARIZE = """<task name="summarize" type="atomic">
  <description>Summarise a document</description>
  <inputs><input name="doc" type="file">the document</input></inputs>
  <instructions>Summarise {{doc}}.</instructions>
</task>
"""
PDF_BYTES = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
JPEG_BYTES = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"


def png(width: int = 1, height: int = 1) -> bytes:
    """A minimal valid PNG: one red pixel a row."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def server(server: LLMServer) -> LLMServer:
    server.answer = describe_attached  # the image-checking mode: the answer names what arrived
    return server


@pytest.fixture
def tasks(workspace: Path) -> Path:
    write(workspace / "tasks" / "describe.xml", DESCRIBE)
    write(workspace / "tasks" / "summarize.xml", SUMMARIZE)
    (workspace / "photo.png").write_bytes(png())
    (workspace / "doc.pdf").write_bytes(PDF_BYTES)
    return workspace


def env(server: LLMServer, model: str = "openai/gpt-4o-mini") -> dict[str, str]:
    return {"SEXP_API_BASE": server.base_url, "SEXP_MODEL": model, "OPENAI_API_KEY": KEY}


def user_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    assert isinstance(content, list), content
    return content


def run_program(
    cli: Cli,
    workspace: Path,
    server: LLMServer,
    source: str,
    *args: str,
    model: str = "openai/gpt-4o-mini",
    **options: Any,
) -> Any:
    write(workspace / "p.sexp", source)
    return cli("run", *args, "p.sexp", env=env(server, model), **options)


# Sent as content parts ---------------------------------------------------------------------------


def test_an_image_input_is_sent_as_a_data_url_part_after_the_text(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    status, out, err = run_program(cli, tasks, server, '(task-content (describe :photo "photo.png"))')
    assert (status, err) == (0, "")
    assert out == f'"image/png {len(png())} bytes"\n'
    [request] = server.requests
    parts = user_parts(request.body)
    assert [part["type"] for part in parts] == ["text", "text", "image_url"]
    assert parts[0]["text"] == "Describe [image: photo.png] in one sentence."  # the placeholder: the label
    assert parts[1]["text"] == "[image: photo.png]"  # the label, right before the image
    assert parts[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert attached(request.body) == [("image/png", png())]  # decoded: the file's very bytes


def test_the_media_type_comes_from_the_bytes_not_the_name(cli: Cli, tasks: Path, server: LLMServer) -> None:
    (tasks / "really-a.png").write_bytes(JPEG_BYTES)
    status, _, _ = run_program(cli, tasks, server, '(describe :photo "really-a.png")')
    assert status == 0
    assert attached(server.requests[0].body) == [("image/jpeg", JPEG_BYTES)]


def test_a_pdf_input_is_sent_as_a_file_part_with_file_data(cli: Cli, tasks: Path, server: LLMServer) -> None:
    status, out, err = run_program(cli, tasks, server, '(task-content (summarize :doc "doc.pdf"))')
    assert (status, err) == (0, "")
    assert out == f'"application/pdf {len(PDF_BYTES)} bytes"\n'
    parts = user_parts(server.requests[0].body)
    assert parts[0]["text"] == "Summarise [file: doc.pdf]."
    assert parts[2]["type"] == "file" and parts[2]["file"]["filename"] == "doc.pdf"
    assert attached(server.requests[0].body) == [("application/pdf", PDF_BYTES)]


def test_a_url_is_passed_as_it_is(cli: Cli, tasks: Path, server: LLMServer) -> None:
    url = "https://example.com/pictures/cat.png"
    status, out, err = run_program(cli, tasks, server, f'(task-content (describe :photo "{url}"))')
    assert (status, err) == (0, "")
    assert out == f'"url {url}"\n'
    parts = user_parts(server.requests[0].body)
    assert parts[0]["text"] == f"Describe [image: {url}] in one sentence."
    assert parts[2] == {"type": "image_url", "image_url": {"url": url}}


LOOK = """<task name="look" type="atomic">
  <description>Look at the files</description>
  <instructions>What do the files show?</instructions>
</task>
"""


def test_a_pdf_url_is_passed_as_litellms_file_id(cli: Cli, tasks: Path) -> None:
    # Not sent here: for an openai/ model litellm fetches a PDF's URL itself (OpenAI's chat API
    # takes none) and refuses a 127.0.0.1 one; the request is what `sexp tasks render` shows.
    url = "https://example.com/reports/q3"  # a file input's URL is a PDF unless its name says image
    status, out, _ = cli(
        "tasks", "render", "summarize", "--model", "openai/gpt-4o-mini", "--set", f"doc={url}", "--json"
    )
    assert status == 0
    parts = json.loads(out)["messages"][-1]["content"]
    assert parts[1:] == [
        {"type": "text", "text": f"[file: {url}]"},
        {"type": "file", "file": {"file_id": url}},
    ]
    status, out, _ = cli(
        "tasks", "render", "summarize", "--model", "openai/gpt-4o-mini", "--set", "doc=https://x.org/a.PNG"
    )
    assert status == 0 and out.endswith("[image: https://x.org/a.PNG]\n[image_url: https://x.org/a.PNG]\n")


def test_a_streamed_call_sends_the_image_too(
    tasks: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    session = sexp_tasks.Session(model="openai/gpt-4o-mini", api_base=server.base_url, workspace=str(tasks))
    *pieces, result = session.stream("describe", photo="photo.png")
    assert "".join(pieces) == f"<output>image/png {len(png())} bytes</output>"
    assert result.content == f"image/png {len(png())} bytes"
    [request] = server.requests
    assert request.body["stream"] is True and attached(request.body) == [("image/png", png())]


def test_an_image_among_the_files_is_sent_as_a_part(cli: Cli, tasks: Path, server: LLMServer) -> None:
    write(tasks / "notes.txt", "some notes")
    write(tasks / "tasks" / "look.xml", LOOK)
    status, out, err = run_program(
        cli, tasks, server, '(task-content (look :files (list "notes.txt" "photo.png")))'
    )
    assert (status, err) == (0, "")
    assert out == f'"image/png {len(png())} bytes"\n'
    parts = user_parts(server.requests[-1].body)
    assert '<file path="notes.txt">\nsome notes\n</file>' in parts[0]["text"]
    assert "photo.png" not in parts[0]["text"] and parts[1]["text"] == "[image: photo.png]"
    assert attached(server.requests[-1].body) == [("image/png", png())]


def test_an_image_among_the_files_of_a_model_without_vision_is_left_out_with_a_warning(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    write(tasks / "notes.txt", "some notes")
    write(tasks / "tasks" / "look.xml", LOOK)
    source = '(task-content (look :files (list "notes.txt" "photo.png")))'
    status, out, err = run_program(cli, tasks, server, source, model="openai/gpt-3.5-turbo")
    assert (status, out) == (0, '"nothing attached"\n')
    assert (
        "look: file 'photo.png' not included: model openai/gpt-3.5-turbo does not take images"
        " (litellm's supports_vision is false for it)"
    ) in err
    [request] = server.requests
    assert isinstance(request.body["messages"][-1]["content"], str)  # the text files alone


# Refused before any request ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("missing.png", "task 'describe': input 'photo': no such file 'missing.png'"),
        ("../outside.png", "task 'describe': input 'photo': '../outside.png' is outside the workspace"),
        ("prog.exe", "task 'describe': input 'photo': 'prog.exe' is not an image (PNG, JPEG, GIF or WebP)"),
        ("doc.pdf", "task 'describe': input 'photo': 'doc.pdf' is a PDF, not an image: declare the input"),
        (
            "ftp://example.com/a.png",
            "'ftp://example.com/a.png' is neither a path in the workspace nor an http(s) URL",
        ),
        ("tasks", "task 'describe': input 'photo': 'tasks' is a directory"),
    ],
)
def test_an_image_that_cannot_be_sent_is_an_error_before_any_request(
    cli: Cli, tasks: Path, server: LLMServer, value: str, message: str
) -> None:
    (tasks / "prog.exe").write_bytes(b"MZ\x90\x00" + bytes(60))
    (tasks.parent / "outside.png").write_bytes(png())
    status, _, err = run_program(cli, tasks, server, f'(describe :photo "{value}")')
    assert status == 1
    assert "input_validation_failure" in err and message in err and "Traceback" not in err
    assert server.requests == []


def test_a_file_over_the_size_limit_is_an_error_naming_the_input_and_the_file(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    with (tasks / "huge.png").open("wb") as file:  # sparse: the size without the writing
        file.write(png())
        file.truncate(MAX_ATTACHMENT_BYTES + 1)
    status, _, err = run_program(cli, tasks, server, '(describe :photo "huge.png")')
    assert status == 1
    assert "task 'describe': input 'photo': 'huge.png' is 20 MB, over the 20 MB limit" in err
    assert server.requests == []


def test_a_model_without_vision_is_an_error_before_any_request(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    status, _, err = run_program(
        cli, tasks, server, '(describe :photo "photo.png")', model="openai/gpt-3.5-turbo"
    )
    assert status == 1
    assert (
        "task 'describe': input 'photo' (photo.png): model openai/gpt-3.5-turbo does not take images"
        " (litellm's supports_vision is false for it)"
    ) in err
    status, _, err = run_program(
        cli, tasks, server, '(summarize :doc "doc.pdf")', model="openai/gpt-3.5-turbo"
    )
    assert status == 1 and "does not take PDFs (litellm's supports_pdf_input is false for it)" in err
    assert server.requests == []


def test_a_model_litellm_does_not_know_is_sent_the_image_with_a_warning(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    status, out, err = run_program(
        cli, tasks, server, '(task-content (describe :photo "photo.png"))', model="openai/our-local-vision"
    )
    assert status == 0 and out == f'"image/png {len(png())} bytes"\n'
    assert "litellm does not know model openai/our-local-vision, nor whether it takes images" in err
    assert len(server.requests) == 1


def test_an_image_input_takes_a_string(cli: Cli, tasks: Path, server: LLMServer) -> None:
    status, _, err = run_program(cli, tasks, server, "(describe :photo 42)")
    assert status == 1
    assert "input 'photo' must be image (a path in the workspace or an http(s) URL), got integer" in err


def test_defatom_declares_image_inputs_and_refuses_unknown_types(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    source = """
(defatom look (params (photo image)) (instructions "What is in {{photo}}?"))
(task-content (look :photo "photo.png"))
"""
    status, out, _ = run_program(cli, tasks, server, source)
    assert status == 0 and out == f'"image/png {len(png())} bytes"\n'
    assert user_parts(server.requests[0].body)[0]["text"] == "What is in [image: photo.png]?"
    status, _, err = run_program(
        cli, tasks, server, '(defatom look (params (photo picture)) (instructions "x"))'
    )
    assert status == 1 and "(photo picture): unknown type (known: string," in err


# Shown and kept without the data -----------------------------------------------------------------


def test_render_shows_the_parts_with_the_data_elided(cli: Cli, tasks: Path) -> None:
    status, out, err = cli(
        "tasks", "render", "describe", "--model", "openai/gpt-4o-mini", "--set", "photo=photo.png"
    )
    assert (status, err) == (0, "")
    assert out.endswith(
        "[user]\nDescribe [image: photo.png] in one sentence.\n[image: photo.png]\n"
        f"[image/png, {len(png())} bytes, data elided]\n"
    )
    status, out, _ = cli(
        "tasks", "render", "summarize", "--model", "openai/gpt-4o-mini", "--set", "doc=doc.pdf"
    )
    assert status == 0 and f"[application/pdf, {len(PDF_BYTES)} bytes, data elided]" in out
    status, out, _ = cli(
        "tasks", "render", "describe", "--model", "openai/gpt-4o-mini", "--set", "photo=photo.png", "--json"
    )
    assert status == 0 and "base64" not in out and ";sha256=" in out


def test_neither_the_store_nor_the_trace_keeps_the_data(cli: Cli, tasks: Path, server: LLMServer) -> None:
    big = png(200, 200)
    (tasks / "big.png").write_bytes(big)
    status, _, _ = run_program(cli, tasks, server, '(describe :photo "big.png")')
    assert status == 0
    [(run_id,)] = store_rows(tasks, "SELECT id FROM runs")
    kept = "".join(str(row) for row in store_rows(tasks, "SELECT * FROM steps"))
    assert "base64" not in kept and len(kept) < 20_000
    status, out, _ = cli("trace", run_id, "--full")
    assert status == 0 and f"[image/png, {format_size(len(big))}, data elided]" in out and "base64" not in out


# Resume, reuse and replay --------------------------------------------------------------------------


def test_a_resumed_run_does_not_send_the_image_again_until_it_changes(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    source = '(print (task-content (describe :photo "photo.png")))\n(error "stop here")\n'
    status, out, err = run_program(cli, tasks, server, source, run_lines=True)
    assert status == 1 and "stop here" in err
    run_id = err.split("run: ", 1)[1][:12]
    status, _, _ = cli("run", "--resume", run_id, "p.sexp", env=env(server))
    assert len(server.requests) == 1  # the task call was answered from the store
    (tasks / "photo.png").write_bytes(png(2, 1))
    status, out, _ = cli("run", "--resume", run_id, "p.sexp", env=env(server))
    assert len(server.requests) == 2 and attached(server.requests[1].body) == [("image/png", png(2, 1))]


def test_reuse_answers_the_same_image_and_sends_a_changed_one(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    status, _, err = run_program(cli, tasks, server, '(describe :photo "photo.png")', run_lines=True)
    run_id = err.split("run: ", 1)[1][:12]
    status, _, err = cli("run", "--reuse", run_id, "p.sexp", env=env(server), run_lines=True)
    assert status == 0 and "1 reused" in err and len(server.requests) == 1
    (tasks / "photo.png").write_bytes(png(3, 1))  # the fingerprint covers the image's bytes
    status, _, err = cli("run", "--reuse", run_id, "p.sexp", env=env(server), run_lines=True)
    assert status == 0 and len(server.requests) == 2


def test_a_cassette_replays_a_run_with_an_image_without_a_request(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    status, out, _ = run_program(
        cli, tasks, server, '(task-content (describe :photo "photo.png"))', "--record", "c.jsonl"
    )
    assert status == 0 and "base64" not in (tasks / "c.jsonl").read_text()
    status, again, _ = cli("run", "--replay", "c.jsonl", "p.sexp", env=env(server))
    assert (status, again) == (0, out) and len(server.requests) == 1


def test_a_mock_model_takes_images_and_pdfs_offline(cli: Cli, tasks: Path) -> None:
    write(
        tasks / "p.sexp",
        '(list (describe :photo "photo.png") (summarize :doc "doc.pdf"))',
    )
    status, out, err = cli("run", "p.sexp", env={"SEXP_MODEL": "mock/vision"})
    assert (status, err) == (0, "")
    assert out == (
        '(#<TaskResult COMPLETE "mock response 1 for describe">'
        ' #<TaskResult COMPLETE "mock response 2 for summarize">)\n'
    )


# The request's record ------------------------------------------------------------------------------


def test_a_record_read_back_has_the_fingerprint_of_the_request_sent() -> None:
    def request(data: bytes) -> ModelRequest:
        url = "data:image/png;base64," + __import__("base64").b64encode(data).decode()
        parts = [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": url}}]
        return ModelRequest.build("openai/gpt-4o-mini", [{"role": "user", "content": parts}])

    sent = request(png())
    record = sent.as_record()
    assert "base64" not in str(record)
    assert (
        ModelRequest.from_record(record).fingerprint() == sent.fingerprint() == request(png()).fingerprint()
    )
    assert request(png(1, 2)).fingerprint() != sent.fingerprint()
    assert sent.litellm_arguments()["messages"][0]["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )


def test_parts_are_described_without_their_data() -> None:
    elided = elided_url("data:image/png;base64,iVBORw0KGgo=")
    assert elided_url(elided) == elided
    assert (
        describe_part({"type": "image_url", "image_url": {"url": elided}})
        == "[image/png, 8 bytes, data elided]"
    )
    assert (
        describe_part({"type": "file", "file": {"file_id": "https://x/y.pdf"}}) == "[file: https://x/y.pdf]"
    )
    assert (format_size(1), format_size(12_345), format_size(20_000_000)) == ("1 byte", "12.3 kB", "20 MB")
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp" and sniff(b"GIF89a") == "image/gif"
    assert sniff(b"hello") is None


def test_an_image_among_the_files_over_the_limit_is_left_out_with_a_warning(
    cli: Cli, tasks: Path, server: LLMServer
) -> None:
    write(tasks / "tasks" / "look.xml", LOOK)
    with (tasks / "huge.png").open("wb") as file:
        file.write(png())
        file.truncate(MAX_ATTACHMENT_BYTES + 1)
    status, out, err = run_program(
        cli, tasks, server, '(task-content (look :files (list "huge.png" "photo.png")))'
    )
    assert (status, out) == (0, f'"image/png {len(png())} bytes"\n')
    assert "look: file 'huge.png' not included: 20 MB, over the 20 MB limit of an image or PDF" in err


def test_an_image_gone_since_the_call_was_checked_fails_the_call_before_any_request(workspace: Path) -> None:
    prompt = TaskPrompt(
        "describe",
        "Describe it.",
        models=("mock/vision",),
        attachments=(Attachment("photo", "gone.png", "image/png", 69),),
    )
    result = Handler(HandlerConfig(workspace=workspace), HandlerServices()).run(prompt)
    assert result.status == "FAILED" and result.error is not None
    assert (result.error.reason, result.error.message) == (
        "input_validation_failure",
        "input 'photo': no such file 'gone.png'",
    )
    assert result.notes["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
