"""The stateless era (2026-07-28): per-request ``_meta``, ``server/discover``, no handshake."""

import json

import pytest
from mcpline import Context, Server, ToolError
from mcpline.testing import STATELESS, Client, RpcError

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

server = Server(
    "modern",
    version="3.0.0",
    title="Modern Server",
    instructions="Stateless instructions.",
)


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@server.tool
def refuse() -> str:
    raise ToolError("no")


@server.tool
def revision(ctx: Context) -> str:
    return ctx.protocol_version


@pytest.fixture
def client():
    with Client(server, protocol_version=STATELESS) as c:
        yield c


def meta(**overrides) -> dict:
    envelope = {VERSION_KEY: STATELESS, CAPS_KEY: {}}
    envelope.update(overrides)
    return envelope


def raw_request(client: Client, request_id, method: str, params: dict) -> dict:
    client.send_raw(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    )
    frame = client.recv_raw(5)
    assert frame is not None, f"no answer to {method}"
    return frame


# ----- no handshake -----


def test_requests_are_served_without_initialize(client):
    assert client.initialize_result is None
    assert client.call("add", a=1, b=2).structured == {"result": 3}


def test_tool_calls_run_under_the_2026_07_28_revision(client):
    assert client.call("revision").text == STATELESS


# ----- server/discover -----


def test_discover_reports_versions_capabilities_and_caching(client):
    result = client.request("server/discover")
    assert result["resultType"] == "complete"
    assert STATELESS in result["supportedVersions"]
    assert "tools" in result["capabilities"]
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert isinstance(result["cacheScope"], str)
    assert result["instructions"] == "Stateless instructions."


def test_discover_identifies_the_server_in_meta(client):
    result = client.request("server/discover")
    info = result["_meta"][SERVER_INFO_KEY]
    assert info["name"] == "modern"
    assert info["version"] == "3.0.0"


# ----- result shapes -----


def test_tools_list_carries_result_type_ttl_and_cache_scope(client):
    result = client.request("tools/list")
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert isinstance(result["cacheScope"], str)
    assert [t["name"] for t in result["tools"]] == ["add", "refuse", "revision"]


def test_tool_results_carry_result_type_complete(client):
    assert client.call("add", a=1, b=1).raw["resultType"] == "complete"


def test_tool_error_results_carry_result_type_complete(client):
    result = client.call("refuse")
    assert result.is_error
    assert result.raw["resultType"] == "complete"


def test_validation_error_results_carry_result_type_complete(client):
    result = client.call("add", a="1", b=1)
    assert result.is_error
    assert result.raw["resultType"] == "complete"


def test_tool_results_identify_the_server_in_meta(client):
    info = client.call("add", a=1, b=1).raw["_meta"][SERVER_INFO_KEY]
    assert info["name"] == "modern"


# ----- methods that do not exist in this revision -----


@pytest.mark.parametrize("method", ["ping", "initialize", "logging/setLevel", "resources/list"])
def test_removed_or_unknown_methods_are_method_not_found(client, method):
    params: dict = {"_meta": meta()}  # explicit: the client adds no envelope to initialize
    if method == "logging/setLevel":
        params["level"] = "info"
    with pytest.raises(RpcError) as excinfo:
        client.request(method, params)
    assert excinfo.value.code == -32601


# ----- the envelope -----


@pytest.mark.parametrize("requested", ["1900-01-01", "2099-01-01", "2025-11-25"])
def test_unsupported_version_is_error_32022_with_supported_and_requested(client, requested):
    with pytest.raises(RpcError) as excinfo:
        client.request("tools/list", {"_meta": meta(**{VERSION_KEY: requested})})
    error = excinfo.value
    assert error.code == -32022
    assert error.data["requested"] == requested
    assert STATELESS in error.data["supported"]
    discovered = client.request("server/discover")["supportedVersions"]
    assert set(error.data["supported"]) <= set(discovered)


def test_missing_client_capabilities_is_invalid_params(client):
    frame = raw_request(client, 1, "tools/list", {"_meta": {VERSION_KEY: STATELESS}})
    assert frame["id"] == 1
    assert frame["error"]["code"] == -32602


def test_missing_protocol_version_is_invalid_params(client):
    frame = raw_request(client, "x", "tools/list", {"_meta": {CAPS_KEY: {}}})
    assert frame["id"] == "x"
    assert frame["error"]["code"] == -32602


def test_missing_client_info_is_still_served(client):
    frame = raw_request(client, 2, "tools/list", {"_meta": meta()})
    assert frame["result"]["resultType"] == "complete"


def test_each_request_is_judged_on_its_own_envelope(client):
    with pytest.raises(RpcError):
        client.request("tools/list", {"_meta": meta(**{VERSION_KEY: "1900-01-01"})})
    assert client.call("add", a=2, b=2).structured == {"result": 4}


# ----- both eras in one process -----


def test_a_process_serves_initialize_after_stateless_traffic(client):
    assert client.request("tools/list")["resultType"] == "complete"
    frame = raw_request(
        client,
        50,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old"}},
    )
    assert frame["result"]["protocolVersion"] == "2025-06-18"
    legacy = raw_request(client, 51, "tools/call", {"name": "revision", "arguments": {}})
    assert legacy["result"]["content"] == [{"type": "text", "text": "2025-06-18"}]
    assert "resultType" not in legacy["result"]
    assert client.call("revision").text == STATELESS
