"""Handlers: one per task execution; every model call goes through litellm (SPEC §4)."""

from .contract import HandlerConfig, HandlerServices, OutputSpec, TaskPrompt
from .handler import Handler
from .replay import Cassette, MockScript

__all__ = [
    "Cassette",
    "Handler",
    "HandlerConfig",
    "HandlerServices",
    "MockScript",
    "OutputSpec",
    "TaskPrompt",
]
