"""Type stubs of the compiled core (checked with mypy.stubtest)."""

from collections.abc import Callable
from typing import Any, final

from mcpline._runner import AsyncRunner
from mcpline._tool import ToolOptions, ToolShape

__all__ = [
    "SUPPORTED_PROTOCOL_VERSIONS",
    "CaptureCell",
    "Context",
    "Exchange",
    "HttpEndpoint",
    "MemorySession",
    "Server",
    "__version__",
    "is_valid_tool_name",
    "note_spawn",
    "note_truncating_open",
    "raise_if_stopped",
    "schema_problem",
    "write_real_stderr",
]

__version__: str
SUPPORTED_PROTOCOL_VERSIONS: list[str]

def is_valid_tool_name(name: str) -> bool: ...
def note_spawn() -> None: ...
def note_truncating_open() -> None: ...
def raise_if_stopped() -> None: ...
def schema_problem(schema: dict[str, Any]) -> str | None: ...
def write_real_stderr(data: bytes) -> None: ...

@final
class Context:
    @property
    def request_id(self) -> int | str: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def client_info(self) -> dict[str, Any] | None: ...
    @property
    def lifespan(self) -> Any: ...
    @property
    def cancelled(self) -> bool: ...
    def check_cancelled(self) -> None: ...
    def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> bool: ...
    def log(self, level: str, message: str) -> bool: ...
    def _on_cancel(self, callback: Callable[[], object]) -> None: ...
    def _write_output(self, fd: int, data: bytes) -> int: ...

@final
class CaptureCell:
    @staticmethod
    def begin() -> CaptureCell: ...
    @property
    def is_window(self) -> bool: ...
    def finish(self, limit: int | None = None) -> tuple[str, int]: ...

@final
class MemorySession:
    def send(self, line: str | bytes) -> None: ...
    def recv(self, timeout: float | None = None) -> str | None: ...
    def close(self) -> None: ...
    def wait(self, timeout: float | None = None) -> str | None: ...

@final
class Exchange:
    def run(self) -> None: ...
    def has_work(self) -> bool: ...
    def next(self) -> tuple[int, bytes | None]: ...
    def set_wake(self, wake: Callable[[], object]) -> None: ...
    def abandon(self) -> None: ...

_HttpReply = tuple[int, list[tuple[str, str]], bytes, Exchange | None]

@final
class HttpEndpoint:
    def post(self, headers: list[tuple[bytes, bytes]], body: bytes) -> _HttpReply: ...
    def delete(self, headers: list[tuple[bytes, bytes]]) -> _HttpReply: ...
    def not_allowed(self) -> _HttpReply: ...
    def session_count(self) -> int: ...
    @staticmethod
    def route_output(on: bool) -> None: ...

@final
class Server:
    def __new__(
        cls,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        icons: list[dict[str, Any]] | None = None,
    ) -> Server: ...
    def configure(
        self,
        *,
        output: str | None = None,
        attach_limit: int | None = None,
        max_line_bytes: int | None = None,
        page_size: int | None = None,
        eof_grace: float | None = None,
        queue_capacity: int | None = None,
        capture: bool | None = None,
        list_ttl_ms: int | None = None,
        max_concurrency: int | None = None,
        capture_cap: int | None = None,
    ) -> None: ...
    def add_tool(
        self,
        func: Callable[..., Any],
        shape: ToolShape,
        options: ToolOptions,
        runner: AsyncRunner | None = None,
    ) -> None: ...
    def add_prompt(
        self,
        func: Callable[..., Any],
        shape: ToolShape,
        options: ToolOptions,
        arguments: list[tuple[str, str | None, bool]],
        runner: AsyncRunner | None = None,
    ) -> None: ...
    def add_resource(
        self,
        func: Callable[..., Any],
        shape: ToolShape,
        options: ToolOptions,
        descriptor: dict[str, Any],
        runner: AsyncRunner | None = None,
    ) -> None: ...
    def set_completer(
        self,
        func: Callable[..., Any],
        shape: ToolShape,
        options: ToolOptions,
        runner: AsyncRunner | None = None,
    ) -> None: ...
    def restricted(self, keep: list[str]) -> Server: ...
    def set_lifespan_value(self, value: Any | None) -> None: ...
    def tool_names(self) -> list[str]: ...
    def run_stdio(
        self,
        on_stdio: Callable[[bool], object] | None = None,
        on_exit: Callable[[], object] | None = None,
    ) -> str: ...
    def connect(self, *, max_line_bytes: int | None = None) -> MemorySession: ...
    def http_endpoint(
        self,
        *,
        allowed_origins: list[str] = ...,
        allowed_hosts: list[str] | None = None,
        session_idle: float = 3600.0,
        max_sessions: int = 10000,
    ) -> HttpEndpoint: ...
