"""Values a tool can return or raise to shape its result precisely."""

from __future__ import annotations

TYPE_CHECKING = False
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


class _Value:
    """An immutable value: its fields are its ``__slots__``, which ``==``, ``hash`` and ``repr``
    use. (Hand-written rather than ``@dataclass``, whose import costs more than this module's
    users wait for the server to start.)"""

    __slots__: tuple[str, ...] = ()

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self), self._fields()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Image(_Value):
    """Image bytes returned as an MCP ``image`` content block (base64 on the wire)."""

    __slots__ = ("data", "mime_type")
    data: bytes
    mime_type: str

    def __init__(self, data: bytes, mime_type: str = "image/png") -> None:
        self._init(data=data, mime_type=mime_type)


class Audio(_Value):
    """Audio bytes returned as an MCP ``audio`` content block (base64 on the wire)."""

    __slots__ = ("data", "mime_type")
    data: bytes
    mime_type: str

    def __init__(self, data: bytes, mime_type: str = "audio/wav") -> None:
        self._init(data=data, mime_type=mime_type)


class ToolResult(_Value):
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
