"""Icons on the server, tools, prompts and resources: sent from 2025-11-25, left out before."""

from __future__ import annotations

import mcpline
import pytest
from mcpline.testing import Client

PNG = "data:image/png;base64,iVBORw0KGgo="
ICON = {"src": "https://example.com/tool.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}


def server() -> mcpline.Server:
    server = mcpline.Server("icons", icons=[PNG])

    @server.tool(icons=[ICON])
    def add(a: int, b: int) -> int:
        return a + b

    @server.prompt(icons=ICON)
    def greet() -> str:
        return "hi"

    @server.resource("config://app", icons=[{"src": PNG, "theme": "dark"}])
    def config() -> str:
        return "x"

    @server.resource("logs://{day}", icons=PNG)
    def log(day: str) -> str:
        return day

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_icons_are_sent_from_2025_11_25(revision):
    with Client(server(), protocol_version=revision) as client:
        tool = client.list_tools()[0]
        prompt = client.list_prompts()[0]
        resource = client.list_resources()[0]
        template = client.list_resource_templates()[0]
        if client.initialize_result is not None:
            assert client.initialize_result["serverInfo"]["icons"] == [{"src": PNG}]
    assert tool["icons"] == [ICON]
    assert prompt["icons"] == [ICON]
    assert resource["icons"] == [{"src": PNG, "theme": "dark"}]
    assert template["icons"] == [{"src": PNG}]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18"])
def test_icons_are_left_out_for_older_revisions(revision):
    with Client(server(), protocol_version=revision) as client:
        described = [
            client.initialize_result["serverInfo"],
            client.list_tools()[0],
            client.list_prompts()[0],
            client.list_resources()[0],
            client.list_resource_templates()[0],
        ]
    assert all("icons" not in item for item in described), described


def test_an_icon_without_a_source_is_refused_when_registered():
    with pytest.raises(TypeError, match='a dict with "src"'):
        mcpline.Server("s", icons=[{"mimeType": "image/png"}])
