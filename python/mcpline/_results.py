"""Values a tool can return or raise to shape its result precisely."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class McplineError(Exception):
    """Base class of every error mcpline raises."""


class ToolError(McplineError):
    """Raise inside a tool to return an ``isError`` result carrying exactly this message."""


class Cancelled(McplineError):
    """Raised by ``Context.check_cancelled()`` once the client cancelled the call."""


class SetupError(McplineError, ValueError, TypeError):
    """A tool or server cannot be registered or configured as given."""


class CaptureError(McplineError, RuntimeError):
    """The capture cell refused or failed (for example: a capture is already active)."""


@dataclass(frozen=True)
class Image:
    """Image bytes returned as an MCP ``image`` content block (base64 on the wire)."""

    data: bytes
    mime_type: str = "image/png"


@dataclass(frozen=True)
class Audio:
    """Audio bytes returned as an MCP ``audio`` content block (base64 on the wire)."""

    data: bytes
    mime_type: str = "audio/wav"


@dataclass(frozen=True)
class ToolResult:
    """Full control over a tool result.

    ``content`` is a list of ``str`` (text blocks), ``Image``, ``Audio`` or raw MCP content
    dictionaries; ``structured`` becomes ``structuredContent`` where the revision supports it.
    """

    content: list[Any] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
