"""The ``mcpline`` command: ``demo``, ``serve`` (with ``--allow``) and ``call``."""

import json
import subprocess
import sys

import pytest
from conftest import BASIC_SERVER, host_environ, run_cli

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


def test_demo_list_files_returns_at_most_limit_entries(demo):
    entries = demo.call("list_files", {"limit": 2})["structuredContent"]["result"]
    assert [e["path"] for e in entries] == ["a.txt", "b.md"]


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


@pytest.fixture
def linked(spawn, folder):
    """The demo over a folder holding links out of it: to a file and to a folder."""
    outside = folder.parent
    (outside / "secrets").mkdir()
    (outside / "secrets" / "key.txt").write_text("TOP-SECRET key\n", encoding="utf-8")
    (folder / "sub" / "passwd").symlink_to(outside / "secret.txt")
    (folder / "escape").symlink_to(outside / "secrets", target_is_directory=True)
    (folder / "inner").symlink_to(folder / "a.txt")  # a link that stays inside
    server = spawn("-m", "mcpline", "demo", folder)
    server.initialize()
    return server


needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")


@needs_symlinks
@pytest.mark.parametrize("path", ["sub/passwd", "escape/key.txt", "escape"])
def test_demo_refuses_links_out_of_the_folder_without_saying_anything_about_them(linked, path):
    for tool in ("read_text", "count_words"):
        result = linked.call(tool, {"path": path})
        assert result["isError"] is True
        assert result["content"][0]["text"] == f"{path!r} is outside the served folder"
    listing = linked.call("list_files", {"path": path})
    assert listing["isError"] is True
    assert "TOP-SECRET" not in json.dumps(listing)


@needs_symlinks
def test_demo_lists_links_out_of_the_folder_without_their_size(linked):
    entries = linked.call("list_files")["structuredContent"]["result"]
    kinds = {e["path"]: (e["kind"], e["size"]) for e in entries}
    assert kinds["escape"] == ("link", 0)
    assert kinds["inner"] == ("file", len("one two three\nfour\n"))
    sub = linked.call("list_files", {"path": "sub"})["structuredContent"]["result"]
    assert {e["path"]: (e["kind"], e["size"]) for e in sub}["sub/passwd"] == ("link", 0)


@needs_symlinks
def test_demo_search_never_follows_a_link_out_of_the_folder(linked):
    result = linked.call("search", {"text": "TOP-SECRET"})
    assert result["structuredContent"] == {"result": []}
    inside = linked.call("search", {"text": "deep"})["structuredContent"]["result"]
    assert inside == [{"path": "sub/c.txt", "line": 1, "text": "deep text"}]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("a.txt\u0000x", "a path cannot contain a NUL character"),
        ("x" * 300, "the path is too long"),
        ("/".join(["d"] * 2100), "the path is too long"),
    ],
)
def test_demo_refuses_nul_bytes_and_very_long_names(demo, path, message):
    result = demo.call("read_text", {"path": path})
    assert result["isError"] is True
    assert result["content"][0]["text"] == message


def test_demo_search_skips_binary_files(spawn, folder):
    (folder / "blob.bin").write_bytes(b"\x00\x01 deep text \x00")
    server = spawn("-m", "mcpline", "demo", folder)
    server.initialize()
    found = server.call("search", {"text": "deep"})["structuredContent"]["result"]
    assert [m["path"] for m in found] == ["sub/c.txt"]


def test_demo_of_a_missing_folder_is_one_line_and_exit_2(tmp_path):
    result = run_cli("demo", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr == f"mcpline: {tmp_path / 'nowhere'} is not a folder\n"


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


# ----- serve: loading the target -----


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nope.py", "nope.py: no such file"),
        ("no_such_package.mod", "no module named 'no_such_package.mod'"),
        ("tests/servers/broken_server.py", "defines no mcpline.Server"),
    ],
)
def test_a_target_that_cannot_be_loaded_is_one_line_and_exit_2(target, message):
    result = run_cli("serve", target)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_an_import_error_in_the_target_is_explained_and_debug_shows_the_traceback(tmp_path):
    bad = tmp_path / "bad_server.py"
    bad.write_text("import no_such_module_here\n", encoding="utf-8")
    result = run_cli("serve", str(bad))
    assert result.returncode == 2
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in result.stderr
    assert "Traceback" not in result.stderr
    debug = run_cli("--debug", "serve", str(bad))
    assert "Traceback" in debug.stderr


def test_a_syntax_error_in_the_target_names_the_line(tmp_path):
    bad = tmp_path / "syntax_server.py"
    bad.write_text("x = 1\ndef (\n", encoding="utf-8")
    result = run_cli("serve", str(bad))
    assert result.returncode == 2
    assert f"{bad}, line 2: syntax error" in result.stderr


def test_a_target_with_two_servers_asks_to_name_one(tmp_path):
    two = tmp_path / "two.py"
    two.write_text(
        "from mcpline import Server\na = Server('a')\nb = Server('b')\n", encoding="utf-8"
    )
    result = run_cli("serve", str(two))
    assert result.returncode == 2
    assert f"name one: {two}:a, {two}:b" in result.stderr


def test_a_module_target_is_found_in_the_current_folder(tmp_path):
    (tmp_path / "local_tools.py").write_text(
        "from mcpline import Server\nserver = Server('local')\n"
        "@server.tool\ndef hi() -> str:\n    return 'hi'\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "mcpline", "call", "local_tools", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=host_environ(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"


def test_what_the_target_prints_while_imported_goes_to_stderr(spawn, tmp_path):
    chatty = tmp_path / "chatty_server.py"
    chatty.write_text(
        "import os\nprint('IMPORT-BANNER')\nos.write(1, b'FD-BANNER\\n')\n"
        "from mcpline import Server\nserver = Server('chatty')\n",
        encoding="utf-8",
    )
    server = spawn("-m", "mcpline", "serve", chatty)
    assert server.initialize()["serverInfo"]["name"] == "chatty"
    server.close_stdin()
    assert server.wait(10) == 0
    assert "IMPORT-BANNER" in server.stderr_text()
    assert "FD-BANNER" in server.stderr_text()
    assert all(b"BANNER" not in line for line in server.stdout_lines)


# ----- call -----


def test_call_prints_structured_content_as_json_and_exits_0():
    result = run_cli("call", str(BASIC_SERVER), "add", '{"a":1,"b":2}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": 3}


def test_call_with_json_prints_the_raw_result():
    result = run_cli("call", str(BASIC_SERVER), "add", "a=1", "b=2", "--json")
    printed = json.loads(result.stdout)
    assert printed["structuredContent"] == {"result": 3}
    assert printed["content"] == [{"type": "text", "text": "3"}]


def test_call_with_a_text_tool_prints_its_text():
    result = run_cli("call", str(BASIC_SERVER), "echo", '{"text":"hello"}')
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"


def test_call_of_a_failing_tool_prints_the_error_and_exits_1():
    result = run_cli("call", str(BASIC_SERVER), "fail", '{"message":"broken"}')
    assert result.returncode == 1
    assert result.stdout == "broken\n"
    assert "the tool reported an error" in result.stderr


def test_call_of_an_unknown_tool_exits_2_with_a_message():
    result = run_cli("call", str(BASIC_SERVER), "nope", "{}")
    assert result.returncode == 2
    assert "nope" in result.stderr


def test_call_with_arguments_that_are_neither_json_nor_key_value_exits_2():
    result = run_cli("call", str(BASIC_SERVER), "add", "{a:1}")
    assert result.returncode == 2
    assert "not a JSON object" in result.stderr
    result = run_cli("call", str(BASIC_SERVER), "add", "a")
    assert result.returncode == 2
    assert "key=value" in result.stderr


def test_call_output_stays_clean_when_the_tool_prints():
    result = run_cli("call", str(BASIC_SERVER), "printer", "--json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["content"][0] == {"type": "text", "text": "ok"}
    assert "PRINTED-TO-STDOUT" in result.stderr
