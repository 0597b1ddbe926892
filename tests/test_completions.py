"""``completion/complete``: suggestions for prompt arguments and template variables, from the
declared type or the server's completer, at most 100 with the total; the ``completions``
capability from 2025-03-26 when there is something to complete."""

from __future__ import annotations

import enum
from typing import Any, Literal

import mcpline
import pytest
from mcpline.testing import Client, RpcError

EVERY_REVISION = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
TEMPLATE = "repos://{owner}/{repo}"


class Language(enum.Enum):
    PYTHON = "python"
    RUST = "rust"
    RUBY = "ruby"


def server() -> mcpline.Server:
    server = mcpline.Server("completions")

    @server.prompt
    def review(
        language: Language,
        length: Literal["short", "long"] = "short",
        strict: bool = False,
        topic: str = "",
    ) -> str:
        return "x"

    @server.resource(TEMPLATE)
    def repo(owner: str, repo: str) -> str:
        return f"{owner}/{repo}"

    return server


def complete(client: Client, ref: dict[str, Any], name: str, value: str, **context: str):
    return client.complete(ref, name, value, context=context)


PROMPT = {"type": "ref/prompt", "name": "review"}
RESOURCE = {"type": "ref/resource", "uri": TEMPLATE}


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_declared_values_of_an_enum_a_literal_or_a_bool_are_suggested_by_prefix(revision):
    with Client(server(), protocol_version=revision) as client:
        assert complete(client, PROMPT, "language", "r") == {
            "values": ["rust", "ruby"],
            "total": 2,
            "hasMore": False,
        }
        assert complete(client, PROMPT, "length", "")["values"] == ["short", "long"]
        assert complete(client, PROMPT, "strict", "t")["values"] == ["true"]
        assert complete(client, PROMPT, "topic", "a")["values"] == []
        assert complete(client, RESOURCE, "repo", "m")["values"] == []


def test_the_completions_capability_is_declared_from_2025_03_26_when_something_completes():
    with Client(server(), protocol_version="2024-11-05") as client:
        assert "completions" not in client.initialize_result["capabilities"]
    with Client(server(), protocol_version="2025-03-26") as client:
        assert client.initialize_result["capabilities"]["completions"] == {}
    with Client(server(), protocol_version="2026-07-28") as client:
        assert client.request("server/discover")["capabilities"]["completions"] == {}
    tools_only = mcpline.Server("tools")
    with Client(tools_only) as client:
        assert "completions" not in client.initialize_result["capabilities"]
        with pytest.raises(RpcError) as refused:
            complete(client, PROMPT, "language", "")
        assert refused.value.code == -32601


@pytest.mark.parametrize(
    ("ref", "name", "says"),
    [
        ({"type": "ref/prompt", "name": "nope"}, "x", 'unknown prompt "nope"'),
        (PROMPT, "colour", 'has no argument "colour"'),
        ({"type": "ref/resource", "uri": "repos://{x}"}, "x", "no resource template"),
        (RESOURCE, "branch", 'has no variable "branch"'),
        ({"type": "ref/tool", "name": "x"}, "x", "must be a ref/prompt or a ref/resource"),
    ],
)
def test_a_reference_to_nothing_completable_is_invalid_params(ref, name, says):
    with Client(server()) as client, pytest.raises(RpcError) as refused:
        complete(client, ref, name, "")
    assert refused.value.code == -32602
    assert says in refused.value.message


def test_the_completer_sees_the_reference_the_typed_value_and_the_context():
    seen = []
    srv = server()

    @srv.completion
    def suggest(ref, argument, context):
        seen.append((ref.type, ref.uri, argument.name, argument.value, context.arguments))
        if argument.name == "repo":
            return [r for r in ("mcpline", "mcp", "other") if r.startswith(argument.value)]
        return None

    with Client(srv) as client:
        found = complete(client, RESOURCE, "repo", "mc", owner="me")
        declared = complete(client, PROMPT, "language", "p")
    assert found == {"values": ["mcpline", "mcp"], "total": 2, "hasMore": False}
    assert declared["values"] == ["python"]  # None: the declared values
    assert seen[0] == ("ref/resource", TEMPLATE, "repo", "mc", {"owner": "me"})


def test_at_most_100_suggestions_are_sent_with_the_total():
    srv = server()

    @srv.completion
    async def many(ref, argument, context):
        return [f"topic-{n}" for n in range(250)]

    with Client(srv) as client:
        found = complete(client, PROMPT, "topic", "")
    assert len(found["values"]) == 100
    assert found["total"] == 250 and found["hasMore"] is True


def test_a_failing_completer_is_an_internal_error():
    srv = server()

    @srv.completion
    def broken(ref, argument, context):
        raise LookupError("index offline")

    with Client(srv) as client, pytest.raises(RpcError) as failed:
        complete(client, PROMPT, "topic", "")
    assert failed.value.code == -32603
    assert "LookupError: index offline" in failed.value.message
