"""The registry path end to end: the real e2e (scripts/test-e2e.sh --keep --no-lab) on a copy of the working
tree, with an empty cache and a Mac-like PATH without Go, kind, helm, kubectl or a JDK, so every image must
be pulled, every tool downloaded and the jar built inside Docker; then a second cluster-up that must
restart no pod, and cluster-down. Left out with --registry-no-e2e."""

import hashlib
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from . import registry_sim as sim

# cluster-up's plan line: "  mode:          registry (a pull of ... is answered: ...)".
MODE_LINE = re.compile(r"^\s*mode:\s+(\S+) \(", re.MULTILINE)


def test_no_cluster_before_the_run():
    assert not sim.cluster_present(), (
        f"a kind cluster '{sim.CLUSTER}' exists (another test or a demo?): it would be reused, not made by the "
        "registry path; fix: scripts/cluster-down.sh (or scripts/test-registry.sh --down after a --keep run)"
    )


def test_tree_copy(tree):
    """Tracked and untracked-not-ignored files, each copied, all added to a fresh git work tree."""
    missing = [f for f in tree if not (sim.TREE / f).exists() and not (sim.TREE / f).is_symlink()]
    assert not missing, f"not copied: {missing[:10]}"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=sim.TREE, capture_output=True, check=True).stdout
    assert sorted(f for f in listed.decode().split("\0") if f) == tree


def test_inner_path_without_dev_tools(inner_path):
    """No go, kind, helm, kubectl, java, javac or mvn; docker, curl, git, python3 and tar are there."""
    found = {tool: shutil.which(tool, path=inner_path.path) for tool in sim.FORBIDDEN_TOOLS}
    assert not any(found.values()), f"still on the PATH: { {k: v for k, v in found.items() if v} }"
    missing = [tool for tool in ("docker", "curl", "git", "python3", "tar") if not shutil.which(tool, path=inner_path.path)]
    assert not missing, f"missing from the PATH: {missing}"


def test_inner_path_is_macos_userland(inner_path, say):
    """BWK awk as awk, and none of the GNU tools a Mac lacks (timeout, nproc, sha256sum...)."""
    assert shutil.which("awk", path=inner_path.path) == str(sim.SIM / "path" / "macos" / "awk"), "awk is not BWK's"
    assert inner_path.macos_missing, "macos_userland.py named no missing tool"
    present = [tool for tool in inner_path.macos_missing if shutil.which(tool, path=inner_path.path)]
    assert not present, f"not on a Mac, still on the PATH: {present}"
    awk = subprocess.run(["awk", "-version"], capture_output=True, text=True, env={"PATH": inner_path.path})
    say(f"macOS userland: {(awk.stdout + awk.stderr).splitlines()[0]} as awk; no {' '.join(inner_path.macos_missing)}")


def inner_failures() -> list[str]:
    """The failing tests the inner e2e reported in its JUnit XML."""
    failed = []
    for report in sorted(sim.E2E_JUNIT.rglob("*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed.append(f"{report.name}: {case.get('classname', '')}::{case.get('name', '')}")
    return failed


def test_e2e_passes(e2e):
    """scripts/test-e2e.sh --keep --no-lab exits 0: every one of its tests passed."""
    assert e2e.rc == 0, (
        f"scripts/test-e2e.sh exited {e2e.rc}; failing: {inner_failures() or 'none reported'}; log: {e2e.log}\n{sim.tail(e2e.log, 40)}"
    )


def test_cluster_up_chose_the_registry_path(e2e):
    """Every cluster-up of the e2e said "mode: registry" (its output, and its logs in the empty cache)."""
    modes = MODE_LINE.findall(e2e.log.read_text(errors="replace"))
    for log in sorted((sim.E2E_CACHE / "logs").rglob("*.log")):
        modes += MODE_LINE.findall(log.read_text(errors="replace"))
    assert modes, f"no cluster-up plan (mode: ...) in {e2e.log} or {sim.E2E_CACHE / 'logs'}"
    assert set(modes) == {"registry"}, f"modes: {modes}"


@pytest.mark.parametrize("tool", sim.TOOLS)
def test_tool_downloaded_not_built(e2e, tool):
    """Both of the tool's files asked of the file server (answered 200); the cached binary is the served
    one's bytes; no build log of it."""
    requests = sim.log_path("files").read_bytes()[e2e.files_log_start :].decode(errors="replace")
    for path in sim.download_paths(tool):
        assert f'"GET /{path} HTTP/1.1" 200' in requests, f"not downloaded: {path}"
    served = sim.FILES / sim.download_paths(tool)[0]
    want = hashlib.sha256(sim.helm_in_tarball(served)).hexdigest() if tool == "helm" else sim.sha256_file(served)
    got = sim.E2E_CACHE / f"{tool}-{sim.pinned_version(tool)}" / "bin" / tool
    assert got.is_file() and sim.sha256_file(got) == want, f"not the served file: {got}"
    build = {"kind": "build-kind-*", "helm": "build-helm-*", "kubectl": "build-kubernetes-*"}[tool]
    built = sorted((sim.E2E_CACHE / "logs").glob(build))
    assert not built, f"built: {built}"


def settled_pods(env: dict, say, quiet: int = 30, limit: int = 300) -> list[str]:
    """The pods once none changed for QUIET seconds (at most LIMIT): the e2e ends with a swarm that gets the
    blocking pod killed (the Live tab's check), which may still be restarting from that load."""
    before, waited = sim.pod_states(env), 0
    while waited < limit:
        time.sleep(quiet)
        waited += quiet
        now = sim.pod_states(env)
        if now == before:
            break
        before = now
    say(f"pods unchanged for {quiet} s after {waited}s")
    return before


def test_second_cluster_up_restarts_no_pod(e2e, say):
    """scripts/cluster-up.sh again, with everything up: every pod the same pod (UID) with the same restart
    counts, and the registry path taken again."""
    assert sim.cluster_present(), "no cluster after the e2e"
    before = settled_pods(e2e.env, say)
    log = sim.log_path("rerun")
    with open(log, "w") as out:
        rc = subprocess.run(
            ["scripts/cluster-up.sh"], cwd=sim.TREE, env=e2e.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        ).returncode
    assert rc == 0, f"cluster-up.sh exited {rc}; log: {log}\n{sim.tail(log)}"
    after = sim.pod_states(e2e.env)
    assert before, "no pod before the second cluster-up"
    assert before == after, "pods before:\n" + "\n".join(before) + "\npods after:\n" + "\n".join(after)
    say(f"{len(after)} pods, the same UIDs and restart counts before and after")
    modes = MODE_LINE.findall(log.read_text(errors="replace"))
    assert modes and set(modes) == {"registry"}, f"the second run did not take the registry path: {modes} ({log})"


def test_cluster_down(e2e, options):
    """scripts/cluster-down.sh deletes the cluster (with --registry-keep it stays)."""
    if options.keep:
        pytest.skip("--registry-keep: the cluster stays")
    sim.cluster_down(e2e.env)
    assert not sim.cluster_present()
