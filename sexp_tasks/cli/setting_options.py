"""Options several subcommands share, declared once."""

from __future__ import annotations

import argparse

SETTING_HELP = {
    "model": "the model of every task call that names none itself (it overrides a template's <model>)",
    "templates": "load task templates from DIR",
    "mock_responses": "replies for mock/ models (a JSON list, or lists by template name)",
    "record": "record every model call to a cassette",
    "replay": "answer every model call from a cassette",
    "store": "the run store (default .sexp/store.db)",
    "workspace": "the directory files are confined to",
    "max_cost": "stop model calls once this much is spent",
    "script_user": "run scripts as USER (sexp running as root; see docs/security.md)",
    "max_retries": "send a rate-limited or failed model request again at most N times (default 4)",
    "request_timeout": "seconds a model request may take (default 600)",
    "cache": "answer a model request asked before from the store's answer cache; keep each paid answer there",
}


def add_setting_options(parser: argparse.ArgumentParser, **help: str) -> None:
    """The options that set settings: run's, eval's and batch's, and config's (which shows their
    effect). help: another help text for an option, by its dest (`max_cost="..."`)."""
    text = SETTING_HELP | help
    parser.add_argument("--model", help=text["model"])
    parser.add_argument("--templates", action="append", default=[], metavar="DIR", help=text["templates"])
    replies = parser.add_mutually_exclusive_group()
    replies.add_argument("--mock-responses", metavar="FILE", help=text["mock_responses"])
    replies.add_argument("--record", metavar="FILE", help=text["record"])
    replies.add_argument("--replay", metavar="FILE", help=text["replay"])
    parser.add_argument("--store", metavar="PATH", help=text["store"])
    parser.add_argument("--workspace", metavar="DIR", help=text["workspace"])
    parser.add_argument("--max-cost", type=float, metavar="USD", help=text["max_cost"])
    parser.add_argument("--script-user", metavar="USER", help=text["script_user"])
    parser.add_argument("--max-retries", type=int, metavar="N", help=text["max_retries"])
    parser.add_argument("--request-timeout", type=float, metavar="SECONDS", help=text["request_timeout"])
    parser.add_argument("--cache", action="store_true", default=None, help=text["cache"])
