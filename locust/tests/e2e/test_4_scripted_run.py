"""A scripted run on the cluster: the lab's two quick scenarios (scripts/lab.sh --quick: baseline and
servlet; every prediction must hold; about 7 minutes), or with --no-lab a shortened scripted demo whose
verdict must be PASS. Either leaves restarts of the blocking pod for the Pods tab's test."""

import json
import os
import re
import time

import pytest

from liveness_lab.base import exits

from . import kind

MEANING = {
    exits.FAIL: "FAIL / a prediction did not hold",
    exits.INCONCLUSIVE: "INCONCLUSIVE / a run could not tell",
    exits.SETUP: "set-up error: nothing was judged",
}


def catalogue_digest(name: str) -> str:
    from liveness_lab.lab import catalogue

    return next(s for s in catalogue.load_catalogue() if s.name == name).digest


def out_dir(prefix: str):
    return kind.REPO / "reports" / f"{prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"


@pytest.fixture(scope="module")
def lab_out():
    return out_dir("e2e-lab")


@pytest.mark.lab
def test_the_labs_quick_scenarios_hold_every_prediction(cluster, request, lab_out):
    book = lab_out.parent / f"{lab_out.name}-ledger"  # the suite's runs kept apart from the clone's ledger
    env = dict(os.environ, LIVENESS_LAB_LEDGER=str(book))
    run = kind.run_streamed(
        [kind.SCRIPTS / "lab.sh", "--quick", "--out", lab_out], kind.logs_dir() / "e2e-lab.log", request.config, 1800, env=env
    )
    assert run.returncode == exits.HELD, f"{MEANING.get(run.returncode, '?')}: {run.describe()}"
    # Each run kept in the ledger, judged by its scenario's prediction as it is now.
    for name in ("baseline", "servlet"):
        records = [json.loads(p.read_text()) for p in (book / name).glob("*.json")]
        assert [(r["outcome"], r["digest"]) for r in records] == [("held", catalogue_digest(name))], records


@pytest.mark.lab
@pytest.mark.parametrize("scenario, variant", [("baseline", "blocking"), ("servlet", "servlet")])
def test_every_kill_is_the_thresholds_failures_in_a_row_by_the_kubelets_own_counter(cluster, lab_out, scenario, variant):
    """The recorder read the kubelet's probe counter (kind's admin kubeconfig has nodes/proxy): for every
    liveness kill, the failed results since the last other result equal the probe's threshold, the
    countdown built from the events has the same kill, and every restart is that kill's own."""
    # What the run ran on, for the lab's matrix per release (issue 50): the API server's release, the kubelets'.
    k8s = json.loads((lab_out / scenario / "run.json").read_text())["kubernetes"]
    assert re.fullmatch(r"v1\.\d+\.\d+\S*", k8s["server"]) and k8s["kubelets"] == [k8s["server"]], k8s
    found = json.loads((lab_out / scenario / "verdict.json").read_text())["variants"][variant]
    assert found["probeCounter"] == "read", found["probeCounter"]
    checks = found["killChecks"]
    assert checks, f"{scenario}: no liveness kill of {variant} seen by the counter: {found['kills']}"
    for c in checks:
        assert c["counterFailures"] == c["threshold"] and c["agree"], c
    assert found["restarts"] and all(r["cause"] == "liveness" for r in found["restarts"]), found["restarts"]


@pytest.mark.no_lab
def test_a_short_scripted_demo_passes(cluster, request):
    """A 40 s hold and 10 s of quiet: the first kill comes 11-16 s into the load, its restart about 35 s in
    (the registry path's run on 2026-11-28: the kill at +17 s, the restart at +34 s)."""
    run = kind.run_streamed(
        [kind.SCRIPTS / "demo.sh", "--ramp", "2", "--hold", "40", "--quiet", "10", "--out", out_dir("e2e")],
        kind.logs_dir() / "e2e-demo.log",
        request.config,
        1200,
    )
    assert run.returncode == exits.PASS, f"{MEANING.get(run.returncode, '?')}: {run.describe()}"
