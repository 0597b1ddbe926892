"""The server that the official MCP SDK clients drive in the interop tests.

Run it as a script: ``python tests/servers/interop_server.py`` serves stdio until end of input.
tests/test_interop_python_sdk.py and tests/test_interop_typescript_sdk.py start it as a
subprocess and check what a real client sees; keep the tool set and the expected values in
those files in step with this one.
"""

from __future__ import annotations

import time
from typing import Literal

from mcpline import Context, Message, Server, ToolError

server = Server("interop", version="1.0.0", instructions="Test server.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(read_only=True)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
def fail(message: str) -> str:
    """Fail with the given message as a tool error."""
    raise ToolError(message)


@server.tool(read_only=True)
def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer "done"."""
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        time.sleep(min(0.05, remaining))
    return "done"


@server.tool(read_only=True)
def wait(seconds: float, ctx: Context) -> str:
    """Sleep for up to the given seconds; answer "cancelled" early once the call is cancelled."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ctx.cancelled:
            return "cancelled"
        time.sleep(0.02)
    return "done"


@server.tool
def crash() -> str:
    """Raise an unexpected exception (not a ToolError)."""
    raise RuntimeError("kaboom")


@server.prompt(title="Code review")
def review(code: str, focus: Literal["bugs", "style", "speed"] = "bugs") -> str:
    """Ask for a review of some code.

    Args:
        code: The code to review.
        focus: What to look for.
    """
    return f"Review this code for {focus}:\n{code}"


@server.prompt
async def dialogue(topic: str) -> list[Message]:
    """A short exchange about a topic."""
    return [Message(f"Tell me about {topic}."), Message("Gladly.", role="assistant")]


@server.resource("config://app", mime_type="application/json")
def app_config() -> dict[str, bool]:
    """The application's settings."""
    return {"debug": False}


@server.resource("users://{user_id}/name")
def user_name(user_id: int) -> str:
    """A user's name."""
    return f"user-{user_id}"


if __name__ == "__main__":
    server.run()
