"""``mcpline._streams``: the interpreter's streams are swapped for UTF-8 streams over fds 1 and 2
while mcpline owns the descriptors, and put back afterwards.

The swap is used on Windows only (console writers and ANSI code pages); the mechanism itself is
platform-independent and tested here on every platform, with a stream in a legacy code page
standing in for the interpreter's own.
"""

import io
import sys

import pytest
from mcpline import _streams


@pytest.fixture
def install_legacy_stdout(monkeypatch):
    """Makes a cp1252 stream on fd 1 ``sys.stdout``, with swapping on as on Windows. Called from
    the test body: pytest puts its own capture stream back after the fixtures have run."""
    stream = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="cp1252")
    monkeypatch.setattr(_streams, "SWAPS", True)

    def install():
        monkeypatch.setattr(sys, "stdout", stream)
        return stream

    yield install
    stream.detach()  # fd 1 belongs to pytest


def test_a_legacy_stream_is_swapped_for_utf8_and_put_back(install_legacy_stdout):
    legacy_stdout = install_legacy_stdout()
    _streams.hold()
    try:
        follower = sys.stdout
        assert follower is not legacy_stdout
        assert follower.encoding == "utf-8"
        assert follower.fileno() == 1
        assert follower.line_buffering
    finally:
        _streams.release()
    assert sys.stdout is legacy_stdout


def test_holds_nest_and_only_the_last_release_puts_it_back(install_legacy_stdout):
    legacy_stdout = install_legacy_stdout()
    _streams.hold()
    follower = sys.stdout
    _streams.hold()
    assert sys.stdout is follower, "a nested hold keeps the same follower"
    _streams.release()
    assert sys.stdout is follower, "still held once"
    _streams.release()
    assert sys.stdout is legacy_stdout


def test_a_stream_replaced_meanwhile_is_left_in_place(install_legacy_stdout):
    install_legacy_stdout()
    _streams.hold()
    mine = io.StringIO()
    sys.stdout = mine
    _streams.release()
    assert sys.stdout is mine


def test_streams_that_are_not_on_fd_1_or_2_are_left_alone(monkeypatch):
    mine = io.StringIO()
    monkeypatch.setattr(sys, "stdout", mine)
    _streams.hold()
    try:
        assert sys.stdout is mine
    finally:
        _streams.release()


@pytest.fixture
def install_block_buffered_stdout(monkeypatch):
    """Makes a block-buffered UTF-8 stream on fd 1 ``sys.stdout`` (what a host's pipe gives),
    with swapping off as elsewhere than Windows."""
    stream = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    monkeypatch.setattr(_streams, "SWAPS", False)

    def install():
        monkeypatch.setattr(sys, "stdout", stream)
        return stream

    yield install
    stream.detach()


def test_a_block_buffered_stream_is_line_buffered_while_held_and_put_back(
    install_block_buffered_stdout,
):
    stdout = install_block_buffered_stdout()
    assert not stdout.line_buffering
    _streams.hold()
    try:
        assert sys.stdout is stdout, "not swapped, only line-buffered"
        assert stdout.line_buffering
    finally:
        _streams.release()
    assert not stdout.line_buffering


def test_a_write_through_stream_is_line_buffered_while_held_and_put_back(monkeypatch):
    # What PYTHONUNBUFFERED gives: an unbuffered descriptor under a write-through text stream.
    stream = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True, write_through=True
    )
    monkeypatch.setattr(_streams, "SWAPS", False)
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        _streams.hold()
        try:
            assert sys.stdout is stream, "not swapped, only line-buffered"
            assert (stream.line_buffering, stream.write_through) == (True, False)
        finally:
            _streams.release()
        assert (stream.line_buffering, stream.write_through) == (True, True)
    finally:
        monkeypatch.undo()
        stream.detach()
