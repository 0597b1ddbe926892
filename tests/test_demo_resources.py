"""The demo offers its folder as resources and a ``summarise`` prompt, under the same scoping
rules as its tools: nothing outside the folder is read."""

from __future__ import annotations

import os
import sys

import pytest
from mcpline.demo import build
from mcpline.testing import Client, RpcError


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "served"
    (root / "docs").mkdir(parents=True)
    (root / "readme.md").write_text("Hello world\n")
    (root / "docs" / "guide.txt").write_text("Guide\n")
    (root / "data.bin").write_bytes(b"\0\1\2")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET CONTENT")
    if sys.platform != "win32":
        os.symlink(secret, root / "link.txt")
    return root


def test_the_files_directly_in_the_folder_are_resources_by_file_uri(folder):
    with Client(build(folder)) as client:
        listed = {r["name"]: r for r in client.list_resources()}
        readme = client.read_resource((folder / "readme.md").as_uri())
        data = client.read_resource((folder / "data.bin").as_uri())
    assert sorted(listed) == ["data.bin", "readme.md"]  # not the link out, not subfolders
    assert listed["readme.md"]["mimeType"] == "text/markdown"
    assert listed["readme.md"]["size"] == 12
    assert readme[0]["text"] == "Hello world\n"
    assert data[0] == {
        "mimeType": "application/octet-stream",
        "blob": "AAEC",
        "uri": (folder / "data.bin").as_uri(),
    }


def test_any_file_below_the_folder_is_read_through_the_template(folder):
    with Client(build(folder)) as client:
        assert [t["uriTemplate"] for t in client.list_resource_templates()] == ["folder://{path}"]
        guide = client.read_resource("folder://docs%2Fguide.txt")
    assert guide[0]["text"] == "Guide\n"


@pytest.mark.parametrize(
    "uri",
    ["folder://..%2Fsecret.txt", "folder://%2Fetc%2Fpasswd", "folder://link.txt"],
    ids=["dot-dot", "absolute", "link-out"],
)
def test_nothing_outside_the_folder_is_read(folder, uri):
    with Client(build(folder)) as client, pytest.raises(RpcError) as refused:
        client.read_resource(uri)
    assert "TOP SECRET" not in refused.value.message
    assert "outside the served folder" in refused.value.message or "relative" in (
        refused.value.message
    )


def test_the_summarise_prompt_embeds_the_file_and_its_path_completes(folder):
    with Client(build(folder)) as client:
        prompt = client.get_prompt("summarise", path="docs/guide.txt")
        completed = client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "summarise"},
                "argument": {"name": "path", "value": "d"},
            },
        )["completion"]
        with pytest.raises(RpcError):
            client.get_prompt("summarise", path="../secret.txt")
    first, embedded = prompt["messages"]
    assert first["content"]["text"] == "Summarise the file docs/guide.txt in a few sentences."
    assert embedded["content"]["type"] == "resource"
    assert embedded["content"]["resource"]["text"] == "Guide\n"
    assert completed["values"] == ["data.bin", "docs/guide.txt"]
