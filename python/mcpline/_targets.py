"""Finding the ``Server`` a command names: ``FILE.py[:attr]`` or ``package.module[:attr]``.

The current folder is on the import path (as with ``python -m``). Whatever the target writes
to stdout while it is imported (``print``, C code, a child process) goes to stderr, never to
stdout (which may be the protocol stream). A
target that cannot be loaded raises ``TargetError`` with one line that says why.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from mcpline._server import Server

__all__ = ["TargetError", "load_server"]


class TargetError(Exception):
    """The target cannot be loaded (the message is one line for the user)."""


def load_server(target: str) -> Server:
    """Imports the target and returns its ``Server``."""
    location, _, attr = target.partition(":")
    if not location:
        raise TargetError(f"{target!r}: name a file (server.py) or a module (package.module)")
    with _stdout_to_stderr():
        module = _import(location)
    if attr:
        server = getattr(module, attr, None)
        if server is None:
            raise TargetError(f"{location} has no attribute {attr!r}")
        if not isinstance(server, Server):
            raise TargetError(f"{target} is a {type(server).__name__}, not an mcpline.Server")
        return server
    found = {name: v for name, v in vars(module).items() if isinstance(v, Server)}
    if not found:
        raise TargetError(
            f"{location} defines no mcpline.Server; create one (server = Server('name')) or "
            f"name it: {location}:NAME"
        )
    if len(found) > 1:
        names = ", ".join(f"{location}:{name}" for name in sorted(found))
        raise TargetError(f"{location} defines several servers; name one: {names}")
    return next(iter(found.values()))


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While the target is imported, what it writes to stdout (Python's ``print`` and fd 1,
    from C code or a child process) goes to stderr."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all
        saved = None
    if saved is not None:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _import(location: str) -> ModuleType:
    if location.endswith(".py") or os.sep in location or "/" in location:
        return _import_file(Path(location))
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as e:
        if e.name is not None and location.startswith(e.name):
            raise TargetError(
                f"no module named {location!r} (searched the current folder and the "
                "installed packages; for a file give its path, e.g. server.py)"
            ) from e
        raise TargetError(f"importing {location} failed: {_describe(e)}") from e
    except SyntaxError as e:
        raise TargetError(f"{_where(e)}: syntax error: {e.msg}") from e
    except BaseException as e:  # anything the module raised while it was imported
        raise TargetError(f"importing {location} failed: {_describe(e)}") from e


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise TargetError(f"{path}: no such file")
    path = path.resolve()
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise TargetError(f"{_where(e)}: syntax error: {e.msg}") from e
    except BaseException as e:
        raise TargetError(f"importing {path.name} failed: {_describe(e)}") from e
    return module


def _where(e: SyntaxError) -> str:
    return f"{e.filename}, line {e.lineno}" if e.lineno else str(e.filename)


def _describe(e: BaseException) -> str:
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
