"""A settings change reaches the next scripted run, at once (issue 24; the kind e2e).

    helm upgrade liveness-lab chart -n liveness-lab --reuse-values --set latencyMs=500 --wait
    scripts/demo.sh --ramp 2 --hold 30 --quiet 10

must give a run that asks for 500 ms (what the release now says, not Locust's own default), starts from
the release as it now is (no pod of the old ReplicaSets in its snapshots, no rollout event counted), and
PASSes. The release is rolled back to the revision before afterwards, whatever happened.

Skipped unless LIVENESS_LAB_E2E_CLUSTER names the kube context of a live cluster with the release; then
a missing cluster, release or helm fails (never skips):
    LIVENESS_LAB_E2E_CLUSTER=kind-liveness-lab scripts/test-locust.sh tests/test_release_change_live.py
About 3 minutes: the rollout, the settling, 47 s of load and 10 s of quiet, the report, the rollback.
LIVENESS_LAB_E2E_DEMO_ARGS replaces the demo's flags (default: --ramp 2 --hold 30 --quiet 10).
"""

import json
import os
import shlex
import shutil
import subprocess
import time

import pytest
from conftest import REPO

from liveness_lab import exits

CONTEXT = os.environ.get("LIVENESS_LAB_E2E_CLUSTER", "")
NAMESPACE = os.environ.get("LIVENESS_LAB_NAMESPACE", "liveness-lab")
RELEASE = "liveness-lab"
LATENCY_MS = 500
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not CONTEXT, reason="LIVENESS_LAB_E2E_CLUSTER not set (the kind e2e sets it)")]


def helm(*args, timeout=900) -> str:
    tool = shutil.which("helm", path=f"{REPO / '.tools' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    if tool is None:
        pytest.fail("helm is not on PATH nor in .tools/bin: scripts/cluster-up.sh installs it")
    out = subprocess.run([tool, *args, "--namespace", NAMESPACE, "--kube-context", CONTEXT], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        pytest.fail(f"helm {' '.join(args[:2])} failed (exit {out.returncode}): {out.stderr.strip()[-600:]}")
    return out.stdout


@pytest.fixture
def upgraded_to_500():
    """The release with latencyMs=500 (helm upgrade --reuse-values --wait), rolled back afterwards."""
    before = int(json.loads(helm("status", RELEASE, "-o", "json"))["version"])
    try:
        helm("upgrade", RELEASE, str(REPO / "chart"), "--reuse-values", "--set", f"latencyMs={LATENCY_MS}", "--wait", "--timeout", "10m")
        yield before
    finally:
        helm("rollback", RELEASE, str(before), "--wait", "--timeout", "10m")


def test_a_run_right_after_a_latency_change_runs_at_the_new_latency_and_passes(upgraded_to_500, tmp_path):
    out = tmp_path / "demo"
    args = shlex.split(os.environ.get("LIVENESS_LAB_E2E_DEMO_ARGS", "--ramp 2 --hold 30 --quiet 10"))
    env = dict(os.environ, LIVENESS_LAB_KUBE_CONTEXT=CONTEXT)
    env.pop("LIVENESS_LAB_LATENCY_MS", None)  # the release must decide
    started = time.time()
    proc = subprocess.run([str(REPO / "scripts" / "demo.sh"), *args, "--out", str(out)], env=env, capture_output=True, text=True, timeout=1800)
    print(proc.stderr[-4000:])
    print(proc.stdout[-3000:])
    assert proc.returncode != exits.SETUP, f"the run could not start: {proc.stderr.strip().splitlines()[-3:]}"
    run = json.loads((out / "run.json").read_text())
    assert run["latency_ms"] == LATENCY_MS and run["latency_source"] == "release", run
    variants = run["variants"].split(",")
    assert {v: run["settings"][v]["env"].get("DEMO_LATENCY_MS") for v in variants} == {v: str(LATENCY_MS) for v in variants}
    verdict = json.loads((out / "verdict.json").read_text())
    assert not verdict["disturbances"], verdict["disturbances"]
    # Only the pods of the new ReplicaSets served the load: one pod per replica in every snapshot.
    pods_seen = {v: a["pods"] for v, a in verdict["variants"].items()}
    print(f"pods seen: {pods_seen}; {time.time() - started:.0f} s")
    assert all(len(pods) == run["settings"][v]["replicas"] for v, pods in pods_seen.items()), pods_seen
    assert all(run["release_latency_ms"][v] == LATENCY_MS for v in variants), run["release_latency_ms"]
    assert proc.returncode == exits.PASS, f"verdict {verdict['verdict']}: {[c for c in verdict['checks'] if not c['ok']]}; cpu {verdict['cpu']}"
