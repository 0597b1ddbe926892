"""An error result shows the tool's own frames only, with short file names; the server's
stderr keeps the full traceback."""

from __future__ import annotations

import pytest
from conftest import SERVERS_DIR

CONTRACT = SERVERS_DIR / "contract_server.py"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("raises_after_conversion", {"day": "2026-12-03"}, "ValueError: no 2026-12-03"),
        ("raises_in_a_task", {}, "ValueError: no task"),
    ],
)
def test_an_error_result_shows_the_tools_frames_with_short_paths(spawn, tool, arguments, message):
    server = spawn(CONTRACT)
    server.initialize()
    result = server.call(tool, arguments)
    assert result["isError"] is True
    attached = "\n".join(b["text"] for b in result["content"][1:])
    assert "Traceback (most recent call last):" in attached
    assert f"in {tool}" in attached and "in _fail" in attached
    assert message in attached
    # Neither mcpline's nor asyncio's frames, and no absolute path to the server's file.
    assert "mcpline" not in attached.replace("contract", "")
    assert "asyncio" not in attached
    assert str(CONTRACT) not in attached
    assert 'File "' + CONTRACT.name in attached or "servers/contract_server.py" in attached
    server.close_stdin()
    server.wait()
    log = server.stderr_text()
    # The full traceback (absolute path included) is on the server's stderr.
    assert "the full traceback" in log
    assert str(CONTRACT) in log
    if tool == "raises_after_conversion":
        assert "_convert.py" in log  # the frame the result leaves out
