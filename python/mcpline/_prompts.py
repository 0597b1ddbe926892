"""``@server.prompt``: what a prompt function returns, as MCP prompt messages.

A prompt function returns a ``str`` (one user message), an ``Image`` or ``Audio`` (one user
message holding it), a ``Message``, a ``{"role": ..., "content": ...}`` dict, or a list of
these. A message's content is a ``str``, an ``Image``, an ``Audio`` or an MCP content block
dict (``{"type": "resource", "resource": {...}}`` for an embedded resource).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

from mcpline._results import Audio, Image, ToolResult
from mcpline._startup import Value

ROLES = ("user", "assistant")


class Message(Value):
    """One prompt message: ``content`` (``str``, ``Image``, ``Audio`` or an MCP content block
    dict) said by ``role``, ``"user"`` (the default) or ``"assistant"``."""

    __slots__ = ("content", "role")
    content: Any
    role: str

    def __init__(self, content: Any, role: str = "user") -> None:
        if role not in ROLES:
            raise ValueError(f'a message role is "user" or "assistant", not {role!r}')
        self._init(content=content, role=role)


def content_block(content: Any) -> dict[str, Any]:
    """The MCP content block for one message's ``content``."""
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, (Image, Audio)):
        kind = "image" if isinstance(content, Image) else "audio"
        data = base64.b64encode(content.data).decode("ascii")
        return {"type": kind, "data": data, "mimeType": content.mime_type}
    if isinstance(content, dict) and isinstance(content.get("type"), str):
        return content
    raise TypeError(
        "prompt message content must be str, Image, Audio or an MCP content block dict "
        f'(with a "type"), not {type(content).__name__}'
    )


def message(item: Any) -> dict[str, Any]:
    """One item a prompt returned, as a ``{"role", "content"}`` message."""
    if isinstance(item, Message):
        return {"role": item.role, "content": content_block(item.content)}
    if isinstance(item, dict) and "role" in item and "content" in item:
        if item["role"] not in ROLES:
            raise ValueError(f'a message role is "user" or "assistant", not {item["role"]!r}')
        return {"role": item["role"], "content": content_block(item["content"])}
    return {"role": "user", "content": content_block(item)}


def messages(returned: Any) -> list[dict[str, Any]]:
    """What a prompt function returned, as its list of messages."""
    items = returned if isinstance(returned, (list, tuple)) else [returned]
    if not items:
        raise ValueError("the prompt returned no messages")
    return [message(item) for item in items]


def as_prompt(func: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """``func`` made into what the core runs for ``prompts/get``: its messages as structured
    output (the core shapes each content block for the client's revision)."""
    if is_async:
        run_async: Callable[..., Awaitable[Any]] = func

        async def prompt_async(**arguments: Any) -> ToolResult:
            return ToolResult(structured={"messages": messages(await run_async(**arguments))})

        return prompt_async

    def prompt(**arguments: Any) -> ToolResult:
        return ToolResult(structured={"messages": messages(func(**arguments))})

    return prompt
