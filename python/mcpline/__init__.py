"""mcpline: serve Python callables as a Model Context Protocol server over stdio.

```python
from mcpline import Server

server = Server("demo", version="1.0.0")

@server.tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

if __name__ == "__main__":
    server.run()
```

Attributes are loaded on first use so that ``import mcpline`` stays cheap.
"""

from __future__ import annotations

from mcpline._startup import TYPE_CHECKING, import_module

if TYPE_CHECKING:
    from typing import Any

    from mcpline._capture import capture
    from mcpline._core import Context, __version__
    from mcpline._prompts import Message
    from mcpline._results import (
        Audio,
        Cancelled,
        CaptureError,
        Image,
        McplineError,
        SetupError,
        ToolError,
        ToolResult,
    )
    from mcpline._server import Server

__all__ = [
    "Audio",
    "Cancelled",
    "CaptureError",
    "Context",
    "Image",
    "McplineError",
    "Message",
    "Server",
    "SetupError",
    "ToolError",
    "ToolResult",
    "__version__",
    "capture",
]

_HOMES = {
    "Audio": "mcpline._results",
    "Cancelled": "mcpline._results",
    "CaptureError": "mcpline._results",
    "SetupError": "mcpline._results",
    "Image": "mcpline._results",
    "McplineError": "mcpline._results",
    "Message": "mcpline._prompts",
    "ToolError": "mcpline._results",
    "ToolResult": "mcpline._results",
    "Server": "mcpline._server",
    "Context": "mcpline._core",
    "__version__": "mcpline._core",
    "capture": "mcpline._capture",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcpline' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
