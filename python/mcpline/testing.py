"""An in-process MCP client for testing tools: no subprocess, the real Rust protocol core.

```python
from mcpline.testing import Client

def test_add():
    with Client(server) as client:
        result = client.call("add", a=1, b=2)
        assert result.structured == {"result": 3}
        assert not result.is_error
```
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpline._server import Server

if sys.platform == "win32":
    from mcpline import _streams

STATELESS = "2026-07-28"


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


@dataclass
class CallResult:
    """A ``tools/call`` result."""

    content: list[dict[str, Any]]
    structured: Any = None
    is_error: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(c["text"] for c in self.content if c.get("type") == "text")


class Client:
    """Talks to ``server`` over an in-memory connection.

    ``protocol_version`` picks the revision: a handshake revision runs ``initialize`` first;
    ``"2026-07-28"`` sends the stateless ``_meta`` envelope with every request. Notifications
    the server sends (progress, log messages) are collected in ``notifications``.
    """

    def __init__(
        self,
        server: Server,
        *,
        protocol_version: str = "2025-11-25",
        timeout: float = 30.0,
        client_info: dict[str, str] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.timeout = timeout
        self.client_info = client_info or {"name": "mcpline.testing", "version": "1"}
        self.notifications: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        # The server's lifespan (if any) is entered for this connection, exited by close().
        self._server = server
        self._lifespan = server._enter_lifespan(serving=False)
        self._session = server._core.connect()
        self._closed = False
        if protocol_version != STATELESS:
            self.initialize_result = self.request(
                "initialize",
                {
                    "protocolVersion": protocol_version,
                    "capabilities": {},
                    "clientInfo": self.client_info,
                },
            )
            self.notify("notifications/initialized")
        # The server captures what tools print on fds 1 and 2 until close(); on Windows
        # sys.stdout and sys.stderr must follow those descriptors (see mcpline._streams).
        if sys.platform == "win32":
            _streams.hold()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _envelope(self, params: dict[str, Any] | None) -> dict[str, Any]:
        params = dict(params or {})
        if self.protocol_version == STATELESS:
            meta = dict(params.get("_meta") or {})
            meta.setdefault("io.modelcontextprotocol/protocolVersion", STATELESS)
            meta.setdefault("io.modelcontextprotocol/clientCapabilities", {})
            meta.setdefault("io.modelcontextprotocol/clientInfo", self.client_info)
            params["_meta"] = meta
        return params

    def send_raw(self, line: str | bytes) -> None:
        """Sends one frame exactly as given."""
        self._session.send(line)

    def recv_raw(self, timeout: float | None = None) -> dict[str, Any] | list[Any] | None:
        """The next frame the server wrote (parsed), or None after ``timeout`` seconds."""
        line = self._session.recv(self.timeout if timeout is None else timeout)
        return None if line is None else json.loads(line)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification."""
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.send_raw(json.dumps(frame))

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Sends a request and returns its result; raises ``RpcError`` for an error response."""
        request_id = next(self._ids)
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method}
        params = self._envelope(params) if method != "initialize" else params
        if params:
            frame["params"] = params
        self.send_raw(json.dumps(frame))
        while True:
            message = self.recv_raw()
            if message is None:
                raise TimeoutError(f"no response to {method} within {self.timeout} s")
            if not isinstance(message, dict):
                raise AssertionError(f"unexpected frame: {message!r}")
            if "id" not in message and "method" in message:
                self.notifications.append(message)
                continue
            if message.get("id") != request_id:
                raise AssertionError(f"response for another request: {message!r}")
            if "error" in message:
                err = message["error"]
                raise RpcError(err["code"], err["message"], err.get("data"))
            return message["result"]

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool descriptor (following pagination)."""
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = self.request("tools/list", params)
            tools.extend(page["tools"])
            if "nextCursor" not in page:
                return tools
            params = {"cursor": page["nextCursor"]}

    def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt descriptor (following pagination)."""
        prompts: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = self.request("prompts/list", params)
            prompts.extend(page["prompts"])
            if "nextCursor" not in page:
                return prompts
            params = {"cursor": page["nextCursor"]}

    def get_prompt(self, name: str, /, **arguments: str) -> dict[str, Any]:
        """``prompts/get``: the prompt's result (``messages``, ``description``)."""
        result: dict[str, Any] = self.request("prompts/get", {"name": name, "arguments": arguments})
        return result

    def list_resources(self) -> list[dict[str, Any]]:
        """Every fixed resource descriptor (following pagination)."""
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template descriptor (following pagination)."""
        return self._list_all("resources/templates/list", "resourceTemplates")

    def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """``resources/read``: the contents of ``uri``."""
        contents: list[dict[str, Any]] = self.request("resources/read", {"uri": uri})["contents"]
        return contents

    def complete(
        self,
        ref: dict[str, str],
        argument: str,
        value: str = "",
        *,
        context: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """``completion/complete`` of ``argument`` typed so far as ``value``, for ``ref``
        (``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``);
        the ``completion`` (``values``, ``total``, ``hasMore``)."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        completion: dict[str, Any] = self.request("completion/complete", params)["completion"]
        return completion

    def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = self.request(method, params)
            items.extend(page[key])
            if "nextCursor" not in page:
                return items
            params = {"cursor": page["nextCursor"]}

    def call(self, name: str, /, **arguments: Any) -> CallResult:
        """Calls tool ``name`` with keyword ``arguments``."""
        return self.call_with(name, arguments)

    def call_with(
        self, name: str, arguments: Any, *, progress_token: str | int | None = None
    ) -> CallResult:
        """Calls tool ``name`` with an arbitrary ``arguments`` value."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        result = self.request("tools/call", params)
        return CallResult(
            content=result.get("content", []),
            structured=result.get("structuredContent"),
            is_error=bool(result.get("isError", False)),
            raw=result,
        )

    def close(self) -> str | None:
        """Ends the input and waits for the server to finish; returns why it stopped."""
        if self._closed:
            return None
        self._closed = True
        self._session.close()
        try:
            return self._session.wait(self.timeout)
        finally:
            if self._lifespan is not None:
                self._server._exit_lifespan(self._lifespan, serving=False)
            if sys.platform == "win32":
                _streams.release()
