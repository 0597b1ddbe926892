"""Checks that a Windows wheel's extension links the C runtime dynamically (the UCRT).

    python tests/check_windows_crt.py WHEEL          (needs pefile: pip install pefile)

A ``+crt-static`` build carries a private copy of the C runtime inside the extension: its own
heap, its own table of C file descriptors and its own stdio.  The extension is meant to share
CPython's runtime, as CPython's own extensions do: the Universal CRT (``ucrtbase.dll``, through
the ``api-ms-win-crt-*`` API sets) and ``VCRUNTIME140.dll`` (the capture cell's descriptor calls
go to ``ucrtbase.dll`` in any case; see rust/mcpline-core/src/sys/windows.rs).  Fails (exit 1)
unless ``mcpline/_core.pyd`` imports both, and, as an abi3 extension, ``python3.dll`` and no
versioned ``python3XY.dll``, and the wheel is tagged ``cp310-abi3-win_amd64``.
Not collected by pytest; the Wheels workflow runs it on the Windows wheel.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pefile  # type: ignore[import-untyped]

EXTENSION = "mcpline/_core.pyd"
TAG = "cp310-abi3-win_amd64"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} WHEEL", file=sys.stderr)
        return 2
    wheel = Path(argv[1])
    problems: list[str] = []
    if not wheel.name.endswith(f"-{TAG}.whl"):
        problems.append(f"expected a {TAG} wheel")
    with zipfile.ZipFile(wheel) as archive:
        image = archive.read(EXTENSION)
    pe = pefile.PE(data=image, fast_load=True)
    pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"]])
    imports = sorted(entry.dll.decode("ascii").lower() for entry in pe.DIRECTORY_ENTRY_IMPORT)
    print(f"{EXTENSION} imports: {', '.join(imports)}")
    if not any(name.startswith("api-ms-win-crt-") for name in imports):
        problems.append("no api-ms-win-crt-* import: the UCRT is not linked dynamically")
    if "vcruntime140.dll" not in imports:
        problems.append("no VCRUNTIME140.dll import: the VC runtime is linked statically")
    # abi3 on Windows: the stable-ABI python3.dll, never a versioned python3XY.dll.
    pythons = [name for name in imports if name.startswith("python")]
    if pythons != ["python3.dll"]:
        problems.append(f"Python DLL imports {pythons}, expected only python3.dll (abi3)")
    for problem in problems:
        print(f"error: {wheel.name}: {problem}", file=sys.stderr)
    if not problems:
        print(f"ok: {wheel.name} links the UCRT and VCRUNTIME140 dynamically")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
