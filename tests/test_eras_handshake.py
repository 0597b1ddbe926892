"""The initialize-handshake era (2024-11-05 … 2025-11-25): negotiation and per-revision shapes."""

import json

import pytest
from conftest import HANDSHAKE_VERSIONS
from mcpline import Context, Server
from mcpline.testing import STATELESS, Client, RpcError

NEWEST_HANDSHAKE = "2025-11-25"

server = Server(
    "eras",
    version="2.3.4",
    title="Eras Server",
    description="A server for era tests.",
    website_url="https://example.invalid/eras",
    instructions="Use the tools.",
)


@server.tool
def revision(ctx: Context) -> str:
    return ctx.protocol_version


@server.tool
def add(a: int, b: int) -> int:
    return a + b


def initialize_frame(request_id, version: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    )


# ----- negotiation -----


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_echoes_a_supported_version(version):
    with Client(server, protocol_version=version) as client:
        assert client.initialize_result["protocolVersion"] == version


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_tool_calls_run_under_the_negotiated_version(version):
    with Client(server, protocol_version=version) as client:
        assert client.call("revision").text == version


@pytest.mark.parametrize("requested", ["1900-01-01", "2099-12-31", "2026-07-28", "latest"])
def test_initialize_with_an_unsupported_version_answers_the_newest_handshake_version(requested):
    with Client(server, protocol_version=STATELESS) as client:  # no automatic handshake
        client.send_raw(initialize_frame(1, requested))
        frame = client.recv_raw(5)
        assert frame["result"]["protocolVersion"] == NEWEST_HANDSHAKE
        client.send_raw(
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"revision"}}'
        )
        call = client.recv_raw(5)
    assert call["result"]["content"] == [{"type": "text", "text": NEWEST_HANDSHAKE}]


def test_initialize_without_a_protocol_version_is_invalid_params():
    with Client(server, protocol_version=STATELESS) as client:
        client.send_raw('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')
        frame = client.recv_raw(5)
    assert frame["id"] == 1
    assert frame["error"]["code"] == -32602


# ----- initialize result shape -----


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_result_declares_tools_and_identifies_the_server(version):
    with Client(server, protocol_version=version) as client:
        result = client.initialize_result
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["serverInfo"]["name"] == "eras"
    assert result["serverInfo"]["version"] == "2.3.4"
    assert result["instructions"] == "Use the tools."


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_server_info_has_only_name_and_version_before_2025_06_18(version):
    with Client(server, protocol_version=version) as client:
        assert client.initialize_result["serverInfo"] == {"name": "eras", "version": "2.3.4"}


def test_server_info_title_is_sent_from_2025_06_18():
    with Client(server, protocol_version="2025-06-18") as client:
        info = client.initialize_result["serverInfo"]
    assert info["title"] == "Eras Server"
    assert "description" not in info
    assert "websiteUrl" not in info


def test_server_info_description_and_website_are_sent_from_2025_11_25():
    with Client(server, protocol_version="2025-11-25") as client:
        info = client.initialize_result["serverInfo"]
    assert info == {
        "name": "eras",
        "version": "2.3.4",
        "title": "Eras Server",
        "description": "A server for era tests.",
        "websiteUrl": "https://example.invalid/eras",
    }


def test_instructions_are_left_out_when_not_set():
    bare = Server("bare")
    with Client(bare) as client:
        assert "instructions" not in client.initialize_result


# ----- lifecycle -----


def test_second_initialize_is_invalid_request_and_keeps_the_first_negotiation():
    with Client(server, protocol_version="2025-03-26") as client:
        with pytest.raises(RpcError) as excinfo:
            client.request(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
            )
        assert excinfo.value.code == -32600
        assert client.call("revision").text == "2025-03-26"


def test_request_before_initialize_is_answered_with_an_error_at_once():
    with Client(server, protocol_version=STATELESS) as client:  # no handshake sent
        client.send_raw('{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
        frame = client.recv_raw(5)
    assert frame is not None, "no answer to a request sent before initialize"
    assert frame["id"] == 7
    assert "error" in frame
    assert isinstance(frame["error"]["code"], int)


def test_ping_before_initialize_answers_an_empty_result():
    with Client(server, protocol_version=STATELESS) as client:
        client.send_raw('{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert client.recv_raw(5) == {"jsonrpc": "2.0", "id": "p", "result": {}}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_ping_after_initialize_answers_an_empty_result(version):
    with Client(server, protocol_version=version) as client:
        assert client.request("ping") == {}


def test_request_sent_before_the_initialized_notification_is_served():
    with Client(server, protocol_version=STATELESS) as client:
        client.send_raw(initialize_frame(1, "2025-06-18"))
        assert client.recv_raw(5)["result"]["protocolVersion"] == "2025-06-18"
        client.send_raw('{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        frame = client.recv_raw(5)
    assert frame["id"] == 2
    assert {t["name"] for t in frame["result"]["tools"]} == {"add", "revision"}


def test_unknown_method_is_method_not_found():
    with Client(server) as client:
        with pytest.raises(RpcError) as excinfo:
            client.request("resources/list")
    assert excinfo.value.code == -32601


def test_unknown_notification_gets_no_answer():
    with Client(server) as client:
        client.notify("notifications/something_new", {"x": 1})
        assert client.recv_raw(0.3) is None
        assert client.request("ping") == {}


# ----- batches (2025-03-26 only) -----


def test_batch_is_answered_with_an_array_in_2025_03_26():
    with Client(server, protocol_version="2025-03-26") as client:
        client.send_raw(
            json.dumps(
                [
                    {"jsonrpc": "2.0", "id": 10, "method": "ping"},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {
                        "jsonrpc": "2.0",
                        "id": 11,
                        "method": "tools/call",
                        "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
                    },
                ]
            )
        )
        frame = client.recv_raw(5)
    assert isinstance(frame, list)
    by_id = {item["id"]: item for item in frame}
    assert set(by_id) == {10, 11}
    assert by_id[10]["result"] == {}
    assert by_id[11]["result"]["content"] == [{"type": "text", "text": "5"}]


def test_batch_of_only_notifications_gets_no_answer_in_2025_03_26():
    with Client(server, protocol_version="2025-03-26") as client:
        client.send_raw('[{"jsonrpc":"2.0","method":"notifications/initialized"}]')
        assert client.recv_raw(0.3) is None
        assert client.request("ping") == {}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batch_is_rejected_outside_2025_03_26_and_the_server_keeps_serving(version):
    with Client(server, protocol_version=version) as client:
        client.send_raw('[{"jsonrpc":"2.0","id":10,"method":"ping"}]')
        frame = client.recv_raw(5)
        assert isinstance(frame, dict)
        assert frame["error"]["code"] == -32600
        assert "id" not in frame
        assert client.request("ping") == {}
