"""The ``mcpline`` command: ``demo``, ``serve`` (with ``--allow``) and ``call``."""

import json
import subprocess
import sys

import pytest
from conftest import BASIC_SERVER, TESTS_DIR

REPO = TESTS_DIR.parent


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpline", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
    )


# ----- demo -----


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    (root / "a.txt").write_text("one two three\nfour\n", encoding="utf-8")
    (root / "b.md").write_text("# title\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text("deep text\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n", encoding="utf-8")
    return root


@pytest.fixture
def demo(spawn, folder):
    server = spawn("-m", "mcpline", "demo", folder)
    server.initialize()
    return server


def test_demo_serves_its_read_only_tools(demo):
    tools = {t["name"]: t for t in demo.request("tools/list")["result"]["tools"]}
    assert {"list_files", "read_text", "count_words"} <= set(tools)
    for name in ("list_files", "read_text", "count_words"):
        assert tools[name]["annotations"]["readOnlyHint"] is True


def test_demo_list_files_lists_the_folder(demo):
    result = demo.call("list_files")
    assert not result.get("isError")
    entries = result["structuredContent"]["result"]
    assert [e["path"] for e in entries] == ["a.txt", "b.md", "sub"]
    kinds = {e["path"]: e["kind"] for e in entries}
    assert kinds == {"a.txt": "file", "b.md": "file", "sub": "dir"}


def test_demo_list_files_filters_by_pattern(demo):
    result = demo.call("list_files", {"pattern": "*.txt"})
    assert [e["path"] for e in result["structuredContent"]["result"]] == ["a.txt"]


def test_demo_read_text_returns_the_file_contents(demo):
    result = demo.call("read_text", {"path": "a.txt"})
    assert result["content"] == [{"type": "text", "text": "one two three\nfour\n"}]


def test_demo_count_words_counts_whitespace_separated_words(demo):
    result = demo.call("count_words", {"path": "sub/c.txt"})
    assert result["structuredContent"] == {"result": 2}
    assert demo.call("count_words", {"path": "a.txt"})["structuredContent"] == {"result": 4}


@pytest.mark.parametrize(
    "escape", ["../x", "../secret.txt", "sub/../../secret.txt", "/etc/hostname"]
)
def test_demo_refuses_paths_outside_the_folder(demo, escape):
    result = demo.call("read_text", {"path": escape})
    assert result["isError"] is True
    assert escape in result["content"][0]["text"]
    assert "TOP-SECRET" not in json.dumps(result)


def test_demo_refuses_to_list_outside_the_folder(demo):
    result = demo.call("list_files", {"path": ".."})
    assert result["isError"] is True


def test_demo_exits_0_at_end_of_input(demo):
    demo.close_stdin()
    assert demo.wait(10) == 0


# ----- serve --allow -----


def test_serve_exposes_every_tool_of_a_file(spawn):
    server = spawn("-m", "mcpline", "serve", BASIC_SERVER)
    server.initialize()
    names = {t["name"] for t in server.request("tools/list")["result"]["tools"]}
    assert {"add", "echo", "fail", "crash", "printer", "slow"} <= names


def test_serve_with_allow_exposes_only_the_allowed_tool(spawn):
    server = spawn("-m", "mcpline", "serve", BASIC_SERVER, "--allow", "add")
    server.initialize()
    tools = server.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["add"]
    assert server.call("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    hidden = server.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert hidden["error"]["code"] == -32601


def test_serve_with_several_allow_options_exposes_each(spawn):
    server = spawn("-m", "mcpline", "serve", BASIC_SERVER, "--allow", "echo", "--allow", "add")
    server.initialize()
    assert [t["name"] for t in server.request("tools/list")["result"]["tools"]] == ["add", "echo"]


def test_serve_with_allow_of_an_unknown_tool_fails_naming_it():
    result = run_cli("serve", str(BASIC_SERVER), "--allow", "nope")
    assert result.returncode != 0
    assert "nope" in result.stderr
    assert result.stdout == ""


def test_serve_accepts_file_colon_attribute(spawn):
    server = spawn("-m", "mcpline", "serve", f"{BASIC_SERVER}:server")
    assert server.initialize()["serverInfo"]["name"] == "basic"


# ----- call -----


def test_call_prints_the_json_result_and_exits_0():
    result = run_cli("call", str(BASIC_SERVER), "add", '{"a":1,"b":2}')
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["structuredContent"] == {"result": 3}
    assert printed["content"] == [{"type": "text", "text": "3"}]


def test_call_with_a_text_tool_prints_its_text():
    result = run_cli("call", str(BASIC_SERVER), "echo", '{"text":"hello"}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["content"] == [{"type": "text", "text": "hello"}]


def test_call_of_a_failing_tool_prints_the_error_result_and_exits_nonzero():
    result = run_cli("call", str(BASIC_SERVER), "fail", '{"message":"broken"}')
    assert result.returncode != 0
    printed = json.loads(result.stdout)
    assert printed["isError"] is True
    assert printed["content"][0]["text"] == "broken"


def test_call_of_an_unknown_tool_exits_nonzero_with_a_message():
    result = run_cli("call", str(BASIC_SERVER), "nope", "{}")
    assert result.returncode != 0
    assert "nope" in result.stderr


def test_call_with_arguments_that_are_not_json_exits_nonzero():
    result = run_cli("call", str(BASIC_SERVER), "add", "{a:1}")
    assert result.returncode != 0
    assert "JSON" in result.stderr


def test_call_output_stays_pure_json_when_the_tool_prints():
    result = run_cli("call", str(BASIC_SERVER), "printer")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["content"][0] == {"type": "text", "text": "ok"}
    assert "PRINTED-TO-STDOUT" in result.stderr
