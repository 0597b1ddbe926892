"""Importing mcpline stays cheap: heavy modules load only when they are used."""

import subprocess
import sys

import pytest

HEAVY = ("mcpline._core", "asyncio", "json", "pydantic")


def loaded_after(statement: str, watched: tuple[str, ...]) -> list[str]:
    """The modules of ``watched`` present in ``sys.modules`` after ``statement``, in a fresh
    interpreter (checked with nothing but ``sys`` so that the check itself imports nothing)."""
    code = (
        "import sys\n"
        f"before = [m for m in {watched!r} if m in sys.modules]\n"
        f"{statement}\n"
        f"after = [m for m in {watched!r} if m in sys.modules and m not in before]\n"
        "print(','.join(after))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return [m for m in result.stdout.strip().split(",") if m]


@pytest.mark.parametrize("module", HEAVY)
def test_import_mcpline_does_not_import(module):
    assert module not in loaded_after("import mcpline", (module,))


@pytest.mark.parametrize("module", ["asyncio", "pydantic"])
def test_from_mcpline_import_server_does_not_import(module):
    assert module not in loaded_after("from mcpline import Server", (module,))


def test_defining_a_server_with_sync_tools_does_not_import_asyncio_or_pydantic():
    statement = (
        "from mcpline import Server\n"
        "s = Server('x')\n"
        "@s.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
    )
    assert loaded_after(statement, ("asyncio", "pydantic")) == []


def test_the_public_names_still_resolve_lazily():
    statement = (
        "import mcpline\n"
        "assert mcpline.Server.__name__ == 'Server'\n"
        "assert issubclass(mcpline.ToolError, mcpline.McplineError)\n"
        "assert mcpline.Context.__name__ == 'Context'"
    )
    assert loaded_after(statement, ("mcpline._core",)) == ["mcpline._core"]


def test_defining_a_server_with_plain_tools_imports_no_heavy_standard_module():
    # Each of these costs milliseconds of start-up; a tool with JSON-typed parameters and a
    # one-line docstring needs none of them (the host waits for the initialize answer).
    statement = (
        "from mcpline import Server\n"
        "s = Server('x')\n"
        "@s.tool\n"
        "def add(a: int, b: float = 1.5, *, note: str | None = None) -> int:\n"
        "    '''Add two numbers.'''\n"
        "    return a + int(b)\n"
        "@s.tool(name='tags')\n"
        "def tags(items: list[str], counts: dict[str, int]) -> list[str]:\n"
        "    return items\n"
    )
    heavy = (
        "typing", "inspect", "dataclasses", "re", "enum", "collections", "signal", "types",
        "math",
    )  # fmt: skip
    assert loaded_after(statement, heavy) == []


def test_serving_imports_no_heavy_standard_module():
    # What run() needs on the way to the first answer (signals, the streams it holds) is
    # paid by every start-up too.
    heavy = (
        "typing", "inspect", "dataclasses", "re", "enum", "collections", "threading", "json",
        "asyncio", "types", "math",
    )  # fmt: skip
    code = (
        "import sys\n"
        f"before = [m for m in {heavy!r} if m in sys.modules]\n"
        "from mcpline import Server\n"
        "s = Server('x')\n"
        "@s.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    '''Add two numbers.'''\n"
        "    return a + b\n"
        "s.run()\n"
        f"after = [m for m in {heavy!r} if m in sys.modules and m not in before]\n"
        "sys.stderr.write('LOADED:' + ','.join(after) + '\\n')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], input=b"", capture_output=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    line = [x for x in result.stderr.decode().splitlines() if x.startswith("LOADED:")]
    assert line == ["LOADED:"], result.stderr.decode()
