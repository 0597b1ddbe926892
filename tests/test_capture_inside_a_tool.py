"""``mcpline.capture()`` inside a tool works in every output mode: the block sees what was
written during it, and the call's own capture (when there is one) keeps it too."""

import pytest
from conftest import SERVERS_DIR

SERVER = SERVERS_DIR / "inner_capture_server.py"


@pytest.mark.parametrize("tool", ["default_mode", "result_mode", "off_mode"])
def test_the_block_sees_exactly_what_was_written_during_it(spawn, tool):
    server = spawn(SERVER)
    server.initialize()
    result = server.call(tool)
    assert result.get("isError") is not True, result
    assert result["content"][0]["text"].splitlines() == ["python inside", "child inside"], result


def test_the_calls_attached_output_keeps_the_blocks_bytes_in_order(spawn):
    server = spawn(SERVER)
    server.initialize()
    result = server.call("result_mode")
    attached = result["content"][1]["text"].splitlines()
    assert attached[-4:] == [
        "before the block",
        "python inside",
        "child inside",
        "after the block",
    ], result


def test_an_uncaptured_tools_block_output_stays_off_the_servers_stderr(spawn):
    server = spawn(SERVER)
    server.initialize()
    server.call("off_mode")
    server.close_stdin()
    assert server.wait(10) == 0
    log = server.stderr_text()
    assert "before the block" in log and "after the block" in log, log
    assert "python inside" not in log and "child inside" not in log, log
