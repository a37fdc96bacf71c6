"""A settings change reaches the next scripted run, at once (issue 24):

    helm upgrade liveness-lab chart -n liveness-lab --reuse-values --set latencyMs=500 --wait
    scripts/demo.sh --ramp 2 --hold 30 --quiet 10

must give a run that asks for 500 ms (what the release now says, not Locust's own default), starts from
the release as it now is (no pod of the old ReplicaSets in its snapshots, no rollout event counted), and
PASSes. The release is rolled back to the revision before afterwards, whatever happened. About 3 minutes:
the rollout, the settling, 47 s of load and 10 s of quiet, the report, the rollback.

Last in the session: the upgrade and the rollback roll the Locust pods out twice (latencyMs reaches their
environment), and a test right after it met a master still being replaced. Not with --no-lab.
"""

import json
import os
import time

import pytest

from liveness_lab.base import exits

from . import kind

LATENCY_MS = 500
DEMO_ARGS = ["--ramp", "2", "--hold", "30", "--quiet", "10"]


@pytest.fixture
def upgraded_to_500(cluster):
    """The release with latencyMs=500 (helm upgrade --reuse-values --wait), rolled back afterwards."""
    before = int(json.loads(kind.helm("status", kind.RELEASE, "-o", "json").stdout)["version"])
    try:
        kind.helm(
            "upgrade",
            kind.RELEASE,
            str(kind.REPO / "chart"),
            "--reuse-values",
            "--set",
            f"latencyMs={LATENCY_MS}",
            "--wait",
            "--timeout",
            "10m",
        )
        yield before
    finally:
        kind.helm("rollback", kind.RELEASE, str(before), "--wait", "--timeout", "10m")


@pytest.mark.lab
def test_a_run_right_after_a_latency_change_runs_at_the_new_latency_and_passes(upgraded_to_500, tmp_path, request):
    out = tmp_path / "demo"
    env = dict(os.environ, LIVENESS_LAB_KUBE_CONTEXT=kind.CONTEXT)
    env.pop("LIVENESS_LAB_LATENCY_MS", None)  # the release must decide
    started = time.time()
    proc = kind.run_streamed(
        [kind.SCRIPTS / "demo.sh", *DEMO_ARGS, "--out", out], kind.logs_dir() / "e2e-latency-change.log", request.config, 1800, env=env
    )
    assert proc.returncode != exits.SETUP, f"the run could not start: {proc.describe()}"
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
    assert proc.returncode == exits.PASS, (
        f"verdict {verdict['verdict']}: {[x for x in verdict['lines'] if x['state'] != 'held']}; cannot tell: "
        f"{verdict['whyCannotTell']}; cpu {verdict['cpu']}"
    )
