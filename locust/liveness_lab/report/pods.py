"""A variant's pods as the recorder's snapshots saw them: which pods there were and which came up during
the run, their restarts (each with its container's own end and state; its cause is decided with the kills,
in ``variant.analyze_variant``), the restart back-off's waits, evictions, and the Ready counts over time with
the recovery after the load.

**Each restart has its own cause** (``Restart.cause``, decided by ``base.causes``: the kubelet's probe
counter, then the restart's own Killing event, then the container's last state), never one borrowed from
an earlier restart of the pod.
"""

from dataclasses import dataclass, field

from liveness_lab.base.causes import Restart


@dataclass(frozen=True)
class PodTime:
    pod: str
    t: float


@dataclass
class PodHistory:
    """What the pod snapshots say of one variant: its pods, their restarts, Ready counts over time."""

    pods: list[str]
    added_during_run: list[str]
    restarts: list[Restart]
    restarts_by_pod: dict[str, int]
    evicted: list[str]
    ready: list[tuple[float, int, int]]  # (t, Ready pods, pods)
    first_seen: dict[str, float] = field(default_factory=dict)  # pod -> its first snapshot
    # Per restart seen with both times: seconds from the container's exit (finishedAt) to the next one's start
    # (startedAt), the restart back-off's wait (0-1 s for a restart at once). None where the recorder kept no
    # startedAt.
    waits: list[float] = field(default_factory=list)
    # pod -> the starts (startedAt) of the containers seen running in it, in order
    starts: dict[str, list[float]] = field(default_factory=dict)
    # pod -> the starts of its containers seen `started: true` and later, the same container, `started: false`:
    # a container that inherited its predecessor's started flag until its startup probe's worker looked
    # (kubernetes#141155); None where the recorder did not keep the flag
    inherited_started: dict[str, list[float]] | None = None


def pod_history(timeline: list[dict], variant: str) -> PodHistory:
    """Restarts: a pod's restart count going up between two snapshots. Its time is the container's
    finishedAt when the API gave one newer than the pod's previous restart, else the snapshot's: a
    lastState the kubelet has not updated yet still names the previous restart's container (the count and
    the lastState move at different times: after a kill in CrashLoopBackOff, the lastState first, the count
    when the back-off ends), and a later snapshot gives the restart its own time and state."""
    snapshots = [(r["t"], [p for p in r["pods"] if p["variant"] == variant]) for r in timeline if r["kind"] == "pods"]
    baseline, last_count, restarts, evicted, ready, first_seen = {}, {}, [], set(), [], {}
    known_end, pending = {}, {}  # pod -> its previous restart's end; its restart still without one
    waited = {}  # (pod, restart count) -> the wait before that count's container started
    starts: dict[str, list[float]] = {}
    flags: dict[tuple[str, float], list[bool]] = {}  # (pod, container start) -> its started flag, snapshot by snapshot
    for t, pods in snapshots:
        ready.append((t, sum(p["ready"] for p in pods), len(pods)))
        for p in pods:
            name, ended = p["name"], p["lastTerminatedAt"]
            started = p.get("startedAt")
            if started is not None and started not in starts.setdefault(name, []):
                starts[name].append(started)
            if started is not None and p.get("started") is not None:
                flags.setdefault((name, started), []).append(p["started"])
            if name in last_count and p["restarts"] > baseline[name] and ended is not None and started is not None and started >= ended:
                # The latest snapshot of that count: a lastState that lagged behind the count has caught up.
                waited[(name, p["restarts"])] = started - ended
            if p.get("reason") == "Evicted":
                evicted.add(name)
            if name not in last_count:
                baseline[name] = last_count[name] = p["restarts"]
                first_seen[name], known_end[name] = t, ended
                continue
            fresh = ended is not None and ended <= t and (known_end[name] is None or ended > known_end[name])
            state = (ended, p["lastTerminatedReason"], p["lastTerminatedExitCode"])
            if p["restarts"] > last_count[name]:
                new = [Restart(name, *(state if fresh else (t, None, None))) for _ in range(p["restarts"] - last_count[name])]
                restarts += new
                pending[name] = None if fresh else new[-1]
                known_end[name] = ended if fresh else known_end[name]
                last_count[name] = p["restarts"]
            elif fresh and pending.get(name) is not None:
                # The container's lastState caught up with a restart seen before it: its own time and state.
                r = pending.pop(name)
                r.t, r.reason, r.exit_code = state
                known_end[name] = ended
    pods = sorted(last_count)
    # Pods that were not there when recording began: a rollout or a deletion during the run (a liveness
    # restart keeps its pod). Such a run says nothing about the claim.
    first_names = {p["name"] for p in snapshots[0][1]} if snapshots else set()
    return PodHistory(
        pods=pods,
        added_during_run=sorted(set(pods) - first_names),
        restarts=restarts,
        restarts_by_pod={name: last_count[name] - baseline[name] for name in pods},
        evicted=sorted(evicted),
        ready=ready,
        first_seen=first_seen,
        waits=[round(w, 1) for _, w in sorted(waited.items())],
        starts={name: sorted(times) for name, times in starts.items()},
        inherited_started=None
        if not flags
        else {name: sorted(s for (n, s), seq in flags.items() if n == name and seq[0] and False in seq) for name in sorted(last_count)},
    )


def recovery_after(ready: list[tuple[float, int, int]], stop: float) -> float | None:
    """Seconds from load stop until every pod is Ready and stays so to the end of the recording."""
    after = [(t, r, n) for t, r, n in ready if t >= stop]
    for i, (t, _, total) in enumerate(after):
        if total and all(r == n and n for _, r, n in after[i:]):
            return round(max(0.0, t - stop), 1)
    return None
