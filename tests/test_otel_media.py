"""Images and PDFs in OpenTelemetry message content (SPEC §11.4, `otel_content = true`), sent to a
real OTLP receiver on 127.0.0.1 (tests/otlp_receiver.py): a multimodal user message is the GenAI
conventions' parts — its text as text parts, an image or PDF as a `uri` part with its data elided
(never the base64) and a URL's credentials and signed query masked — while the model's request
carries the image and the real URL."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from llm_server import LLMServer, attached

pytest.importorskip(
    "opentelemetry.sdk", reason="the otel extra is not installed (pip install 'sexp-tasks[otel]')"
)
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto decodes what the receiver gets")

from otlp_receiver import OtlpReceiver  # noqa: E402
from test_media_chain_and_urls import DESCRIBE, MASKED_URL, SECRET_URL, SECRETS, SUMMARIZE  # noqa: E402

import sexp_tasks  # noqa: E402
from sexp_tasks.handler.model_request import ModelAnswer  # noqa: E402
from sexp_tasks.runs.otel_messages import content_parts, input_messages, output_message  # noqa: E402

KEY = "sk-fake-otel-media-5e6f7a8b"
PDF_BYTES = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"


def picture() -> bytes:
    """A PNG-looking file big enough that its base64 cannot turn up by chance."""
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


@pytest.fixture
def receiver() -> Any:
    with OtlpReceiver() as running:
        yield running


def traced_messages(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch, call: str
) -> list[dict[str, Any]]:
    """The input messages of the one chat span of call, run with otel_content on."""
    write(workspace / "tasks" / "describe.xml", DESCRIBE)
    write(workspace / "tasks" / "summarize.xml", SUMMARIZE)
    (workspace / "photo.png").write_bytes(picture())
    (workspace / "doc.pdf").write_bytes(PDF_BYTES)
    server.script("<output>seen</output>")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    session = sexp_tasks.Session(model="openai/gpt-4o-mini", api_base=server.base_url, otel_content=True)
    assert session.eval(f"(task-content {call})") == "seen"
    session._runtime.close_telemetry()
    [chat] = receiver.named("chat")
    messages = json.loads(chat.attributes["gen_ai.input.messages"])
    assert isinstance(messages, list)
    return messages


def test_an_image_is_a_uri_part_with_its_data_elided(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    [user] = traced_messages(workspace, server, receiver, monkeypatch, '(describe :photo "photo.png")')
    size = len(picture())
    assert user["role"] == "user"
    text, label, image = user["parts"]
    assert text == {"type": "text", "content": "Describe [image: photo.png] in one sentence."}
    assert label == {"type": "text", "content": "[image: photo.png]"}
    assert image["type"] == "uri" and image["modality"] == "image" and image["mime_type"] == "image/png"
    assert image["uri"].startswith("data:image/png;sha256=") and image["uri"].endswith(f";bytes={size},")
    raw = receiver.raw()
    assert base64.b64encode(picture()) not in raw and b"base64" not in raw
    assert base64.b64encode(picture()[:300])[:200] not in raw
    assert attached(server.requests[0].body) == [("image/png", picture())]  # the model got it all


def test_a_pdf_is_a_uri_part_of_modality_document(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    [user] = traced_messages(workspace, server, receiver, monkeypatch, '(summarize :doc "doc.pdf")')
    document = user["parts"][-1]
    assert document["type"] == "uri" and document["modality"] == "document"
    assert document["mime_type"] == "application/pdf" and document["uri"].startswith(
        "data:application/pdf;sha256="
    )
    assert base64.b64encode(PDF_BYTES) not in receiver.raw()


def test_an_image_url_is_a_uri_part_with_its_secrets_masked(
    workspace: Path, server: LLMServer, receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    [user] = traced_messages(workspace, server, receiver, monkeypatch, f'(describe :photo "{SECRET_URL}")')
    assert user["parts"][0]["content"] == f"Describe [image: {MASKED_URL}] in one sentence."
    assert user["parts"][-1] == {"type": "uri", "modality": "image", "uri": MASKED_URL}
    raw = receiver.raw()
    assert not any(secret.encode() in raw for secret in SECRETS) and KEY.encode() not in raw
    assert attached(server.requests[0].body) == [("url", SECRET_URL)]  # the model got the real URL


def test_parts_are_shaped_without_any_data() -> None:
    data = "data:image/png;base64," + base64.b64encode(picture()).decode()
    system, messages = input_messages(
        [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": data}},  # not elided yet: elided here
                    {"type": "file", "file": {"file_id": "file-abc123"}},
                    {"type": "input_audio", "input_audio": {"data": "UklGRg=="}},
                ],
            },
        ]
    )
    assert system == [{"type": "text", "content": "be brief"}]
    look, image, file, audio = messages[0]["parts"]
    assert look == {"type": "text", "content": "look"} and image["uri"].startswith("data:image/png;sha256=")
    assert file == {
        "type": "file",
        "modality": "document",
        "mime_type": "application/pdf",
        "file_id": "file-abc123",
    }
    assert audio == {"type": "input_audio"} and "UklGRg" not in json.dumps(messages)
    assert content_parts(None) == [{"type": "text", "content": "null"}]
    answer = ModelAnswer(text="hi")
    assert output_message(answer)["parts"] == [{"type": "text", "content": "hi"}]
