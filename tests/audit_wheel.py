"""Checks a Linux wheel's tags against what ``auditwheel show`` verifies, and fails if they differ.

    python tests/audit_wheel.py [--auditwheel PATH] [--expect TAG] WHEEL

Fails (exit 1) unless all of these hold:

- ``auditwheel show --json WHEEL`` (auditwheel >= 6.8) exits 0 and names the platform tag the
  wheel's ELF files are consistent with (``overall_tag``);
- the file name's python/abi tags are ``cp310-abi3`` (one wheel for every CPython >= 3.10), the
  WHEEL metadata's ``Tag:`` lines are exactly the file name's tags, and the one extension in
  the wheel is ``mcpline/_core.abi3.so`` (the stable-ABI file name CPython looks for);
- every platform tag in the file name is manylinux or musllinux for the architecture auditwheel
  read from the ELF files (no plain ``linux_*``), of the same libc family as auditwheel's tag,
  and no older than it: the wheel claims no more compatibility than auditwheel verified;
- with ``--expect TAG`` (e.g. ``manylinux_2_17_x86_64``), TAG is one of the file name's tags
  and auditwheel's tag is TAG or older (the release matrix pins the policy it builds for).

Not collected by pytest; `make wheel` and the Wheels workflow run it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ABI = "cp310-abi3"
# The legacy manylinux aliases (PEP 600) and the glibc versions they stand for.
LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
POLICY = re.compile(r"^(manylinux|musllinux)_(\d+)_(\d+)_(\w+)$")
LEGACY_POLICY = re.compile(r"^(manylinux1|manylinux2010|manylinux2014)_(\w+)$")


def parse_platform(tag: str) -> tuple[str, tuple[int, int], str] | None:
    """``manylinux_2_17_x86_64`` -> ("manylinux", (2, 17), "x86_64"); None if not a policy."""
    if m := POLICY.match(tag):
        return m[1], (int(m[2]), int(m[3])), m[4]
    if m := LEGACY_POLICY.match(tag):
        return "manylinux", LEGACY[m[1]], m[2]
    return None


def check(wheel: Path, auditwheel: str, expect: str | None) -> list[str]:
    problems: list[str] = []
    show = subprocess.run(
        [auditwheel, "show", "--json", str(wheel)], capture_output=True, text=True
    )
    if show.returncode != 0:
        return [f"auditwheel show exited {show.returncode}: {show.stdout}{show.stderr}".strip()]
    try:
        report = json.loads(show.stdout)
        overall = report["overall_tag"]
    except (ValueError, KeyError):
        return [f"auditwheel show --json named no platform tag (overall_tag): {show.stdout}"]
    print(
        f"auditwheel: {wheel.name} is consistent with {overall}; external libraries: "
        f"{report.get('external_libs') or 'none'}; versioned symbols: "
        f"{json.dumps(report.get('versioned_symbols'), separators=(',', ':'))}"
    )
    verified = parse_platform(overall)
    if verified is None:
        return [f"auditwheel found no manylinux/musllinux policy for it: {overall}"]

    # name-version-python-abi-platform.whl (no build tag: maturin writes none)
    parts = wheel.name[: -len(".whl")].split("-")
    if len(parts) != 5:
        return [f"unexpected wheel file name {wheel.name}"]
    python_abi = f"{parts[2]}-{parts[3]}"
    if python_abi != ABI:
        problems.append(f"python/abi tags are {python_abi}, expected {ABI}")
    platforms = parts[4].split(".")
    for platform in platforms:
        claimed = parse_platform(platform)
        if claimed is None:
            problems.append(f"platform tag {platform} is not a manylinux/musllinux tag")
        elif claimed[0] != verified[0] or claimed[2] != verified[2]:
            problems.append(f"platform tag {platform} does not match auditwheel's {overall}")
        elif claimed[1] < verified[1]:
            problems.append(f"platform tag {platform} claims more than auditwheel's {overall}")
    if expect is not None:
        expected = parse_platform(expect)
        if expect not in platforms:
            problems.append(f"expected platform tag {expect}, the file name has {platforms}")
        elif expected is not None and verified[1] > expected[1]:
            problems.append(f"auditwheel verified only {overall}, expected {expect}")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        name = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        metadata = archive.read(name).decode()
    extensions = sorted(n for n in names if n.endswith(".so"))
    if extensions != ["mcpline/_core.abi3.so"]:
        problems.append(f"extensions in the wheel: {extensions}, expected mcpline/_core.abi3.so")
    tags = sorted(
        line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Tag:")
    )
    expected_tags = sorted(f"{python_abi}-{platform}" for platform in platforms)
    if tags != expected_tags:
        problems.append(f"WHEEL metadata tags {tags} differ from the file name's {expected_tags}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--auditwheel", default="auditwheel", help="the auditwheel command")
    parser.add_argument("--expect", help="a platform tag the wheel must carry")
    parser.add_argument("wheel", type=Path)
    args = parser.parse_args()
    problems = check(args.wheel, args.auditwheel, args.expect)
    for problem in problems:
        print(f"error: {args.wheel.name}: {problem}", file=sys.stderr)
    if not problems:
        print(f"ok: {args.wheel.name} is {ABI}, and auditwheel verified its platform tag")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
