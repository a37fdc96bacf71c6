"""Why a container restarted, each restart on its own: a liveness kill, a startup-probe kill, OOMKilled, the
application's own exit, or unknown; never a cause borrowed from an earlier restart of the pod. One reading
for the report and the lab (``report.facts``), the workshop's checks and the Live tab's hover
(``locust_ext/live_view.py``). What decides it, for the container that ended:

1. **the kubelet's probe counter**, where it could be read (``kube.probe_counts``: ``prober_probe_total`` of
   each node's ``/metrics/probes``). The kubelet's prober worker counts the results in a row and kills at
   the threshold (kubernetes, pkg/kubelet/prober/worker.go, ``doProbe``: ``resultRun``; a successful or
   unknown result starts the row again, a kill sets it to 0 and puts the worker on hold until the new
   container; the row is kept across a restart for another cause, the liveness probe being skipped until
   the startup probe passes). The counter counts every result and no filter drops any, so a row of F
   failed results since the last other result is a kill, exactly;
2. else **its own Killing event** ("Container service failed liveness probe, will be restarted", or
   "... startup probe ..."), between the previous restart of the pod and this one. The kubelet's events
   are a lossy record (the event recorder's spam filter: 25 per object and type, then one per five
   minutes; base/countdown.py); where the counter and the events disagree, the counter wins and the
   cause's evidence says so;
3. else **the container's last state**: an exit code of its own (not 143 or 137, the signals of a kill);
   a SIGTERM or SIGKILL with no kill recorded is unknown.

OOMKilled always wins: the kernel ended the container before anyone else could.
"""

from dataclasses import dataclass, replace

from .kube import killed_by

# Event times are whole seconds, and a restart's own time comes from the container's finishedAt.
CLOCK_SLACK_S = 2.0

# The exit codes of a container the kubelet killed: SIGTERM (143), then SIGKILL (137) after the grace period.
SIGNAL_EXITS = (143, 137)
# The causes of a restart, in words.
CAUSES = {
    "liveness": "a liveness kill",
    "startup": "a startup-probe kill",
    "oom": "OOMKilled",
    "exit": "the application's own exit",
    "unknown": "cause unknown",
}


@dataclass
class Restart:
    """One container restart: when the container ended, its last state, and what caused it (see the module
    docstring: the probe counter, then its own Killing event, then the container's last state)."""

    pod: str
    t: float  # when the container ended (its finishedAt), else when the restart count was seen to grow
    reason: str | None  # the last state's reason: "Error" after a SIGTERM, "OOMKilled" ...
    exit_code: int | None
    cause: str = "unknown"  # a key of CAUSES
    evidence: str = "not attributed"  # in words: what says so
    kill: "Kill | None" = None  # the kill that ended the container, when one did

    @property
    def liveness(self) -> bool:
        """Ended by a liveness kill."""
        return self.cause == "liveness"

    def describe(self) -> str:
        """ "a liveness kill (the kubelet's probe counter: 3 failed Liveness results in a row)"."""
        return f"{CAUSES[self.cause]} ({self.evidence})"

    def to_json(self) -> dict:
        return {
            "pod": self.pod,
            "t": self.t,
            "reason": self.reason,
            "exitCode": self.exit_code,
            "cause": self.cause,
            "evidence": self.evidence,
            "kill": None if self.kill is None else self.kill.to_json(),
        }


@dataclass(frozen=True)
class Kill:
    """The kubelet's decision to restart a container because a probe failed its threshold in a row."""

    pod: str
    t: float  # its Killing event's time; from the counter alone, the first sample that showed it
    probe: str  # "Liveness" or "Startup" (the kubelet's probe_type)
    source: str  # "counter", "event", or "counter and event"
    failures: int | None = None  # failed results in a row at the kill, by the counter; None from an event alone
    since: float | None = None  # the counter's sample before it: the kill came between since and t
    first_failure: float | None = None  # the counter's sample that showed the row's first failure
    message: str = ""

    def to_json(self) -> dict:
        return {
            "pod": self.pod,
            "t": self.t,
            "probe": self.probe,
            "source": self.source,
            "failures": self.failures,
            "since": self.since,
            "firstFailure": self.first_failure,
        }


def event_kills(records: list[dict]) -> list[Kill]:
    """One Kill per kill the Killing event records tell: an aggregated event's count rising by k is k kills,
    the last at its lastTimestamp (the times of the others are not told: they are placed there too)."""
    seen, out = {}, []
    for e in sorted(records, key=lambda r: (r["t"], r["count"])):
        probe = killed_by(e)
        if probe is None:
            continue
        before = seen.get(e["uid"], 0)
        if e["count"] <= before:
            continue
        if before == 0 and e.get("first") is not None and e["count"] > 1:
            out.append(Kill(e["pod"], e["first"], probe, "event", message=e["message"]))
            before = 1
        out += [Kill(e["pod"], e["last"], probe, "event", message=e["message"]) for _ in range(e["count"] - before)]
        seen[e["uid"]] = e["count"]
    return sorted(out, key=lambda k: k.t)


def counter_rows(timeline: list[dict], pods) -> dict[str, list[tuple[float, dict]]]:
    """Per pod of PODS, the kubelet's probe counter as the recorder read it: [(t, {probe type: counts})]."""
    out = {pod: [] for pod in pods}
    for r in timeline:
        if r["kind"] == "probes":
            for pod, counts in r["pods"].items():
                if pod in out:
                    out[pod].append((r["t"], counts))
    return {pod: rows for pod, rows in out.items() if rows}


def counter_kills(pod: str, rows: list[tuple[float, dict]], thresholds: dict[str, int]) -> list[Kill]:
    """The kills the probe counter of POD shows: per probe type with a threshold F, a row of F failed
    results with no successful or unknown one among them (the prober worker's resultRun; see the module
    docstring). When a sample interval holds both failed and other results, their order is not told:
    the failed ones are counted as the last (the row starts again with them)."""
    kills = []
    for probe, threshold in thresholds.items():
        run, first, before = 0, None, None
        for t, counts in rows:
            c = counts.get(probe)
            if c is None:
                # The kubelet makes a probe's series with its first result: a sample of the pod without it
                # means the series, when it comes, counts from zero (a new pod's first failures count).
                before = before or (t, {"uid": None})
                continue
            if before is not None and before[1].get("uid", c.get("uid")) is None:
                before = (before[0], {"uid": c.get("uid")})
            if before is not None:
                bt, b = before
                d = {k: c.get(k, 0) - b.get(k, 0) for k in ("successful", "failed", "unknown")}
                if min(d.values()) < 0 or c.get("uid") != b.get("uid"):
                    run, first = 0, None  # the worker was made again (a new pod of the same name): counts anew
                elif d["successful"] + d["unknown"] == 0:
                    run += d["failed"]
                else:
                    run = d["failed"]
                if d["failed"] and run == d["failed"]:
                    first = t
                if run >= threshold:
                    kills.append(Kill(pod, t, probe, "counter", run, bt, first))
                    run, first = 0, None
            before = (t, c)
    return sorted(kills, key=lambda k: k.t)


def counter_failed(rows: list[tuple[float, dict]], probe: str, start: float, end: float) -> int | None:
    """Failed results of PROBE the counter counted between START and END (its samples nearest inside);
    None when it has fewer than two samples there."""
    inside = [c[probe] for t, c in rows if start - CLOCK_SLACK_S <= t <= end + CLOCK_SLACK_S and probe in c]
    if len(inside) < 2:
        return None
    total = 0
    for b, c in zip(inside, inside[1:], strict=False):
        d = c.get("failed", 0) - b.get("failed", 0)
        total += d if d >= 0 and c.get("uid") == b.get("uid") else c.get("failed", 0)
    return total


def attribute_restarts(restarts: list[Restart], events: list[Kill], counted: list[Kill], covered, start: float) -> list[Kill]:
    """Each restart's cause (the module docstring's order), each from its own container's life: the kills
    between the pod's previous restart and this one. COVERED(pod, since, until): the counter has samples of
    POD over that life. Returns every kill, those no restart followed yet (the recording ended first) too."""
    used, kills = set(), []

    def mine(found, pod, since, until):
        # A counter's kill belongs to the life its last failure can have ended: the sample before it
        # (k.since) came before the restart, even where a busy recorder's next sample came later.
        return [
            k
            for k in found
            if k.pod == pod
            and id(k) not in used
            and since - CLOCK_SLACK_S < k.t
            and (k.t if k.since is None else min(k.t, k.since)) <= until + CLOCK_SLACK_S
        ]

    previous = {}
    for r in sorted(restarts, key=lambda r: r.t):
        since = previous.get(r.pod, float("-inf"))
        by_counter, by_event = mine(counted, r.pod, since, r.t), mine(events, r.pod, since, r.t)
        counter_saw = covered(r.pod, since, r.t)
        event = by_event[-1] if by_event else None
        kill, notes = None, []
        if by_counter:
            k = by_counter[-1]
            kill = replace(k, t=event.t, source="counter and event", message=event.message) if event and event.probe == k.probe else k
            evidence = (
                f"the kubelet's probe counter: {k.failures} failed {k.probe} results in a row, the last between "
                f"+{k.since - start:.1f} and +{k.t - start:.1f} s"
            )
            if event is None:
                notes.append("no Killing event of its own: the kubelet's events for the pod were spent")
            elif event.probe != k.probe:
                notes.append(f"its Killing event says {event.probe.lower()}: the counter wins")
        elif event is not None and counter_saw:
            evidence = (
                f"its Killing event says {event.probe.lower()}, but the kubelet's probe counter shows no row of failures: the counter wins"
            )
        elif event is not None:
            kill = event
            evidence = f"its own Killing event at +{event.t - start:.1f} s: {event.message}"
        used.update(id(k) for k in by_counter + by_event)
        if r.reason == "OOMKilled":
            r.cause, r.evidence = "oom", "its last state: OOMKilled" + (f", after a {kill.probe.lower()} kill" if kill else "")
        elif kill is not None:
            r.cause = {"Liveness": "liveness", "Startup": "startup"}[kill.probe]
            r.evidence = "; ".join([evidence, *notes])
        elif r.exit_code in SIGNAL_EXITS:
            what = "SIGTERM" if r.exit_code == 143 else "SIGKILL"
            r.evidence = (evidence + "; ") if event is not None else ""
            r.evidence += f"ended on {what} (exit {r.exit_code})"
            if not counter_saw:
                r.evidence += ", with no Killing event of its own (the kubelet's events for the pod may be spent) and no probe counter read"
        elif r.exit_code is not None:
            r.cause, r.evidence = "exit", f"it exited by itself: exit {r.exit_code} ({r.reason or 'no reason given'})"
        else:
            r.evidence = "its last state was not read (the container's finishedAt never reached a pod snapshot)"
        r.kill = kill
        if kill is not None:
            kills.append(kill)
        previous[r.pod] = r.t
    # Kills whose restart the recording did not see: the counter's, and the events' the counter does not contradict.
    for k in counted:
        if id(k) not in used:
            kills.append(k)
            used.update(id(e) for e in events if e.pod == k.pod and abs(e.t - k.t) <= 2 * CLOCK_SLACK_S + 1)
    kills += [k for k in events if id(k) not in used and not covered(k.pod, k.t - 1, k.t)]
    return sorted(kills, key=lambda k: k.t)
