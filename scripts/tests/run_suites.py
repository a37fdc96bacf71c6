#!/usr/bin/env python3
"""The runner of scripts/test.sh: runs each suite, says whether it passed, how long it took and how many
test cases it ran, and ends with "N passed, N failed" summed over the suites.

Usage: scripts/tests/run_suites.py TEST_SH LOGS [SUITE...]     (scripts/test.sh execs it)
Each suite is `LL_TEST_SUITE=SUITE TEST_SH` with its output in LOGS/test-SUITE.log and its runner's JUnit
XML (bats, pytest, Surefire, helm-unittest) in LOGS/junit/SUITE/ (LIVENESS_LAB_JUNIT), which is what is
counted: test cases, those with a <failure> or <error>, those <skipped>. A suite that exits non-zero
counts one failure at least; one that exits 0 with a failing test, reports no test or only skipped ones
fails. A suite's "summary: " lines (helm-unittest's own totals) are shown under its line. Exits 1 when a
suite failed.

The service suite runs beside the other suites that need no cluster (lint, docs, chart, cluster, locust),
which run one after the other while it does; the cluster suites (e2e, multinode, registry) start once it
has ended. Its tests mostly wait (requests held for seconds, probes timed out): alone it kept 35 % of this
machine's two cores busy on average (vmstat, 2026-11-28). Those suites are told so (LL_SERVICE_BESIDE=1:
the locust suite builds its service jar from a copy of the sources, not in the service/target that
`mvnw verify` is writing). LIVENESS_LAB_TEST_SERIAL=1 runs every suite alone, one after the other.

When e2e or multinode is to run after them, the cluster's images are built beside them too, from the
start (scripts/cluster-up.sh --images-only, log LOGS/test-images.log; the registry suite's cluster-up has a
cache of its own): on a machine without the no-registry path's cache that is Kubernetes' own build and the
other node binaries, about 15 minutes of 2 cores (the e2e's cluster-up took 922 s for it on 2026-11-30, after
every suite without a cluster). It runs at the lowest CPU priority, in a session of its own with its
autogroup niced (LL_BUILD_NICE=19: cluster-up.sh lower_build_priority), so that those suites, whose tests
time probes and loads, keep the CPU first. The first cluster suite waits for it. Measured from an empty
node-image cache (2026-11-30, docs/development.md "CI"): e2e's tests began 3 minutes sooner, while the
suites beside the build took 22.6 minutes instead of 19.7. It is not a suite: it
counts no test, and when it fails the cluster suites' own cluster-up builds (and says) the same.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SUITES = ["lint", "docs", "service", "chart", "cluster", "locust", "e2e", "multinode", "registry"]
BESIDE = "service"
CLUSTER_SUITES = {"e2e", "multinode", "registry"}
IMAGES_FOR = {"e2e", "multinode"}  # the registry suite's cluster-up runs with a cache of its own


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


class Suite:
    """One suite's run: started with its log and JUnit folder, then ended with its line printed."""

    def __init__(self, test_sh: str, logs: Path, name: str, extra_env: dict | None = None, beside: str = ""):
        self.name, self.log, self.junit = name, logs / f"test-{name}.log", logs / "junit" / name
        shutil.rmtree(self.junit, ignore_errors=True)
        print(f"{name:<8} running{' beside ' + beside if beside else ''} (log: {self.log})", flush=True)
        self.started = time.time()
        with open(self.log, "w") as out:
            env = {k: v for k, v in os.environ.items() if k != "LL_SERVICE_BESIDE"}  # this runner's own say only
            env.update(extra_env or {}, LL_TEST_SUITE=name, LIVENESS_LAB_JUNIT=str(self.junit))
            self.proc = subprocess.Popen([test_sh], stdout=out, stderr=subprocess.STDOUT, env=env)

    def end(self) -> tuple:
        """Waits for the suite and prints its line; returns (passed, failed, skipped, whether it passed)."""
        rc = self.proc.wait()
        took = int(time.time() - self.started)
        problem = ""
        try:
            tests, failed, skipped = totals(self.junit)
        except ET.ParseError as error:
            tests, failed, skipped, problem = 0, 1, 0, f"a JUnit report is not XML: {error}"
        passed = tests - failed - skipped
        if rc != 0 and failed == 0:
            failed, problem = 1, "no failing test reported"
        if tests == 0 or tests == skipped:
            failed, problem = max(failed, 1), problem or ("no test reported" if tests == 0 else "every test was skipped")
        counts = f"{tests} tests" + (f", {skipped} skipped" if skipped else "")
        text = self.log.read_text(errors="replace").splitlines()
        for line in text:
            if line.startswith("summary: "):
                print("  " + line[len("summary: ") :])
        ok = rc == 0 and failed == 0 and not problem
        if ok:
            print(f"{self.name:<8} passed in {took}s ({counts})", flush=True)
        else:
            print(
                f"{self.name:<8} FAILED in {took}s (exit {rc}; {counts}, {failed} failed{'; ' + problem if problem else ''}); "
                f"last lines of {self.log}:"
            )
            for line in text[-60:]:
                print("  | " + line)
        return passed, failed, skipped, ok


class Images:
    """The cluster's images (cluster-up.sh --images-only beside TEST_SH), built at the lowest priority."""

    def __init__(self, test_sh: str, logs: Path, beside: str):
        self.log, self.started, self.proc = logs / "test-images.log", time.time(), None
        command = [str(Path(test_sh).with_name("cluster-up.sh")), "--images-only"]
        with open(self.log, "w") as out:
            try:
                self.proc = subprocess.Popen(
                    command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "LL_BUILD_NICE": "19"}, start_new_session=True
                )
            except OSError as error:
                print(f"images   not built beforehand ({' '.join(command)}: {error}); the cluster suites build them", flush=True)
                return
        print(f"images   building beside {beside}, at the lowest CPU priority (log: {self.log})", flush=True)

    def end(self) -> None:
        """Waits for the build and says how it ended."""
        if not self.proc:
            return
        rc, took = self.proc.wait(), int(time.time() - self.started)
        if rc == 0:
            print(f"images   ready in {took}s", flush=True)
        else:
            print(f"images   FAILED in {took}s (exit {rc}): the cluster suites' cluster-up builds them again; see {self.log}", flush=True)
        self.proc = None

    def stop(self) -> None:
        """Ends the build (the runner was interrupted): its whole session, which cluster-up's trap cleans up."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait()


def plan(suites: list, serial: bool) -> tuple:
    """(the suite run beside the others or "", the others in order): the beside suite only when a suite that
    needs no cluster is there to run with it."""
    others = [s for s in suites if s != BESIDE]
    if serial or BESIDE not in suites or not [s for s in others if s not in CLUSTER_SUITES]:
        return "", suites
    return BESIDE, others


def main(test_sh: str, logs: str, *args: str) -> int:
    suites = []
    for arg in args:
        if arg not in SUITES + ["all"]:
            print(f"error: unknown suite '{arg}'\n  fix: choose from: {' '.join(SUITES)} all (scripts/test.sh --help)", file=sys.stderr)
            return 1
        suites += SUITES if arg == "all" else [arg]
    suites = list(dict.fromkeys(suites)) or SUITES
    Path(logs).mkdir(parents=True, exist_ok=True)
    serial = os.environ.get("LIVENESS_LAB_TEST_SERIAL") == "1"
    beside, ordered = plan(suites, serial)
    ended = {}
    no_cluster = [s for s in suites if s not in CLUSTER_SUITES]
    images = None
    try:
        background = Suite(test_sh, Path(logs), beside, beside=", ".join(s for s in ordered if s not in CLUSTER_SUITES)) if beside else None
        if no_cluster and IMAGES_FOR & set(suites) and not serial:
            images = Images(test_sh, Path(logs), ", ".join(no_cluster))
        for suite in ordered:
            if suite in CLUSTER_SUITES:
                if background:
                    ended[beside], background = background.end(), None
                if images:
                    images.end()
            ended[suite] = Suite(test_sh, Path(logs), suite, {"LL_SERVICE_BESIDE": "1"} if background else {}).end()
        if background:
            ended[beside] = background.end()
    finally:
        if images:
            images.stop()
    passed, failed, skipped = (sum(r[i] for r in ended.values()) for i in range(3))
    failed_suites = [suite for suite in suites if not ended[suite][3]]
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
