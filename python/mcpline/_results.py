"""Values a tool can return or raise to shape its result precisely."""

from __future__ import annotations

from mcpline._startup import TYPE_CHECKING, Value

if TYPE_CHECKING:
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


class Image(Value):
    """Image bytes returned as an MCP ``image`` content block (base64 on the wire)."""

    __slots__ = ("data", "mime_type")
    data: bytes
    mime_type: str

    def __init__(self, data: bytes, mime_type: str = "image/png") -> None:
        self._init(data=data, mime_type=mime_type)


class Audio(Value):
    """Audio bytes returned as an MCP ``audio`` content block (base64 on the wire)."""

    __slots__ = ("data", "mime_type")
    data: bytes
    mime_type: str

    def __init__(self, data: bytes, mime_type: str = "audio/wav") -> None:
        self._init(data=data, mime_type=mime_type)


class ToolResult(Value):
    """Full control over a tool result.

    ``content`` is a list of ``str`` (text blocks), ``Image``, ``Audio`` or raw MCP content
    dictionaries; ``structured`` becomes ``structuredContent`` where the revision supports it.
    """

    __slots__ = ("content", "structured", "is_error")  # noqa: RUF023 (constructor order, for repr)
    content: list[Any]
    structured: Any
    is_error: bool

    def __init__(
        self, content: list[Any] | None = None, structured: Any = None, is_error: bool = False
    ) -> None:
        self._init(
            content=[] if content is None else content, structured=structured, is_error=is_error
        )
