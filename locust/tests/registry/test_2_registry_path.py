"""The registry path end to end, as a Mac runs it: the real e2e (scripts/test-e2e.sh --keep --no-lab, its
cluster, chart and scripted-run files: conftest.E2E_FILES; run with
the bash a Mac user chooses by hand while bash 3.2 is first on PATH) on a copy of the working tree, with an
empty cache and a Mac's PATH (uname Darwin arm64, id 501, the Python a Mac user installs, BSD's tools)
without Go, kind, helm, kubectl or a JDK, so every image must be pulled, every tool downloaded for
darwin/arm64 and the jar built inside Docker; then a second cluster-up that must restart no pod, again from
a ZIP download of the tree with Finder's files and __pycache__ in it, and cluster-down. Left out with
--registry-no-e2e."""

import hashlib
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

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


MAC_LOOK = 'uname -s; uname -m; id -u; bash -c "echo \\$BASH_VERSION"; python3 -c "import sys; print(sys.version.split()[0])"'


def test_inner_path_is_a_mac(inner_path, say):
    """uname says Darwin arm64, id -u 501, PATH's bash is 3.2, python3 the one a Mac user installs
    (LOCUST_PYTHON_MIN_MACOS); the bash chosen by hand is 4.1 or newer."""
    out = subprocess.run(["sh", "-c", MAC_LOOK], capture_output=True, text=True, env={"PATH": inner_path.path})
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) == 5, out.stdout + out.stderr
    assert lines[:3] == ["Darwin", "arm64", "501"], lines
    assert lines[3].startswith("3.2."), f"PATH's bash is {lines[3]}"
    assert lines[4].startswith(sim.V["LOCUST_PYTHON_MIN_MACOS"] + "."), f"python3 is {lines[4]}"
    chosen = subprocess.run(
        [inner_path.bash, "-c", "echo ${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]} $BASH_VERSION"], capture_output=True, text=True
    ).stdout.split()
    assert (int(chosen[0]), int(chosen[1])) >= (4, 1), f"the bash chosen by hand is {chosen}"
    chosen = chosen[2]
    say(f"a Mac: {' '.join(lines[:3])}, PATH's bash {lines[3]}, python3 {lines[4]}; scripts run with {inner_path.bash} {chosen}")


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


def test_the_locust_images_helm_downloaded_for_the_docker_machine(e2e):
    """The Locust image's helm (the Workshop tab's Skip and Reset) is Linux on the Docker machine's CPU, not
    the Mac's: get.helm.sh does not answer, so build-locust-image.sh fetched it through the mirror (both
    files asked, SHA-256 checked) and built nothing with Go (there is no Go on a Mac's PATH here)."""
    requests = sim.log_path("files").read_bytes()[e2e.files_log_start :].decode(errors="replace")
    for path in sim.download_paths("helm", *sim.IMAGE_HELM_PLATFORM):
        assert f'"GET /{path} HTTP/1.1" 200' in requests, f"not downloaded: {path}"
    served = sim.FILES / sim.download_paths("helm", *sim.IMAGE_HELM_PLATFORM)[0]
    got = sim.E2E_CACHE / f"helm-image-{sim.V['HELM_VERSION']}-{'-'.join(sim.IMAGE_HELM_PLATFORM)}" / "helm"
    want = hashlib.sha256(sim.helm_in_tarball(served, *sim.IMAGE_HELM_PLATFORM)).hexdigest()
    assert got.is_file() and sim.sha256_file(got) == want, f"not the served file: {got}"


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
    log = rerun(e2e, say, "rerun", sim.TREE)
    after = sim.pod_states(e2e.env)
    assert before, "no pod before the second cluster-up"
    assert before == after, "pods before:\n" + "\n".join(before) + "\npods after:\n" + "\n".join(after)
    say(f"{len(after)} pods, the same UIDs and restart counts before and after")
    modes = MODE_LINE.findall(log.read_text(errors="replace"))
    assert modes and set(modes) == {"registry"}, f"the second run did not take the registry path: {modes} ({log})"


def rerun(e2e, say, name: str, cwd) -> Path:
    """scripts/cluster-up.sh in CWD as the Mac user runs it (the bash chosen by hand); its log, once it passed."""
    log = sim.log_path(name)
    started = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(
            [e2e.bash, "scripts/cluster-up.sh"], cwd=cwd, env=e2e.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        ).returncode
    say(f"{e2e.bash} scripts/cluster-up.sh in {cwd}: exit {rc} after {time.monotonic() - started:.0f}s")
    assert rc == 0, f"cluster-up.sh exited {rc}; log: {log}\n{sim.tail(log)}"
    return log


def test_cluster_up_from_a_zip_download_restarts_no_pod(e2e, say):
    """The same tree as GitHub's "Download ZIP" gives it (git archive, no .git), with Finder's .DS_Store and
    ._* files and Python's __pycache__ planted: its cluster-up builds, loads and restarts nothing."""
    assert sim.cluster_present(), "no cluster after the e2e"
    planted = sim.archive_copy(sim.ZIP_TREE)
    before = settled_pods(e2e.env, say)
    log = rerun(e2e, say, "rerun-zip", sim.ZIP_TREE)
    after = sim.pod_states(e2e.env)
    assert before == after, "pods before:\n" + "\n".join(before) + "\npods after:\n" + "\n".join(after)
    text = log.read_text(errors="replace")
    for what, step in (("liveness-lab/service", "build-service-image"), ("liveness-lab/locust", "build-locust-image")):
        # The build scripts run as steps: what they decided is in the step's log, which this run rewrote.
        built = (sim.E2E_CACHE / "logs" / f"{step}.log").read_text(errors="replace")
        assert re.search(rf"image {re.escape(what)}:\S+ is up to date", built), f"{what} was built again ({step}.log)"
        assert re.search(rf"image {re.escape(what)}:\S+: already in the node", text), f"{what} was loaded again ({log})"
    assert "is up to date, not touched" in text, f"the release was upgraded ({log})"
    say(f"from the ZIP copy with {len(planted)} planted files: nothing built, loaded or restarted; {len(after)} pods the same")


def test_cluster_down(e2e, options):
    """scripts/cluster-down.sh deletes the cluster (with --registry-keep it stays)."""
    if options.keep:
        pytest.skip("--registry-keep: the cluster stays")
    sim.cluster_down(e2e.env, e2e.bash)
    assert not sim.cluster_present()
