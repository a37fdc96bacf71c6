"""Whether a release has settled: every chosen variant's Deployment rolled out, no pod of it still
terminating, every pod Ready for a while. One reading for the scripted run, which waits for it before
its load (``demo/run.py``), and the Locust master's workshop, whose checks count only a swarm started on a
settled release (``workshop/check.py``), so neither ever counts a rollout's old pods against a variant.

Works on the API's JSON (as ``kubectl get -o json`` prints it): recorded answers of a real cluster drive
the tests (tests/fixtures/orchestration/*-after-upgrade.json).
"""

from .kube import parse_time
from .variants import COMPONENT_LABEL

# Seconds every pod must have been Ready before a load counts, and the setting that changes it: one default
# for the scripted run, the lab, the workshop's master and the e2e tests.
SETTLE_ENV, DEFAULT_SETTLE_S = "LIVENESS_LAB_SETTLE", 20


def settle_problems(deployments: dict, pods: dict, variants: list[str], now: float, settle_s: float) -> list[str]:
    """Why the chosen VARIANTS do not yet run as the release now says, one line each; empty when they do:
    each one's Deployment rolled out (its controller saw the newest spec, every replica updated, Ready and
    available, none left of an older ReplicaSet), no pod of it still terminating (its connections and
    events would count against this run), and every pod Ready for SETTLE_S seconds (a fresh JVM is slow
    for a while and busies the CPU)."""
    problems = []
    by_variant = {(d["metadata"].get("labels") or {}).get(COMPONENT_LABEL): d for d in deployments.get("items", [])}
    for v in variants:
        d = by_variant.get(v)
        if d is None:
            problems.append(f"{v}: no Deployment")
            continue
        want = d["spec"].get("replicas", 1)
        st = d.get("status") or {}
        if st.get("observedGeneration", 0) < d["metadata"].get("generation", 0):
            problems.append(f"{v}: the Deployment's newest spec is not yet seen by its controller")
        elif (st.get("updatedReplicas", 0), st.get("readyReplicas", 0), st.get("availableReplicas", 0), st.get("replicas", 0)) != (
            want,
            want,
            want,
            want,
        ):
            problems.append(
                f"{v}: rolling out ({st.get('updatedReplicas', 0)} of {want} updated, {st.get('readyReplicas', 0)} Ready, "
                f"{st.get('replicas', 0)} in all)"
            )
        mine = [p for p in pods.get("items", []) if (p["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == v]
        leaving = [p["metadata"]["name"] for p in mine if p["metadata"].get("deletionTimestamp")]
        if leaving:
            problems.append(f"{v}: pod(s) still terminating: {', '.join(sorted(leaving))}")
        for p in mine:
            if p["metadata"].get("deletionTimestamp"):
                continue
            ready = next((c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
            if not ready or ready.get("status") != "True":
                problems.append(f"{v}: pod {p['metadata']['name']} not Ready")
                continue
            since = parse_time(ready.get("lastTransitionTime"))
            if since is not None and now - since < settle_s:
                problems.append(f"{v}: pod {p['metadata']['name']} Ready for {int(now - since)} s only (settling: {settle_s:.0f} s)")
    return problems
