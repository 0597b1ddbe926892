"""``Context``: what a tool sees of its call, and the notifications it can send."""

import json

import pytest
from conftest import ALL_VERSIONS, HANDSHAKE_VERSIONS
from mcpline import Context, Server
from mcpline.testing import STATELESS, Client

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

server = Server("ctx")


@server.tool
def identity(ctx: Context) -> dict:
    return {
        "request_id": ctx.request_id,
        "request_id_type": type(ctx.request_id).__name__,
        "tool_name": ctx.tool_name,
        "protocol_version": ctx.protocol_version,
        "client_info": ctx.client_info,
        "cancelled": ctx.cancelled,
    }


@server.tool
def steps(ctx: Context, count: int = 3) -> list[bool]:
    sent = []
    for done in range(1, count + 1):
        sent.append(ctx.progress(done, count, f"step {done}"))
    return sent


@server.tool
def bare_progress(ctx: Context) -> list[bool]:
    return [ctx.progress(1), ctx.progress(1), ctx.progress(0.5), ctx.progress(2)]


@server.tool
def say(ctx: Context, level: str, message: str) -> bool:
    return ctx.log(level, message)


@server.tool
def check(ctx: Context) -> str:
    ctx.check_cancelled()
    return "not cancelled"


def progress_notes(client: Client) -> list[dict]:
    return [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]


def log_notes(client: Client) -> list[dict]:
    return [n["params"] for n in client.notifications if n["method"] == "notifications/message"]


# ----- request id, revision, client -----


def test_request_id_is_an_int_when_the_client_sent_an_int():
    with Client(server) as client:
        client.send_raw(
            '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"identity"}}'
        )
        frame = client.recv_raw(5)
    assert frame["id"] == 41
    data = frame["result"]["structuredContent"]
    assert data["request_id"] == 41
    assert data["request_id_type"] == "int"


def test_request_id_is_a_str_when_the_client_sent_a_str():
    with Client(server) as client:
        client.send_raw(
            '{"jsonrpc":"2.0","id":"41","method":"tools/call","params":{"name":"identity"}}'
        )
        frame = client.recv_raw(5)
    assert frame["id"] == "41"
    data = frame["result"]["structuredContent"]
    assert data["request_id"] == "41"
    assert data["request_id_type"] == "str"


def test_request_id_keeps_large_and_negative_integers():
    with Client(server) as client:
        for request_id in (2**53, -5, 0):
            frame = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "identity"},
            }
            client.send_raw(json.dumps(frame))
            answer = client.recv_raw(5)
            assert answer["id"] == request_id
            assert answer["result"]["structuredContent"]["request_id"] == request_id


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_protocol_version_is_the_revision_of_the_request(version):
    with Client(server, protocol_version=version) as client:
        result = client.call("identity")
    assert json.loads(result.content[0]["text"])["protocol_version"] == version


def test_tool_name_is_the_registered_name():
    with Client(server) as client:
        assert client.call("identity").structured["tool_name"] == "identity"


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, STATELESS])
def test_client_info_is_what_the_client_sent(version):
    info = {"name": "context-tester", "version": "9.9"}
    with Client(server, protocol_version=version, client_info=info) as client:
        result = client.call("identity")
    assert json.loads(result.content[0]["text"])["client_info"] == info


def test_client_info_is_none_when_the_client_sent_none():
    with Client(server, protocol_version=STATELESS) as client:
        client.send_raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
                }
            )
        )
        assert client.recv_raw(5)["result"]["protocolVersion"] == "2025-11-25"
        client.send_raw(
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"identity"}}'
        )
        data = client.recv_raw(5)["result"]["structuredContent"]
    assert data["client_info"] is None


def test_a_normal_call_is_not_cancelled():
    with Client(server) as client:
        assert client.call("identity").structured["cancelled"] is False
        assert client.call("check").text == "not cancelled"


# ----- progress -----


def test_progress_is_not_sent_without_a_progress_token():
    with Client(server) as client:
        result = client.call("steps")
        assert result.structured == {"result": [False, False, False]}
        assert progress_notes(client) == []


@pytest.mark.parametrize("token", ["tok-1", 7], ids=["str-token", "int-token"])
def test_progress_is_sent_with_the_token_of_the_request_and_its_json_type(token):
    with Client(server) as client:
        result = client.call_with("steps", {"count": 3}, progress_token=token)
        notes = progress_notes(client)
    assert result.structured == {"result": [True, True, True]}
    assert [n["progress"] for n in notes] == [1, 2, 3]
    assert all(n["total"] == 3 for n in notes)
    assert all(n["progressToken"] == token for n in notes)
    assert all(type(n["progressToken"]) is type(token) for n in notes)


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25", STATELESS])
def test_progress_message_is_sent_from_2025_03_26(version):
    with Client(server, protocol_version=version) as client:
        client.call_with("steps", {"count": 2}, progress_token="t")
        notes = progress_notes(client)
    assert [n["message"] for n in notes] == ["step 1", "step 2"]


def test_progress_message_is_left_out_for_2024_11_05():
    with Client(server, protocol_version="2024-11-05") as client:
        client.call_with("steps", {"count": 2}, progress_token="t")
        notes = progress_notes(client)
    assert len(notes) == 2
    assert all("message" not in n for n in notes)


def test_progress_notifications_arrive_before_the_response():
    with Client(server) as client:
        client.send_raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {
                        "name": "steps",
                        "arguments": {"count": 2},
                        "_meta": {"progressToken": "p"},
                    },
                }
            )
        )
        frames = [client.recv_raw(5) for _ in range(3)]
        assert client.recv_raw(0.2) is None
    assert [f.get("method") for f in frames] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert frames[2]["id"] == 5
    assert all("id" not in f for f in frames[:2])


def test_progress_is_sent_only_when_it_increases():
    with Client(server) as client:
        result = client.call_with("bare_progress", {}, progress_token=1)
        notes = progress_notes(client)
    assert result.structured == {"result": [True, False, False, True]}
    assert [n["progress"] for n in notes] == [1, 2]
    assert all("total" not in n for n in notes)


# ----- logging -----


def test_log_is_not_sent_before_logging_set_level():
    with Client(server) as client:
        result = client.call("say", level="error", message="hello")
        assert result.structured == {"result": False}
        assert log_notes(client) == []


def test_log_is_sent_after_logging_set_level():
    with Client(server) as client:
        assert client.request("logging/setLevel", {"level": "info"}) == {}
        result = client.call("say", level="info", message="hello")
        notes = log_notes(client)
    assert result.structured == {"result": True}
    assert len(notes) == 1
    assert notes[0]["level"] == "info"
    assert notes[0]["data"] == "hello"


def test_log_below_the_set_level_is_not_sent():
    with Client(server) as client:
        client.request("logging/setLevel", {"level": "warning"})
        assert client.call("say", level="info", message="quiet").structured == {"result": False}
        assert client.call("say", level="error", message="loud").structured == {"result": True}
        notes = log_notes(client)
    assert [n["data"] for n in notes] == ["loud"]


def test_invalid_log_level_for_set_level_is_invalid_params():
    from mcpline.testing import RpcError

    with Client(server) as client, pytest.raises(RpcError) as excinfo:
        client.request("logging/setLevel", {"level": "verbose"})
    assert excinfo.value.code == -32602


def test_log_with_an_unknown_level_is_an_error_result():
    with Client(server) as client:
        result = client.call("say", level="verbose", message="x")
    assert result.is_error
    assert "verbose" in result.text


def test_stateless_log_is_not_sent_without_a_log_level_in_meta():
    with Client(server, protocol_version=STATELESS) as client:
        result = client.call("say", level="emergency", message="hello")
        assert result.structured == {"result": False}
        assert log_notes(client) == []


def test_stateless_log_is_sent_with_a_log_level_in_meta():
    with Client(server, protocol_version=STATELESS) as client:
        result = client.request(
            "tools/call",
            {
                "name": "say",
                "arguments": {"level": "info", "message": "hello"},
                "_meta": {LOG_LEVEL_KEY: "debug"},
            },
        )
        notes = log_notes(client)
    assert result["structuredContent"] == {"result": True}
    assert len(notes) == 1
    assert notes[0]["level"] == "info"
    assert notes[0]["data"] == "hello"


def test_stateless_log_level_applies_to_its_own_request_only():
    with Client(server, protocol_version=STATELESS) as client:
        client.request(
            "tools/call",
            {
                "name": "say",
                "arguments": {"level": "info", "message": "first"},
                "_meta": {LOG_LEVEL_KEY: "debug"},
            },
        )
        second = client.call("say", level="info", message="second")
        notes = log_notes(client)
    assert second.structured == {"result": False}
    assert [n["data"] for n in notes] == ["first"]


def test_stateless_log_below_the_requested_level_is_not_sent():
    with Client(server, protocol_version=STATELESS) as client:
        result = client.request(
            "tools/call",
            {
                "name": "say",
                "arguments": {"level": "debug", "message": "quiet"},
                "_meta": {LOG_LEVEL_KEY: "error"},
            },
        )
        notes = log_notes(client)
    assert result["structuredContent"] == {"result": False}
    assert notes == []
