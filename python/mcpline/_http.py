"""Streamable HTTP as a plain ASGI 3 application (``Server.asgi_app``).

The Rust core decides everything MCP about a request (``_core.HttpEndpoint``): the status, the
session id, the JSON, the header checks. This module moves bytes between the ASGI server and
the core, and does the parts that belong to HTTP: the body size cap, the bearer-token hook,
JSON or an SSE stream for the answer, and noticing a client that went away (which cancels its
request's calls).

Calls of sync tools run in a bounded thread pool (``sync_workers``); calls of async tools run
concurrently on the server's event loop thread. What a call prints through ``sys.stdout`` and
``sys.stderr`` is its own (routed by the task or thread that wrote it); what is written to
descriptors 1 and 2 directly (C code, children) while calls overlap is labelled with every call
running then, since descriptors belong to the whole process.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from mcpline import _core, _streams

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    from mcpline._server import Server

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    Verify = Callable[[str], Any]

JSON = b"application/json"
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class McpHttpApp:
    """The ASGI application serving one ``Server`` at ``path`` (see ``Server.asgi_app``)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str,
        allowed_origins: list[str],
        allowed_hosts: list[str] | None,
        max_body_bytes: int,
        auth: Verify | None,
        resource_metadata: str | None,
        sync_workers: int,
        session_idle: float,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', not {path!r}")
        if max_body_bytes < 1 or sync_workers < 1:
            raise ValueError("max_body_bytes and sync_workers must be at least 1")
        self.server = server
        self.path = path.rstrip("/") or "/"
        self._origins = list(allowed_origins)
        self._hosts = None if allowed_hosts is None else list(allowed_hosts)
        self._session_idle = session_idle
        self._endpoint: Any = None
        self._max_body = max_body_bytes
        self._auth = auth
        self._resource_metadata = resource_metadata
        self._workers = sync_workers
        self._pool: ThreadPoolExecutor | None = None
        self._lifespan: Any = None
        self._started = False

    # -- lifespan ---------------------------------------------------------------------------

    def _start(self) -> None:
        """Before the first request: the server's lifespan, the pool, and prints routed
        through the calls that make them."""
        if self._started:
            return
        self._started = True
        # Made now, so tools registered after asgi_app() are served too.
        self._endpoint = self.server._core.http_endpoint(
            allowed_origins=self._origins,
            allowed_hosts=self._hosts,
            session_idle=self._session_idle,
        )
        self._lifespan = self.server._enter_lifespan(serving=False)
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="mcpline-http")
        _streams.ROUTE = True
        _streams.OUTSIDE_CALLS_TO_STDERR = True
        _streams.hold()
        _core.HttpEndpoint.route_output(True)

    def _stop(self) -> None:
        if not self._started:
            return
        self._started = False
        _core.HttpEndpoint.route_output(False)
        _streams.release()
        _streams.ROUTE = False
        _streams.OUTSIDE_CALLS_TO_STDERR = False
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._lifespan is not None:
            lifespan, self._lifespan = self._lifespan, None
            self.server._exit_lifespan(lifespan, serving=False)
        if self.server._runner is not None:
            self.server._runner.close()

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "lifespan.startup":
                try:
                    self._start()
                except BaseException as error:  # reported to the ASGI server
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif kind == "lifespan.shutdown":
                self._stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- requests ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        if kind != "http":
            return  # websockets: not served (the ASGI server refuses the handshake)
        self._start()  # an ASGI server without lifespan events
        if (scope.get("path") or "/").rstrip("/") != self.path.rstrip("/"):
            await _plain(send, 404, b"Not Found: the MCP endpoint is " + self.path.encode())
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
        method = scope.get("method", "GET")
        if method == "POST":
            body = await _read_body(receive, self._max_body)
        else:
            body = b""
        if self._auth is not None and not await self._authorised(headers, send):
            return
        if method == "POST":
            if body is None:
                message = (
                    f"Payload Too Large: the body exceeds {self._max_body} bytes "
                    "(raise max_body_bytes or send less)"
                )
                await _json(send, 413, _error_body(message), [])
                return
            status, extra, answer, exchange = self._endpoint.post(headers, body)
        elif method == "DELETE":
            status, extra, answer, exchange = self._endpoint.delete(headers)
        else:
            status, extra, answer, exchange = self._endpoint.not_allowed()
        if exchange is None:
            await _json(send, status, answer, extra)
            return
        await self._stream(exchange, extra, _accepts_sse(headers), receive, send)

    async def _authorised(self, headers: list[tuple[bytes, bytes]], send: Send) -> bool:
        """Runs the bearer-token hook; answers 401 with ``WWW-Authenticate`` when it refuses."""
        token = None
        for name, value in headers:
            if name.lower() == b"authorization":
                scheme, _, credentials = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and credentials.strip():
                    token = credentials.strip()
                break
        accepted = False
        if token is not None and self._auth is not None:
            try:
                verdict = self._auth(token)
                if inspect.isawaitable(verdict):
                    verdict = await verdict
                accepted = bool(verdict)
            except Exception as error:  # a refusal, logged without the token
                sys.stderr.write(
                    f"[mcpline] the auth hook refused a token: {type(error).__name__}\n"
                )
        if accepted:
            return True
        challenge = 'Bearer error="invalid_token"' if token is not None else "Bearer"
        if self._resource_metadata:
            challenge += f', resource_metadata="{self._resource_metadata}"'
        why = "the bearer token was refused" if token is not None else "a bearer token is required"
        await _json(
            send,
            401,
            _error_body(f"Unauthorized: {why}"),
            [("WWW-Authenticate", challenge)],
        )
        return False

    async def _stream(
        self,
        exchange: Any,
        extra: list[tuple[str, str]],
        sse: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        """Sends an exchange's frames: one JSON body when the response is the only frame (or
        the client takes no SSE), else an SSE stream with the notifications before it."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        exchange.set_wake(lambda: loop.call_soon_threadsafe(ready.set))
        gone = asyncio.ensure_future(_disconnected(receive))
        running = None
        if exchange.has_work():
            running = loop.run_in_executor(self._pool, exchange.run)
        try:
            await self._send_frames(exchange, ready, gone, extra, sse, send)
        except OSError:
            exchange.abandon()  # the connection broke while sending
        finally:
            gone.cancel()
            if running is not None:
                await asyncio.shield(running)

    async def _send_frames(
        self,
        exchange: Any,
        ready: asyncio.Event,
        gone: asyncio.Future[Any],
        extra: list[tuple[str, str]],
        sse: bool,
        send: Send,
    ) -> None:
        streaming = False
        held: bytes | None = None  # the response, when the client takes no SSE
        while True:
            kind, frame = exchange.next()
            if kind == 0:
                waiting = asyncio.ensure_future(ready.wait())
                await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
                ready.clear()
                if gone.done():
                    exchange.abandon()  # closing the stream cancels the request
                    return
                continue
            if kind == 2:
                break
            if streaming:
                await send({"type": "http.response.body", "body": _event(frame), "more_body": True})
            elif kind == 3 or not sse:
                held = frame  # the response alone: JSON (notifications are dropped without SSE)
            else:
                # Notifications before the response: they and it go on an SSE stream.
                await _start_sse(send, extra)
                streaming = True
                await send({"type": "http.response.body", "body": _event(frame), "more_body": True})
            if kind == 3:
                break
        if streaming:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif held is not None:
            await _json(send, 200, held, extra)
        else:
            await _json(send, 202, b"", extra)  # cancelled: nothing to answer


def _accepts_sse(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"accept":
            text = value.decode("latin-1").lower()
            return "text/event-stream" in text or "*/*" in text or "text/*" in text
    return True


def _event(frame: bytes) -> bytes:
    return b"event: message\ndata: " + frame + b"\n\n"


def _error_body(message: str) -> bytes:
    import json

    return json.dumps({"jsonrpc": "2.0", "error": {"code": -32600, "message": message}}).encode()


async def _read_body(receive: Receive, cap: int) -> bytes | None:
    """The whole request body, or ``None`` past ``cap`` bytes (the rest is drained)."""
    chunks: list[bytes] = []
    size = 0
    over = False
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            over = True
            chunks.clear()
        elif not over:
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return None if over else b"".join(chunks)


async def _disconnected(receive: Receive) -> None:
    """Returns when the client goes away."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _start_sse(send: Send, extra: list[tuple[str, str]]) -> None:
    headers = SSE_HEADERS + [(k.lower().encode(), v.encode()) for k, v in extra]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def _json(send: Send, status: int, body: bytes, extra: list[tuple[str, str]]) -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in extra]
    if body:
        headers.append((b"content-type", JSON))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _plain(send: Send, status: int, text: bytes) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", b"%d" % len(text)),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
