#!/usr/bin/env python3
"""The runner of scripts/test.sh: runs each suite, says whether it passed, how long it took and how many
test cases it ran, and ends with "N passed, N failed" summed over the suites.

Usage: scripts/tests/run_suites.py TEST_SH LOGS [SUITE...]     (scripts/test.sh execs it)
Each suite is `LL_TEST_SUITE=SUITE TEST_SH` with its output in LOGS/test-SUITE.log and its runner's JUnit
XML (bats, pytest, Surefire, helm-unittest) in LOGS/junit/SUITE/ (LIVENESS_LAB_JUNIT), which is what is
counted: test cases, those with a <failure> or <error>, those <skipped>. A suite that exits non-zero
counts one failure at least; one that reports no test, or only skipped ones, fails. A suite's
"summary: " lines (helm-unittest's own totals) are shown under its line. Exits 1 when a suite failed.
"""

import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SUITES = ["lint", "docs", "service", "chart", "cluster", "locust", "e2e", "multinode", "registry"]


def totals(folder: Path) -> tuple:
    """(tests, failed, skipped) of the JUnit reports under FOLDER; ET.ParseError when one is not XML."""
    tests = failed = skipped = 0
    for report in sorted(folder.rglob("*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
    return tests, failed, skipped


def run_suite(test_sh: str, logs: Path, suite: str) -> tuple:
    """Runs SUITE and prints its line; returns (passed, failed, skipped, whether the suite passed)."""
    log, junit = logs / f"test-{suite}.log", logs / "junit" / suite
    shutil.rmtree(junit, ignore_errors=True)
    print(f"{suite:<8} running (log: {log})", flush=True)
    started = time.time()
    with open(log, "w") as out:
        rc = subprocess.call(
            [test_sh], stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "LL_TEST_SUITE": suite, "LIVENESS_LAB_JUNIT": str(junit)}
        )
    took = int(time.time() - started)
    problem = ""
    try:
        tests, failed, skipped = totals(junit)
    except ET.ParseError as error:
        tests, failed, skipped, problem = 0, 1, 0, f"a JUnit report is not XML: {error}"
    passed = tests - failed - skipped
    if rc != 0 and failed == 0:
        failed, problem = 1, "no failing test reported"
    if tests == 0 or tests == skipped:
        failed, problem = max(failed, 1), problem or ("no test reported" if tests == 0 else "every test was skipped")
    counts = f"{tests} tests" + (f", {skipped} skipped" if skipped else "")
    text = log.read_text(errors="replace").splitlines()
    for line in text:
        if line.startswith("summary: "):
            print("  " + line[len("summary: ") :])
    if rc == 0 and not problem:
        print(f"{suite:<8} passed in {took}s ({counts})")
    else:
        print(
            f"{suite:<8} FAILED in {took}s (exit {rc}; {counts}, {failed} failed{'; ' + problem if problem else ''}); last lines of {log}:"
        )
        for line in text[-60:]:
            print("  | " + line)
    return passed, failed, skipped, rc == 0 and not problem


def main(test_sh: str, logs: str, *args: str) -> int:
    suites = []
    for arg in args:
        if arg not in SUITES + ["all"]:
            print(f"error: unknown suite '{arg}'\n  fix: choose from: {' '.join(SUITES)} all (scripts/test.sh --help)", file=sys.stderr)
            return 1
        suites += SUITES if arg == "all" else [arg]
    Path(logs).mkdir(parents=True, exist_ok=True)
    passed = failed = skipped = 0
    failed_suites = []
    for suite in suites or SUITES:
        p, f, s, ok = run_suite(test_sh, Path(logs), suite)
        passed, failed, skipped = passed + p, failed + f, skipped + s
        failed_suites += [] if ok else [suite]
    if failed_suites:
        print("failed suites: " + " ".join(failed_suites))
    print(f"{passed} passed, {failed} failed" + (f" ({skipped} skipped)" if skipped else ""))
    return 1 if failed_suites else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    try:
        sys.exit(main(*sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
