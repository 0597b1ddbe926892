"""``@server.prompt``: prompts listed and got on every protocol revision, their arguments read
from the signature, their messages shaped per revision, and the ``prompts`` capability declared
only when there are prompts."""

from __future__ import annotations

from typing import Annotated, Any

import mcpline
import pytest
from conftest import SERVERS_DIR
from mcpline import Audio, Context, Image, Message
from mcpline.testing import Client, RpcError

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
EVERY_REVISION = [*HANDSHAKE, "2026-07-28"]


def prompt_server(**options: Any) -> mcpline.Server:
    server = mcpline.Server("prompts", **options)

    @server.prompt(title="Code review")
    def review(code: Annotated[str, "The code."], rounds: int = 1, strict: bool = False) -> str:
        """Ask for a review."""
        return f"review {rounds}x strict={strict}:\n{code}"

    @server.prompt(name="show")
    async def show_media(kind: str) -> list[Any]:
        media = Image(b"\x89PNG", "image/png") if kind == "image" else Audio(b"RIFF", "audio/wav")
        return [Message("Look:"), Message(media, role="assistant")]

    @server.prompt
    def broken() -> str:
        print("about to fail")
        raise ValueError("no template")

    @server.prompt
    def who(ctx: Context) -> dict[str, Any]:
        return {"role": "user", "content": f"asked through {ctx.protocol_version}"}

    return server


def get(client: Client, name: str, **arguments: str) -> dict[str, Any]:
    return client.get_prompt(name, **arguments)


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_prompts_are_listed_with_arguments_from_the_signature(revision):
    with Client(prompt_server(), protocol_version=revision) as client:
        prompts = {p["name"]: p for p in client.list_prompts()}
    assert sorted(prompts) == ["broken", "review", "show", "who"]
    review = prompts["review"]
    assert review["description"] == "Ask for a review."
    assert review["arguments"] == [
        {"name": "code", "description": "The code.", "required": True},
        {"name": "rounds", "required": False},
        {"name": "strict", "required": False},
    ]
    assert "arguments" not in prompts["who"]  # the context is not an argument
    assert ("title" in review) == (revision >= "2025-06-18")


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_a_prompt_is_got_with_its_string_arguments_read_as_declared(revision):
    with Client(prompt_server(), protocol_version=revision) as client:
        result = get(client, "review", code="x = 1", rounds="3", strict="true")
    assert result["description"] == "Ask for a review."
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "review 3x strict=True:\nx = 1"}}
    ]
    assert ("resultType" in result) == (revision == "2026-07-28")


def test_the_prompts_capability_is_declared_only_when_there_are_prompts():
    with Client(prompt_server()) as client:
        assert client.initialize_result["capabilities"]["prompts"] == {"listChanged": False}
    with Client(prompt_server(), protocol_version="2026-07-28") as client:
        assert client.request("server/discover")["capabilities"]["prompts"] == {
            "listChanged": False
        }
    bare = mcpline.Server("bare")
    for revision in ["2025-11-25", "2026-07-28"]:
        with Client(bare, protocol_version=revision) as client:
            if client.initialize_result is not None:
                assert "prompts" not in client.initialize_result["capabilities"]
            for method in ("prompts/list", "prompts/get"):
                with pytest.raises(RpcError) as refused:
                    client.request(method, {"name": "x"})
                assert refused.value.code == -32601


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "needs the argument(s) code"),
        ({"code": "x", "rounds": "many"}, 'argument "rounds" must be an integer'),
        ({"code": "x", "strict": "yes"}, 'argument "strict" must be true or false'),
        ({"code": "x", "color": "red"}, 'has no argument "color"'),
    ],
)
def test_missing_unknown_or_unreadable_arguments_are_invalid_params(arguments, says):
    with Client(prompt_server()) as client, pytest.raises(RpcError) as refused:
        get(client, "review", **arguments)
    assert refused.value.code == -32602
    assert says in refused.value.message


def test_an_unknown_prompt_is_invalid_params_naming_the_prompts():
    with Client(prompt_server()) as client, pytest.raises(RpcError) as refused:
        get(client, "nope")
    assert refused.value.code == -32602
    assert 'unknown prompt "nope" (available: broken, review, show, who)' in refused.value.message


def test_arguments_that_are_not_strings_are_invalid_params():
    with Client(prompt_server()) as client, pytest.raises(RpcError) as refused:
        client.request("prompts/get", {"name": "review", "arguments": {"code": 5}})
    assert refused.value.code == -32602


def test_a_failing_prompt_is_an_internal_error_with_its_message():
    with Client(prompt_server()) as client:
        with pytest.raises(RpcError) as failed:
            get(client, "broken")
        assert failed.value.code == -32603
        assert "ValueError: no template" in failed.value.message
        # The server goes on.
        assert get(client, "who")["messages"][0]["content"]["text"] == "asked through 2025-11-25"


def test_what_a_prompt_prints_is_captured_never_on_the_protocol_and_shown_when_it_fails(spawn):
    server = spawn(SERVERS_DIR / "prompt_server.py")
    server.initialize()
    failed = server.request("prompts/get", {"name": "broken"})
    assert failed["error"]["code"] == -32603
    assert "ValueError: no template" in failed["error"]["message"]
    assert "about to fail\nreally" in failed["error"]["message"]
    greeted = server.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert greeted["result"]["messages"][0]["content"]["text"] == "Say hello to Ada."
    server.close_stdin()
    assert server.wait(10) == 0
    for line in server.stdout_lines:
        assert b"about to fail" not in line or b'"error"' in line
    assert "[broken #2] about to fail" in server.stderr_text()


@pytest.mark.parametrize(
    ("revision", "audio_type"), [("2024-11-05", "text"), ("2025-03-26", "audio")]
)
def test_media_messages_are_shaped_for_the_revision(revision, audio_type):
    with Client(prompt_server(), protocol_version=revision) as client:
        image = get(client, "show", kind="image")["messages"]
        audio = get(client, "show", kind="audio")["messages"]
    assert image[0] == {"role": "user", "content": {"type": "text", "text": "Look:"}}
    assert image[1]["role"] == "assistant"
    assert image[1]["content"] == {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
    assert audio[1]["content"]["type"] == audio_type  # audio exists from 2025-03-26


def test_prompt_lists_are_paginated_and_stateless_lists_carry_cache_fields():
    server = prompt_server(page_size=3)
    with Client(server) as client:
        first = client.request("prompts/list")
        assert [p["name"] for p in first["prompts"]] == ["broken", "review", "show"]
        second = client.request("prompts/list", {"cursor": first["nextCursor"]})
        assert [p["name"] for p in second["prompts"]] == ["who"]
        assert "nextCursor" not in second
    with Client(server, protocol_version="2026-07-28") as client:
        page = client.request("prompts/list")
        assert page["ttlMs"] == 0 and page["cacheScope"] == "public"


@pytest.mark.parametrize(
    "returned",
    [None, 42, [], {"role": "system", "content": "x"}, [Message("a"), object()]],
    ids=["none", "number", "empty", "system-role", "object-in-list"],
)
def test_a_prompt_returning_no_messages_is_an_internal_error_saying_so(returned):
    server = mcpline.Server("s")

    @server.prompt
    def odd() -> Any:
        return returned

    with Client(server) as client, pytest.raises(RpcError) as failed:
        get(client, "odd")
    assert failed.value.code == -32603


def test_a_message_role_other_than_user_or_assistant_is_refused_when_made():
    with pytest.raises(ValueError, match='role is "user" or "assistant"'):
        Message("x", role="system")


def test_prompt_names_follow_the_tool_name_rule_and_are_unique():
    server = mcpline.Server("s")
    with pytest.raises(mcpline.SetupError, match="cannot register prompt"):
        server.prompt(name="has space")(lambda: "x")

    @server.prompt
    def twice() -> str:
        return "x"

    with pytest.raises(mcpline.SetupError, match="must be unique"):
        server.prompt(name="twice")(lambda: "y")
