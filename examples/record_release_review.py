"""Re-record examples/release_review.cassette.jsonl, offline.

A local OpenAI-compatible server (tests/llm_server.py) stands in for the provider and gives
the scripted answers below; the workflow runs through litellm's real HTTP path with --record.
Run from the checkout root:  .venv/bin/python examples/record_release_review.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import LLMServer  # noqa: E402

CHANGES = [
    "Concurrent maps over tasks",
    "A faster reader",
    "Clearer error messages that point at the form that caused them",
    "Tasks report their cost and latency",
    "A failed task in a concurrent map is a value in its place",
]
SCORES = [5, 3, 4, 4, 2]
SUMMARY = (
    "Release 0.4 runs tasks concurrently over lists, keeping each failed task as a value instead of "
    "losing the run, and every task now reports what it cost. Errors point at the form that caused them, "
    "and the reader is faster."
)


def answer(content: str) -> str:
    return f"<output>{content}</output><notes><data_usage>release notes</data_usage></notes>"


def main() -> None:
    server = LLMServer().start()
    try:
        server.script(
            answer(json.dumps(CHANGES)),
            *(answer(json.dumps({"score": s, "reason": "how often users meet it"})) for s in SCORES),
            answer(SUMMARY),
        )
        cassette = ROOT / "examples" / "release_review.cassette.jsonl"
        cassette.unlink(missing_ok=True)
        env = {
            **os.environ,
            "SEXP_API_BASE": server.base_url,
            "OPENAI_API_KEY": "sk-local-recording-not-a-key",
        }
        command = [
            sys.executable,
            "-m",
            "sexp_tasks",
            "run",
            "examples/release_review.sexp",
            "--templates",
            "examples/tasks",
            "--record",
            str(cassette),
        ]
        subprocess.run(command, cwd=ROOT, env=env, check=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
