"""``mcpline tools``, ``call --cmd``, ``doctor``, ``config`` and ``--version``: through a real
subprocess, against mcpline servers and against a hand-written one with deliberate faults."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys

import pytest
from conftest import BASIC_SERVER, SERVERS_DIR, run_cli

BROKEN = SERVERS_DIR / "broken_server.py"
CONTRACT = SERVERS_DIR / "contract_server.py"


def command(*argv: object) -> str:
    return shlex.join([sys.executable, *map(str, argv)])


def test_version_names_the_package():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("mcpline ")


@pytest.mark.parametrize("sub", ["serve", "call", "tools", "doctor", "config", "demo"])
def test_every_subcommand_has_help(sub):
    result = run_cli(sub, "--help")
    assert result.returncode == 0
    assert "usage: mcpline " + sub in result.stdout


# ----- tools -----


def test_tools_lists_parameters_types_defaults_and_descriptions():
    result = run_cli("tools", str(CONTRACT))
    assert result.returncode == 0, result.stderr
    assert "find - The number of a known name, or None." in result.stdout
    assert "    name: string (required)" in result.stdout
    assert "    seconds: number = 30" in result.stdout
    assert "    day: string (date) (required)" in result.stdout


def test_tools_json_prints_the_raw_list():
    result = run_cli("tools", str(BASIC_SERVER), "--json")
    names = [t["name"] for t in json.loads(result.stdout)["tools"]]
    assert "add" in names and "echo" in names


def test_tools_of_any_stdio_server_through_cmd():
    result = run_cli("tools", "--cmd", command(BROKEN))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("echo - Echo.")


# ----- call -----


def test_call_over_stdio_with_key_value_arguments():
    result = run_cli("call", "--cmd", command(BASIC_SERVER), "add", "a=2", "b=40")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": 42}


def test_call_takes_strings_for_values_that_are_not_json():
    result = run_cli("call", str(BASIC_SERVER), "echo", "text=hello world")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello world\n"


def test_call_of_a_failing_tool_over_stdio_exits_1():
    result = run_cli("call", "--cmd", command(BASIC_SERVER), "fail", "message=broken")
    assert result.returncode == 1
    assert result.stdout == "broken\n"
    assert "isError" in result.stderr


# ----- doctor -----


def test_doctor_passes_an_mcpline_server():
    result = run_cli("doctor", "--", sys.executable, str(BASIC_SERVER))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    for check in ("initialize", "malformed line", "unknown method", "ping", "tools/list"):
        assert f"PASS  {check}" in result.stdout
    assert "PASS  server/discover" in result.stdout
    assert "PASS  exit after end of input" in result.stdout
    assert "PASS  stdout carries only JSON-RPC" in result.stdout


def test_doctor_passes_a_correct_hand_written_server():
    result = run_cli("doctor", "--", sys.executable, str(BROKEN))
    assert result.returncode == 0, result.stdout
    assert "SKIP  server/discover" in result.stdout


@pytest.mark.parametrize(
    ("flag", "failed_check"),
    [
        ("--banner", "stdout carries only JSON-RPC"),
        ("--ignore-malformed", "malformed line"),
        ("--linger", "exit after end of input"),
    ],
)
def test_doctor_flags_a_broken_server(flag, failed_check):
    result = run_cli("doctor", "--", sys.executable, str(BROKEN), flag)
    assert result.returncode == 1, result.stdout
    assert f"FAIL  {failed_check}" in result.stdout


def test_doctor_without_a_command_is_a_usage_error():
    result = run_cli("doctor")
    assert result.returncode == 2
    assert "doctor -- CMD" in result.stderr


# ----- config -----


@pytest.mark.parametrize(
    ("host", "key"), [("claude", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers")]
)
def test_config_prints_a_host_entry_that_serves_the_target(host, key):
    result = run_cli("config", host, str(BASIC_SERVER))
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)[key]["basic"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "mcpline", "serve", str(BASIC_SERVER.resolve())]
    assert result.stderr.strip()  # where the host's file lives


def test_a_generic_config_starts_a_server_that_answers():
    entry = json.loads(run_cli("config", "generic", str(BASIC_SERVER)).stdout)
    result = run_cli("doctor", "--", entry["command"], *entry["args"])
    assert result.returncode == 0, result.stdout


# ----- MCPLINE_TRACE -----


def test_a_trace_file_gets_every_frame_in_and_out_with_time_and_direction(spawn, tmp_path):
    trace = tmp_path / "wire.log"
    server = spawn(BASIC_SERVER, env={**os.environ, "MCPLINE_TRACE": str(trace)})
    server.initialize()
    assert server.call("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    server.send_bytes(b"not json\n")
    server.recv()
    server.close_stdin()
    assert server.wait(10) == 0
    lines = trace.read_text(encoding="utf-8").splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
    assert all(re.match(stamp + r" (<-|->) ", line) for line in lines), lines
    ins = [line.split(" ", 2)[2] for line in lines if " <- " in line]
    outs = [json.loads(line.split(" ", 2)[2]) for line in lines if " -> " in line]
    assert json.loads(ins[0])["method"] == "initialize"
    assert json.loads(ins[2])["params"]["name"] == "add"
    assert ins[3] == "not json"
    assert outs[0]["result"]["serverInfo"]["name"] == "basic"
    assert outs[1]["result"]["structuredContent"] == {"result": 3}
    assert outs[2]["error"]["code"] == -32700
    # The protocol stream carries no trace.
    assert all(b"<-" not in line for line in server.stdout_lines)


def test_a_trace_file_that_cannot_be_opened_is_reported_and_serving_goes_on(spawn, tmp_path):
    bad = tmp_path / "no-such-dir" / "wire.log"
    server = spawn(BASIC_SERVER, env={**os.environ, "MCPLINE_TRACE": str(bad)})
    assert server.initialize()["serverInfo"]["name"] == "basic"
    server.close_stdin()
    assert server.wait(10) == 0
    assert "cannot open the trace file" in server.stderr_text()


def test_config_of_the_demo_serves_the_folder(tmp_path):
    result = run_cli("config", "generic", "--demo", str(tmp_path))
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)
    assert entry["args"] == ["-m", "mcpline", "demo", str(tmp_path.resolve())]
    checked = run_cli("doctor", "--", entry["command"], *entry["args"])
    assert checked.returncode == 0, checked.stdout
