"""The reactive pod under many requests in flight, long enough for its heap to reach its maximum.

900 ReactiveUsers of the release's own Locust (1 request/s of 1,000 ms each, so ~900 in flight) for 45 s.
The heap fills to its cap in about 20 s; with the image's old `-XX:MaxRAMPercentage=75` the JVM's memory
beyond the heap (metaspace, code cache, stacks, GC, malloc: ~170 MiB) then took the pod past its 512 MiB
limit and the kernel killed it (OOMKilled, exit 137) at +30 s, twice out of two runs. The point of the
demo is that this pod stays up, so a restart here, of any kind, fails the test, and so does a failed
request. It starts once the release has settled: right after the Live tab's test the blocking pod's JVM is
starting again after its kill, and on 2 cores that start beside 900 users once failed 68 requests with no
restart (timeouts, then 5 s of "connection refused": the Service had no Ready endpoint, so the reactive
pod had failed its readiness probe; CI, 2026-11-27). A failure now lists the reactive pods' Unhealthy events.
"""

import time

import pytest

from liveness_lab.demo import release as rel
from liveness_lab.demo.locust_master import phase_options
from liveness_lab.demo.no_other_load import release_master

from . import kind

USERS, RAMP_S, HOLD_S = 900, 5, 45

pytestmark = pytest.mark.usefixtures("cluster")


def reactive_containers() -> list[dict]:
    pods = kind.kubectl_json("get", "pods", "-n", kind.NAMESPACE, "-l", f"{kind.RELEASE_SELECTOR},app.kubernetes.io/component=reactive")[
        "items"
    ]
    return [s for p in pods for s in p.get("status", {}).get("containerStatuses", [])]


def reactive_probe_failures() -> list[str]:
    """The reactive pods' Unhealthy events: why requests failed while the pod stayed up."""
    events = kind.kubectl_json("get", "events", "-n", kind.NAMESPACE, "--field-selector", "reason=Unhealthy")["items"]
    return [
        f"{e.get('lastTimestamp')} x{e.get('count', 1)} {e['involvedObject']['name']}: {e.get('message', '')}"
        for e in events
        if "-reactive-" in e["involvedObject"]["name"]
    ]


def test_the_reactive_pod_holds_900_requests_in_flight_without_running_out_of_memory():
    # The release's master through the API server, as a scripted run with --load cluster finds it.
    waited = kind.wait_settled("before 900 users", kind.WITH_LOCUST)
    print(f"the release settled after {waited:.0f} s")
    master = release_master(rel.ClusterApi(kind.CONTEXT, kind.NAMESPACE, kind.RELEASE), environ={})
    before = {s["name"]: s["restartCount"] for s in reactive_containers()}
    assert before, "no reactive pod"
    status = master.status()
    assert status is not None and status.workers, f"the release's Locust master has no worker: {status}"
    if status.busy:
        master.stop()
        time.sleep(5)
    master.reset_stats()
    master.swarm_shape(["ReactiveUser"], phase_options(USERS, RAMP_S, HOLD_S, 0, 0, 1000, 1))
    try:
        time.sleep(RAMP_S + HOLD_S)
        stats = master.call("GET", "/stats/requests").json()
    finally:
        master.stop()
    total = stats["stats"][-1]
    after = reactive_containers()
    killed = [
        (s["name"], s.get("lastState", {}).get("terminated", {}).get("reason"))
        for s in after
        if s["restartCount"] != before.get(s["name"], s["restartCount"])
    ]
    assert not killed, f"the reactive pod restarted under {USERS} requests in flight (container, last termination): {killed}"
    # ~900 req/s for 50 s; a pod that stopped answering for more than a few seconds has far fewer.
    assert total["num_requests"] >= USERS * HOLD_S * 0.8, total
    assert total["num_failures"] == 0, (stats.get("errors"), reactive_probe_failures())
