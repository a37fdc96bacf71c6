#!/usr/bin/env python3
"""Says what makes a lock file out of date: the check cluster-up (scripts/build-locust-image.sh) runs
before every Locust image build, on users' Macs too, so the standard library only (Python 3.9+).

Usage: scripts/libexec/lock_check.py LOCK PINS...
PINS are requirements files (their `name==version` lines) or other locks (all their packages): each pin
must be in LOCK with the same version. And every package in LOCK is pinned with == and at least one
hash, appears once, and is top-level ("via -r") only when a requirements file among PINS names it.
Prints one line per problem ("LOCK-NAME: what") and exits 1, or prints nothing and exits 0.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^]]*\])?==([^ =]+)$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def pin(line: str) -> tuple[str, str] | None:
    """(name, version) of "name[extra]==version ; marker \\", or None when it is not a == pin."""
    line = re.sub(r"[ \t]*;.*", "", re.sub(r"[ \t]*\\$", "", line.rstrip("\n")))
    match = PIN.match(line)
    return (norm(match.group(1)), match.group(3)) if match else None


def problems(lock: Path, pins: list[Path]) -> list[str]:
    found: list[str] = []
    locked: dict[str, str] = {}
    hashes: dict[str, int] = {}
    toplevel: set[str] = set()
    current = None
    for line in lock.read_text().splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            entry = pin(line)
            if entry is None:
                found.append(f'"{line}" is not pinned with ==')
                current = None
                continue
            current, version = entry
            if current in locked:
                found.append(f"{current} appears twice ({locked[current]}, {version}): one version per package")
            locked[current] = version
            hashes.setdefault(current, 0)
        elif current and re.match(r"[ \t]+--hash=", line):
            hashes[current] += 1
        elif current and re.match(r"[ \t]*#( via)?[ \t]+-r ", line):
            toplevel.add(current)
    wanted: dict[str, tuple[str, str]] = {}
    direct: set[str] = set()
    for source in pins:
        requirements = source.suffix == ".txt"
        for line in source.read_text().splitlines():
            if re.match(r"[ \t]*(#|-|$)", line):
                continue
            entry = pin(line)
            if entry is None:
                if requirements:
                    found.append(f'{source.name}: "{line}" is not pinned with ==')
                continue
            wanted.setdefault(entry[0], (entry[1], source.name))
            if requirements:
                direct.add(entry[0])
    for name, (version, source) in wanted.items():
        if name not in locked:
            found.append(f"{name}=={version} ({source}) is not in it")
        elif locked[name] != version:
            found.append(f"has {name}=={locked[name]}, {source} has {version}")
    for name, version in locked.items():
        if hashes[name] == 0:
            found.append(f"{name}=={version} has no hash")
        if name in toplevel and name not in direct:
            found.append(f"{name} is top-level in it, but no requirements file names it")
    return [f"{lock.name}: {text}" for text in found]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = problems(Path(argv[0]), [Path(p) for p in argv[1:]])
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
