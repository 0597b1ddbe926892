"""``@server.resource``: what a resource function returns, as MCP resource contents.

A function returns ``str`` (text, ``text/plain`` unless the resource says otherwise), ``bytes``
(a base64 blob, ``application/octet-stream`` unless it says otherwise), an ``Image`` or
``Audio`` (a blob of its MIME type), explicit contents (a dict with ``"text"`` or ``"blob"``, and
optionally ``"mimeType"``, or a list of them), or other JSON data (JSON text,
``application/json``). The core fills in the URI that was read.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcpline._jsonvalue import to_jsonable
from mcpline._results import Audio, Image, ToolResult


def contents(returned: Any, mime_type: str | None) -> list[dict[str, Any]]:
    """What a resource function returned, as its list of contents."""
    if isinstance(returned, str):
        return [{"mimeType": mime_type or "text/plain", "text": returned}]
    if isinstance(returned, (bytes, bytearray, memoryview)):
        blob = base64.b64encode(bytes(returned)).decode("ascii")
        return [{"mimeType": mime_type or "application/octet-stream", "blob": blob}]
    if isinstance(returned, (Image, Audio)):
        blob = base64.b64encode(returned.data).decode("ascii")
        return [{"mimeType": returned.mime_type, "blob": blob}]
    if isinstance(returned, dict) and ("text" in returned or "blob" in returned):
        return [returned]
    if (
        isinstance(returned, list)
        and returned
        and all(isinstance(i, dict) and ("text" in i or "blob" in i) for i in returned)
    ):
        return list(returned)
    text = json.dumps(to_jsonable(returned), ensure_ascii=False, indent=2)
    return [{"mimeType": mime_type or "application/json", "text": text}]


def as_resource(
    func: Callable[..., Any], is_async: bool, mime_type: str | None
) -> Callable[..., Any]:
    """``func`` made into what the core runs for ``resources/read``: its contents as structured
    output."""
    if is_async:
        run_async: Callable[..., Awaitable[Any]] = func

        async def read_async(**arguments: Any) -> ToolResult:
            made = await run_async(**arguments)
            return ToolResult(structured={"contents": contents(made, mime_type)})

        return read_async

    def read(**arguments: Any) -> ToolResult:
        return ToolResult(structured={"contents": contents(func(**arguments), mime_type)})

    return read
