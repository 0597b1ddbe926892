"""Results honour their declared type: every result a tool with an ``outputSchema`` sends is
valid against it, checked in the core with the argument validator.

Driven by the official Python SDK client, which itself rejects a ``structuredContent`` that
does not match the tool's ``outputSchema``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = Path(__file__).resolve().parent / "servers" / "contract_server.py"


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """One tools/call through the official client, in wire form."""

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable, args=[str(SERVER)], env=dict(os.environ)
        )
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.list_tools()  # the client checks results against these
                    result = await session.call_tool(name, arguments or {})
                    return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    return anyio.run(main)


def text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result["content"] if b["type"] == "text")


def test_none_from_an_optional_return_is_a_null_result() -> None:
    result = call("find", {"name": "nobody"})
    assert result.get("isError") is not True
    assert result["structuredContent"] == {"result": None}
    assert call("find", {"name": "two"})["structuredContent"] == {"result": 2}


def test_a_str_from_a_union_with_str_is_structured_too() -> None:
    result = call("word_or_number", {"word": True})
    assert result["structuredContent"] == {"result": "hi"}
    assert text(result) == "hi"


@pytest.mark.parametrize(
    ("tool", "declared", "problem"),
    [
        ("wrong_int", "return type int", 'result: "x" is not of type "integer"'),
        ("wrong_list", "return type list[int]", 'result: {"a":1} is not of type "array"'),
        ("wrong_point", "return type __main__.Point", 'result: null is not of type "object"'),
        ("bad_item", "return type list[int]", 'result "2": "three" is not of type "integer"'),
    ],
)
def test_a_result_that_breaks_the_declared_type_is_an_error_naming_both(
    tool: str, declared: str, problem: str
) -> None:
    result = call(tool)
    assert result["isError"] is True
    assert "structuredContent" not in result
    message = text(result)
    assert f'Tool "{tool}" returned a result that does not match its declared {declared}' in message
    assert problem in message


def test_a_tool_registered_not_strict_sends_its_result_unchecked() -> None:
    # The official client rejects the mismatched structuredContent itself.
    with pytest.raises(BaseException) as caught:
        call("unchecked")
    assert "structured content" in leaves(caught.value).lower()


def leaves(exc: BaseException) -> str:
    """The messages of the exceptions inside (nested) exception groups."""
    inner = getattr(exc, "exceptions", None)  # an ExceptionGroup (or its 3.10 backport)
    if isinstance(inner, tuple):
        return "\n".join(leaves(e) for e in inner)
    return f"{type(exc).__name__}: {exc}"
