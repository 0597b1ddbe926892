"""What a call had printed is not lost when the process leaves while it still runs: at the
end-of-input exit, the running call's captured output is copied to the real stderr."""

from conftest import SERVERS_DIR, call_frame, wait_for_event

HANG_SERVER = SERVERS_DIR / "hang_server.py"  # eof_grace 0.5 s


def test_output_of_a_call_still_running_at_the_end_of_input_exit_reaches_stderr(spawn, tmp_path):
    server = spawn(HANG_SERVER)
    server.initialize()
    notes = tmp_path / "notes"
    server.send_bytes(call_frame("stuck", "hang_loudly", {"seconds": 30, "path": str(notes)}))
    wait_for_event(notes, "started")  # the tool has printed and is asleep
    server.close_stdin()
    assert server.wait(10) == 0
    log = server.stderr_text()
    assert "[call still running at exit] about to hang" in log, log
    assert "[call still running at exit] the child was here" in log, log
    assert log.index("still running after end of input") < log.index("about to hang"), log
