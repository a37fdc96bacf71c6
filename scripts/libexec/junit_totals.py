#!/usr/bin/env python3
"""The totals of the JUnit XML reports in a folder: what scripts/test.sh counts for each suite.

Usage: scripts/libexec/junit_totals.py DIR
Prints "TESTS FAILED SKIPPED": the test cases of every DIR/**/*.xml (bats, pytest, Surefire,
helm-unittest and scripts/lib/checks.sh write them), those with a <failure> or <error>, and those with a
<skipped>. A folder without reports prints "0 0 0". Exits 1 when a report is not XML.
"""

import pathlib
import sys
import xml.etree.ElementTree as ET


def totals(folder: pathlib.Path) -> tuple[int, int, int]:
    tests = failed = skipped = 0
    for report in sorted(folder.rglob("*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
    return tests, failed, skipped


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(*totals(pathlib.Path(sys.argv[1])))
    except ET.ParseError as error:
        print(f"error: a report in {sys.argv[1]} is not XML: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
