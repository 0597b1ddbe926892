"""``@server.resource``: fixed resources and RFC 6570 templates, listed and read on every
protocol revision; an unknown URI is the revision's error; the ``resources`` capability is
declared only when there are resources."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcpline
import pytest
from conftest import SERVERS_DIR
from mcpline import Context, Image
from mcpline.testing import Client, RpcError

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
EVERY_REVISION = [*HANDSHAKE, "2026-07-28"]
STAMP = "2026-12-04T09:00:00Z"


def resource_server(**options: Any) -> mcpline.Server:
    server = mcpline.Server("resources", **options)

    @server.resource(
        "config://app",
        title="App configuration",
        mime_type="application/json",
        size=15,
        annotations={"audience": ["assistant"], "priority": 0.8, "lastModified": STAMP},
    )
    def config() -> dict[str, Any]:
        """The application's settings."""
        return {"debug": False}

    @server.resource("notes://readme")
    def readme() -> str:
        return "Read me."

    @server.resource("users://{user_id}/avatar")
    def avatar(user_id: int) -> Image:
        return Image(bytes([user_id % 256]), "image/png")

    @server.resource("logs://{day}/{name}", mime_type="text/plain")
    async def log(day: str, name: str, ctx: Context) -> str:
        return f"{name} of {day} via {ctx.protocol_version}"

    @server.resource("raw://{key}")
    def raw(key: str) -> list[dict[str, Any]]:
        return [{"text": key}, {"blob": base64.b64encode(b"\x00").decode(), "mimeType": "x/y"}]

    return server


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_fixed_resources_are_listed_in_uri_order_with_what_the_revision_defines(revision):
    with Client(resource_server(), protocol_version=revision) as client:
        listed = client.list_resources()
    assert [r["uri"] for r in listed] == ["config://app", "notes://readme"]
    config = listed[0]
    assert config["name"] == "config"
    assert config["description"] == "The application's settings."
    assert config["mimeType"] == "application/json"
    assert config["size"] == 15
    assert ("title" in config) == (revision >= "2025-06-18")
    assert config["annotations"]["priority"] == 0.8
    assert ("lastModified" in config["annotations"]) == (revision >= "2025-06-18")
    assert list(config)[:2] == ["uri", "name"]  # the declared order survives


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_templates_are_listed_in_the_order_they_were_added(revision):
    with Client(resource_server(), protocol_version=revision) as client:
        templates = client.list_resource_templates()
    assert [t["uriTemplate"] for t in templates] == [
        "users://{user_id}/avatar",
        "logs://{day}/{name}",
        "raw://{key}",
    ]
    assert templates[1]["mimeType"] == "text/plain"
    assert "size" not in templates[0]


@pytest.mark.parametrize("revision", EVERY_REVISION)
def test_reading_gives_text_blobs_and_json_with_the_uri_read(revision):
    with Client(resource_server(), protocol_version=revision) as client:
        config = client.read_resource("config://app")
        readme = client.read_resource("notes://readme")
        avatar = client.read_resource("users://7/avatar")
        log = client.read_resource("logs://2026-12-04/app%20log")
    assert config == [
        {"mimeType": "application/json", "text": '{\n  "debug": false\n}', "uri": "config://app"}
    ]
    assert json.loads(config[0]["text"]) == {"debug": False}
    assert readme == [{"mimeType": "text/plain", "text": "Read me.", "uri": "notes://readme"}]
    assert avatar == [{"mimeType": "image/png", "blob": "Bw==", "uri": "users://7/avatar"}]
    assert log[0]["text"] == f"app log of 2026-12-04 via {revision}"
    assert log[0]["mimeType"] == "text/plain"


def test_explicit_contents_are_sent_as_given_with_the_uri_filled_in():
    with Client(resource_server()) as client:
        contents = client.read_resource("raw://k")
    assert contents == [
        {"text": "k", "uri": "raw://k"},
        {"blob": "AA==", "mimeType": "x/y", "uri": "raw://k"},
    ]


@pytest.mark.parametrize(
    ("revision", "code"), [*((r, -32002) for r in HANDSHAKE), ("2026-07-28", -32602)]
)
def test_an_unknown_uri_is_the_revisions_not_found_error_with_the_uri(revision, code):
    with Client(resource_server(), protocol_version=revision) as client:
        for uri in ("missing://x", "users://7/photo", "logs://only-a-day"):
            with pytest.raises(RpcError) as refused:
                client.read_resource(uri)
            assert refused.value.code == code
            assert refused.value.data == {"uri": uri}


def test_a_template_variable_its_type_refuses_is_invalid_params():
    with Client(resource_server()) as client, pytest.raises(RpcError) as refused:
        client.read_resource("users://seven/avatar")
    assert refused.value.code == -32602
    assert '"user_id" in users://seven/avatar must be an integer' in refused.value.message


def test_read_results_of_2026_07_28_carry_cache_fields():
    with Client(resource_server(), protocol_version="2026-07-28") as client:
        result = client.request("resources/read", {"uri": "notes://readme"})
        listed = client.request("resources/list")
    for page in (result, listed):
        assert page["resultType"] == "complete"
        assert page["ttlMs"] == 0 and page["cacheScope"] == "public"


def test_the_resources_capability_is_declared_only_when_there_are_resources():
    with Client(resource_server()) as client:
        assert client.initialize_result["capabilities"]["resources"] == {
            "subscribe": False,
            "listChanged": False,
        }
    with Client(resource_server(), protocol_version="2026-07-28") as client:
        assert "resources" in client.request("server/discover")["capabilities"]
    with Client(mcpline.Server("bare")) as client:
        assert "resources" not in client.initialize_result["capabilities"]
        for method in ("resources/list", "resources/templates/list", "resources/read"):
            with pytest.raises(RpcError) as refused:
                client.request(method, {"uri": "config://app"})
            assert refused.value.code == -32601


def test_a_failing_read_is_an_internal_error_naming_the_uri():
    server = mcpline.Server("s")

    @server.resource("broken://{name}")
    def broken(name: str) -> str:
        raise OSError(f"cannot open {name}")

    with Client(server) as client, pytest.raises(RpcError) as failed:
        client.read_resource("broken://db")
    assert failed.value.code == -32603
    assert "OSError: cannot open db" in failed.value.message
    assert failed.value.data == {"uri": "broken://db"}


@pytest.mark.parametrize(
    ("uri", "function", "says"),
    [
        ("logs://{day}", lambda: "x", "must be the URI's variables (day)"),
        ("logs://{day}", lambda night: "x", "(night) must be the URI's variables (day)"),
        ("config://app", lambda key: "x", "(key) must be the URI's variables (none)"),
        ("logs://{day", lambda: "x", "without its"),
    ],
)
def test_a_resource_whose_parameters_do_not_fit_its_uri_is_refused_at_registration(
    uri, function, says
):
    server = mcpline.Server("s")
    with pytest.raises(mcpline.SetupError, match="cannot register resource") as refused:
        server.resource(uri)(function)
    assert says in str(refused.value)


def test_a_uri_can_be_registered_once():
    server = mcpline.Server("s")
    server.resource("config://app")(lambda: "a")
    with pytest.raises(mcpline.SetupError, match="already registered"):
        server.resource("config://app")(lambda: "b")


def test_the_decorator_needs_the_uri():
    server = mcpline.Server("s")
    with pytest.raises(TypeError, match="takes the URI first"):
        server.resource(lambda: "x")  # type: ignore[arg-type]


def test_a_read_runs_like_a_call_what_it_prints_stays_off_the_protocol(spawn):
    server = spawn(SERVERS_DIR / "prompt_server.py")
    server.initialize()
    read = server.request("resources/read", {"uri": "files://greeting"})
    assert read["result"]["contents"] == [
        {"mimeType": "text/plain", "text": "hello", "uri": "files://greeting"}
    ]
    server.close_stdin()
    assert server.wait(10) == 0
    for line in server.stdout_lines:
        json.loads(line)
    assert "[greeting #2] reading the greeting" in server.stderr_text()
