"""Handlers: one per task execution; every model call goes through litellm (SPEC §4)."""

from .handler import Handler
from .services import Cassette, MockScript, ServiceError
from .types import HandlerConfig, HandlerServices, OutputSpec, TaskPrompt

__all__ = [
    "Cassette",
    "Handler",
    "HandlerConfig",
    "HandlerServices",
    "MockScript",
    "OutputSpec",
    "ServiceError",
    "TaskPrompt",
]
