"""What goes wrong inside a tool is an isError result; protocol mistakes are JSON-RPC errors."""

import sys

import pytest
from mcpline import Server, ToolError
from mcpline.testing import Client, RpcError

server = Server("errors")


class Opaque:
    """Not JSON data."""


class CustomError(Exception):
    pass


@server.tool
def ok() -> str:
    return "fine"


@server.tool
def refuse(message: str) -> str:
    raise ToolError(message)


@server.tool
def bad_value() -> str:
    raise ValueError("bad")


@server.tool
def custom() -> str:
    raise CustomError("custom failure")


@server.tool
def divide(a: int, b: int) -> float:
    return a / b


@server.tool
def leave() -> str:
    sys.exit(3)


@server.tool
def opaque():
    return Opaque()


@server.tool
def nested_opaque():
    return {"inner": [Opaque()]}


@server.tool
def not_a_number() -> float:
    return float("nan")


@server.tool
def infinite() -> float:
    return float("inf")


@server.tool
def nan_inside() -> list[float]:
    return [1.0, float("nan")]


@server.tool
def bad_content() -> object:
    from mcpline import ToolResult

    return ToolResult(content=[Opaque()])


@pytest.fixture
def client():
    with Client(server) as c:
        yield c


# ----- ToolError -----


def test_tool_error_is_an_error_result_whose_first_block_is_exactly_the_message(client):
    result = client.call("refuse", message="msg")
    assert result.is_error is True
    assert result.content[0] == {"type": "text", "text": "msg"}


def test_tool_error_message_is_not_prefixed_with_the_exception_type(client):
    result = client.call("refuse", message="disk is full: 0 bytes left")
    assert result.content[0]["text"] == "disk is full: 0 bytes left"


def test_tool_error_has_no_structured_content(client):
    result = client.call("refuse", message="x")
    assert "structuredContent" not in result.raw


# ----- unexpected exceptions -----


def test_other_exception_becomes_type_colon_message(client):
    result = client.call("bad_value")
    assert result.is_error is True
    assert result.content[0]["text"] == "ValueError: bad"


def test_user_defined_exception_is_named_by_its_class(client):
    result = client.call("custom")
    assert result.is_error is True
    assert result.content[0]["text"] == "CustomError: custom failure"


def test_builtin_runtime_error_is_reported(client):
    result = client.call("divide", a=1, b=0)
    assert result.is_error is True
    assert result.content[0]["text"].startswith("ZeroDivisionError: ")


def test_server_keeps_serving_after_an_exception(client):
    assert client.call("bad_value").is_error
    after = client.call("ok")
    assert not after.is_error
    assert after.text == "fine"


def test_sys_exit_inside_a_tool_is_an_error_result(client):
    result = client.call("leave")
    assert result.is_error is True
    assert "SystemExit" in result.content[0]["text"]


def test_server_keeps_serving_after_sys_exit(client):
    client.call("leave")
    assert client.call("ok").text == "fine"
    assert client.call("divide", a=6, b=3).structured == {"result": 2.0}


def test_many_failures_in_a_row_leave_the_server_healthy(client):
    for _ in range(20):
        assert client.call("bad_value").is_error
    assert client.call("ok").text == "fine"


# ----- unconvertible return values -----


def test_unconvertible_return_value_is_an_error_result_explaining_it(client):
    result = client.call("opaque")
    assert result.is_error is True
    text = result.content[0]["text"]
    assert "Opaque" in text
    assert "JSON" in text


def test_unconvertible_value_nested_in_data_is_an_error_result(client):
    result = client.call("nested_opaque")
    assert result.is_error is True
    assert "Opaque" in result.content[0]["text"]
    assert client.call("ok").text == "fine"


@pytest.mark.parametrize(
    ("tool", "word"), [("not_a_number", "nan"), ("infinite", "inf"), ("nan_inside", "nan")]
)
def test_non_finite_float_is_an_error_result_not_a_silent_null(client, tool, word):
    # NaN and the infinities have no JSON form; sending null would also break the outputSchema.
    result = client.call(tool)
    assert result.is_error is True, result.raw
    assert word in result.content[0]["text"].lower()
    assert "structuredContent" not in result.raw


def test_unconvertible_tool_result_content_item_is_an_error_result(client):
    result = client.call("bad_content")
    assert result.is_error is True
    assert "Opaque" in result.content[0]["text"]


# ----- protocol errors -----


def test_unknown_tool_is_a_method_not_found_rpc_error(client):
    with pytest.raises(RpcError) as excinfo:
        client.call("no_such_tool")
    assert excinfo.value.code == -32601
    assert "no_such_tool" in excinfo.value.message


def test_missing_tool_name_is_an_invalid_params_rpc_error(client):
    with pytest.raises(RpcError) as excinfo:
        client.request("tools/call", {"arguments": {}})
    assert excinfo.value.code == -32602


def test_non_string_tool_name_is_an_invalid_params_rpc_error(client):
    with pytest.raises(RpcError) as excinfo:
        client.request("tools/call", {"name": 42, "arguments": {}})
    assert excinfo.value.code == -32602


def test_arguments_that_are_not_an_object_are_an_invalid_params_rpc_error(client):
    with pytest.raises(RpcError) as excinfo:
        client.call_with("ok", [1, 2])
    assert excinfo.value.code == -32602


def test_server_keeps_serving_after_protocol_errors(client):
    with pytest.raises(RpcError):
        client.call("no_such_tool")
    with pytest.raises(RpcError):
        client.request("tools/call", {})
    assert client.call("ok").text == "fine"
