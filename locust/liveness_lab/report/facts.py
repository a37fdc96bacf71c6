"""The facts of a scripted run, and of a workshop's window on a swarm, from what was recorded: per
variant its pods, their restarts and what caused each, the probes' failures and kills (from the kubelet's
events and, where it could be read, its own probe counter), Locust's requests, served and failed, the
kill window of the variant's probe, the lab's actions, the load its pods served and the CPU. Everything
that judges (the demo's verdict in ``verdict``, the predictions of the lab and the workshop in
``predictions``) reads these facts and derives none of its own.

**Each restart has its own cause** (``Restart.cause``, decided by ``base.causes``: the kubelet's probe
counter, then the restart's own Killing event, then the container's last state), never one borrowed from
an earlier restart of the pod.

Every time is on the host's clock once ``run_facts`` has moved the cluster's stamps (report.clock).
"""

import csv
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from liveness_lab.base import DEFAULT_LATENCY_MS, countdown
from liveness_lab.base.causes import (
    CLOCK_SLACK_S,
    Kill,
    Restart,
    attribute_restarts,
    counter_failed,
    counter_kills,
    counter_rows,
    event_kills,
)
from liveness_lab.base.kube import is_liveness_failure
from liveness_lab.base.probes import Probe
from liveness_lab.base.variants import VARIANTS, mode_of, request_name

from . import cgroups, clock
from .gc import GcBeforeKill, HeapHigh, fullest_heap, gc_before_kills
from .scheduler import Scheduler, schedulers
from .settings import VariantSettings, run_settings

# The machine this busy on average during the hold and a run cannot tell: what happened may be the
# machine's doing. The one CPU figure that voids a run, because no prediction is about it.
BUSY_WARN = 0.90
# The spared variants' signs of a short CPU, shown beside the run (outcomes, never voiding it): a pod
# throttled in this share of its CFS periods, a median latency over this factor of the requested.
THROTTLE_WARN = 0.25
# A recorder interval (cAdvisor's counters, read every 15 s) counts toward a pod's most throttled one when
# the pod ran in at least this many CFS periods of it (of 150): a mostly idle interval's few periods say
# little of what its quota did to the work.
PEAK_MIN_PERIODS = 50
# This many failed reads of the API (about one a second) and the timeline has holes: no verdict.
API_ERRORS_DISTURBED = 5
LATENCY_WARN_FACTOR = 1.5
# How many more requests a variant's pods may count than Locust offered it, with nobody else sending any:
# one per user, because each user has at most one request in flight and those Locust cuts off when it
# stops its users are served but never counted by Locust; plus 5 % of the offered load, because Locust's
# FastHttpUser client sends a request again once when a kept-alive connection was closed under it (a
# restarting pod does that), which the service may count twice. Another swarm adds its whole rate, far more.
EXTRA_PER_USER = 1
EXTRA_SHARE = 0.05
# The claim's two sides, by the mode a variant runs: the modes whose serving threads block while they
# wait (the kubelet should kill their pods) and the modes that hold no serving thread while they wait (it
# should leave them alone). Offloaded and virtual are neither: reported, not judged.
# The modes, by what their serving threads do while a request waits: block (an event loop, a Tomcat worker
# thread: the kubelet's probe waits behind them) or hold none (a timer, a DeferredResult, a virtual
# thread). Offloaded and virtual are neither: their pools block, the probe does not wait on them.
BLOCKING_MODES = ("blocking", "servlet")
NON_BLOCKING_MODES = ("reactive", "servlet-async", "servlet-virtual")


@dataclass
class RunData:
    """One report folder: run.json, Locust's stats history, totals and failures, the recorder's timeline."""

    run: dict
    history: list[dict]
    totals: list[dict]
    failures: list[dict]
    timeline: list[dict]


def requested_latency_ms(run: dict) -> float:
    """The latency the run's requests asked for, from run.json; an old run without it had the default."""
    return float(run.get("latency_ms", DEFAULT_LATENCY_MS))


def load_run(folder: Path) -> RunData:
    """run.json, locust_stats_history.csv, locust_stats.csv, locust_failures.csv and timeline.jsonl of one
    report folder (the two summaries of Locust may be missing)."""
    folder = Path(folder)

    def rows(name):
        path = folder / name
        return list(csv.DictReader(path.open(newline=""))) if path.exists() else []

    return RunData(
        run=json.loads((folder / "run.json").read_text()),
        history=list(csv.DictReader((folder / "locust_stats_history.csv").open(newline=""))),
        totals=rows("locust_stats.csv"),
        failures=rows("locust_failures.csv"),
        timeline=[json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines() if line.strip()],
    )


def num(value):
    """A CSV cell as a float; None for N/A or empty."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class Phases:
    """Absolute times (epoch s) of the run's timetable: load start, hold start, load stop (cool-down
    begins), quiet start, end of the recording."""

    start: float
    hold: float
    stop: float
    quiet: float
    end: float


def run_phases(run: dict) -> Phases:
    """The timetable of run.json's `phases` (durations) from `locust_started`."""
    p, t0 = run["phases"], float(run["locust_started"])
    hold = t0 + p["ramp"]
    stop = hold + p["hold"]
    quiet = stop + p["cooldown"]
    return Phases(start=t0, hold=hold, stop=stop, quiet=quiet, end=quiet + p["quiet"])


@dataclass
class Counts:
    """Locust's request and failure counts of one variant, and its latency percentiles in ms."""

    requests: int
    failures: int
    p50: float | None
    p95: float | None
    p99: float | None


def percentiles(row: dict) -> dict:
    """The p50, p95 and p99 of a Locust CSV row (stats or stats history), None where it has none."""
    return {"p50": num(row.get("50%")), "p95": num(row.get("95%")), "p99": num(row.get("99%"))}


@dataclass
class Sample(Counts):
    """One row of a variant's stats history: requests/s and failures/s over the last window, latency."""

    t: float
    rps: float = 0.0
    fps: float = 0.0


def series(history: list[dict], variant: str, window_s: float = 5.0) -> list[Sample]:
    """The variant's stats history rows.

    Requests/s and failures/s come from the cumulative counts over the last WINDOW_S seconds, not from
    Locust's own "current" columns: those are relative to the last request, so they freeze at their last
    value when the load stops. Percentiles (Locust's last 10 s) are dropped where no request ended then.
    """
    rows = sorted(
        (
            Sample(
                t=num(row["Timestamp"]),
                requests=int(num(row["Total Request Count"]) or 0),
                failures=int(num(row["Total Failure Count"]) or 0),
                **percentiles(row),
            )
            for row in history
            if row.get("Name") == request_name(variant)
        ),
        key=lambda r: r.t,
    )
    j = 0
    last_change = None
    for i, r in enumerate(rows):
        while j < i and r.t - rows[j + 1].t >= window_s:
            j += 1
        span = r.t - rows[j].t
        r.rps = (r.requests - rows[j].requests) / span if span > 0 else 0.0
        r.fps = (r.failures - rows[j].failures) / span if span > 0 else 0.0
        if i == 0 or r.requests != rows[i - 1].requests:
            last_change = r.t
        if last_change is None or r.t - last_change > 10:
            r.p50 = r.p95 = r.p99 = None
    return rows


def chosen_variants(run: dict) -> list[str]:
    names = [v.strip() for v in str(run["variants"]).split(",") if v.strip()]
    return [v for v in VARIANTS if v in names]


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
    for t, pods in snapshots:
        ready.append((t, sum(p["ready"] for p in pods), len(pods)))
        for p in pods:
            name, ended = p["name"], p["lastTerminatedAt"]
            started = p.get("startedAt")
            if started is not None and started not in starts.setdefault(name, []):
                starts[name].append(started)
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
    )


@dataclass(frozen=True)
class RecordedAction:
    """One of the lab's actions during the run (lab.actions): when it was done, on which target, what it
    changed, and when its Deployment had rolled out (None: not within the recording); host clock."""

    index: int
    t: float
    target: str
    what: str
    replicas: int | None
    done: float | None
    error: str | None = None
    rollout: bool = False  # it changed the container's environment or its template's probes: a rollout, new pods


def rolls_out(record: dict) -> bool:
    """An `action` record whose change makes new pods: an environment, or probes set in the template (not in
    the running pods)."""
    return "env" in record or ("probe" in record and not record.get("inPlace"))


def recorded_actions(timeline: list[dict]) -> list[RecordedAction]:
    """The timeline's `action` records, each with the time of its `action-done`; those the API refused
    are left out."""
    done = {r["index"]: r["t"] for r in timeline if r["kind"] == "action-done"}
    return [
        RecordedAction(
            r["index"],
            r["t"],
            r["target"],
            r.get("what", ""),
            r.get("replicas"),
            done.get(r["index"]),
            r.get("error"),
            rollout=rolls_out(r),
        )
        for r in timeline
        if r["kind"] == "action" and not r.get("error")
    ]


def added_by_actions(history: PodHistory, variant: str, actions: list[RecordedAction]) -> list[str]:
    """The pods of VARIANT that came up during the run after an action raised its replicas: the
    scenario's own new pods, not a rollout or a deletion under the run."""
    raised = [a.t for a in actions if a.target == variant and a.replicas]
    if not raised:
        return []
    return [p for p in history.added_during_run if history.first_seen.get(p, 0) >= min(raised) - CLOCK_SLACK_S]


@dataclass
class ProbeEvents:
    """One variant's events during the run, and the liveness failures and kills among them."""

    events: list[dict]  # t, uid, pod, reason, message, count, first, last; by last
    liveness_failures: list[PodTime]  # Unhealthy "Liveness probe failed"
    kills: list["Kill"]  # Killing "failed liveness probe" / "failed startup probe", one per kill the counts tell
    unhealthy: int  # Unhealthy events of any probe
    killing: int


def probe_events(timeline: list[dict], variant: str, phases: Phases, pods: list[str] | None = None) -> ProbeEvents:
    """PODS: the pods the run saw (its snapshots); events of others (a rollout's old pods, gone before
    the run began) are not the run's."""
    records = [
        r
        for r in timeline
        if r["kind"] == "event" and r["variant"] == variant and r["last"] is not None and (pods is None or r["pod"] in pods)
    ]
    events = [r for r in records if r["last"] >= phases.start - CLOCK_SLACK_S]
    failures = sorted({(e["pod"], e["last"]) for e in events if is_liveness_failure(e)}, key=lambda x: x[1])
    return ProbeEvents(
        events=sorted(
            ({k: e.get(k) for k in ("t", "uid", "pod", "reason", "message", "count", "first", "last")} for e in events),
            key=lambda e: e["last"] or 0,
        ),
        liveness_failures=[PodTime(p, t) for p, t in failures],
        kills=[k for k in event_kills(records) if k.t >= phases.start - CLOCK_SLACK_S],
        unhealthy=sum(e["reason"] == "Unhealthy" for e in events),
        killing=sum(e["reason"] == "Killing" for e in events),
    )


def recovery_after(ready: list[tuple[float, int, int]], stop: float) -> float | None:
    """Seconds from load stop until every pod is Ready and stays so to the end of the recording."""
    after = [(t, r, n) for t, r, n in ready if t >= stop]
    for i, (t, _, total) in enumerate(after):
        if total and all(r == n and n for _, r, n in after[i:]):
            return round(max(0.0, t - stop), 1)
    return None


@dataclass
class RequestFigures(Counts):
    """Locust's figures of one variant: totals, percentiles, errors, the median latency during the hold."""

    errors: list[tuple[str, int]]  # (error, occurrences), most frequent first
    hold_median_p50: float | None

    @property
    def failure_ratio(self) -> float:
        return self.failures / self.requests if self.requests else 0.0


def request_figures(data: RunData, variant: str, rows: list[Sample], phases: Phases) -> RequestFigures:
    totals = next((r for r in data.totals if r.get("Name") == request_name(variant)), {})
    hold_p50 = sorted(r.p50 for r in rows if r.p50 is not None and phases.hold + 10 <= r.t <= phases.stop)
    return RequestFigures(
        requests=int(num(totals.get("Request Count")) or max((r.requests for r in rows), default=0)),
        failures=int(num(totals.get("Failure Count")) or max((r.failures for r in rows), default=0)),
        **percentiles(totals),
        errors=sorted(
            ((e.get("Error", ""), int(num(e.get("Occurrences")) or 0)) for e in data.failures if e.get("Name") == request_name(variant)),
            key=lambda x: -x[1],
        ),
        hold_median_p50=hold_p50[len(hold_p50) // 2] if hold_p50 else None,
    )


@dataclass
class VariantAnalysis:
    """Everything the run says of one variant."""

    variant: str
    phases: Phases
    pods: PodHistory
    probes: ProbeEvents
    figures: RequestFigures
    series: list[Sample]
    settings: VariantSettings | None
    recovery_s: float | None
    kills: list[Kill] = field(default_factory=list)  # every kill, each once (counter and events merged)
    counter: dict = field(default_factory=dict)  # pod -> the probe counter's samples, where it was read
    counter_error: str | None = None  # why the counter was not read (None: read, or the timeline has no reading)

    def since_start(self, times) -> float | None:
        return round(min(times) - self.phases.start, 1) if times else None

    @property
    def liveness_kills(self) -> list[PodTime]:
        return [PodTime(k.pod, k.t) for k in self.kills if k.probe == "Liveness"]

    @property
    def liveness_probe(self) -> Probe | None:
        return self.settings.liveness if self.settings else None

    @property
    def first_liveness_failure_s(self):
        return self.since_start([x.t for x in self.probes.liveness_failures])

    @property
    def first_liveness_kill_s(self):
        return self.since_start([x.t for x in self.liveness_kills])

    @property
    def first_restart_s(self):
        return self.since_start([r.t for r in self.pods.restarts])

    def killed_before_started(self) -> tuple[list[PodTime], int] | None:
        """The liveness kills of containers whose startup probe had not passed by the kill, by the kubelet's
        counter (its Startup successes the same in the last sample before the container started and the first
        after the kill; the same pod), and how many liveness kills of containers started during the recording
        were judged so. A container started before the recording passed its startup probe before the load
        (the lab starts on Ready pods) and is not counted. None where the counter was not read. A correct
        kubelet runs no liveness probe before the startup probe passes, so such a kill is kubernetes#141155's
        (docs/kubernetes-versions.md)."""
        if not self.counter:
            return None
        early, judged = [], 0
        for kill in self.liveness_kills:
            rows = self.counter.get(kill.pod) or []
            began = [s for s in self.pods.starts.get(kill.pod, []) if s <= kill.t + CLOCK_SLACK_S]
            if not began or began[-1] < self.pods.first_seen.get(kill.pod, self.phases.start):
                continue
            before = [c for t, c in rows if t <= began[-1]]
            after = [c for t, c in rows if t >= kill.t]
            if not before or not after or "Startup" not in before[-1] or "Startup" not in after[0]:
                continue
            b, a = before[-1]["Startup"], after[0]["Startup"]
            if b.get("uid") != a.get("uid"):
                continue
            judged += 1
            if a.get("successful", 0) == b.get("successful", 0):
                early.append(kill)
        return early, judged

    @property
    def pending_kills(self) -> list[Kill]:
        """Kills whose restart the recording has not seen (yet)."""
        ended = {id(r.kill) for r in self.pods.restarts if r.kill is not None}
        return [k for k in self.kills if id(k) not in ended]

    def countdown(self) -> list[countdown.Marker]:
        """The liveness failures and kills with their countdown ("2/3"), and the failures its kills imply
        that no event reported (base/countdown.py), from the events as the recorder saw each update and the
        liveness probe run.json recorded (none: no numbers, nothing inferred)."""
        probe = self.liveness_probe
        events = sorted(self.probes.events, key=lambda e: e["t"])
        occurrences = countdown.EventReader().read(events, lambda pod: probe)
        return countdown.countdown(occurrences, [(r.pod, r.t) for r in self.pods.restarts], lambda pod: probe)

    def liveness_failures(self, start: float | None = None, end: float | None = None) -> tuple[int, str]:
        """Liveness probes that failed between START and END (the run's load start and end by default), and
        where the number comes from: the kubelet's counter when it was read for every pod, else the events
        with the failures the kills imply (the countdown's unreported ones)."""
        start = self.phases.start if start is None else start
        end = self.phases.end if end is None else end
        if self.counter and all(pod in self.counter for pod in self.pods.pods):
            counted = [counter_failed(self.counter[pod], "Liveness", start, end) for pod in self.pods.pods]
            if all(n is not None for n in counted):
                return sum(counted), "the kubelet's probe counter"
        marks = [m for m in self.countdown() if m.kind in ("failure", "unreported") and start - CLOCK_SLACK_S <= m.t <= end]
        return len(marks) + sum(m.hidden for m in marks), "the kubelet's events, with the failures each kill implies"

    def kill_checks(self) -> list[dict]:
        """Per liveness kill the counter saw, its failures in a row against the threshold and the countdown's
        kill of the same container (the e2e's and the report's check that the two agree)."""
        probe = self.liveness_probe
        marks = [m for m in self.countdown() if m.kind == "kill"]
        out = []
        for k in self.kills:
            if k.probe != "Liveness" or k.failures is None:
                continue
            since = min(k.since or k.t, k.t)
            near = [m for m in marks if m.pod == k.pod and since - 2 * CLOCK_SLACK_S <= m.t <= k.t + CLOCK_SLACK_S]
            m = near[-1] if near else None
            out.append(
                {
                    "pod": k.pod,
                    "t": k.t,
                    "counterFailures": k.failures,
                    "threshold": probe.failure_threshold if probe else None,
                    "countdown": None if m is None else f"{m.label}, {m.threshold - len(m.unreported)} reported by events",
                    "agree": m is not None and probe is not None and k.failures == probe.failure_threshold,
                }
            )
        return out

    def probe_durations(self, probe_type: str = "Liveness") -> dict | None:
        """The kubelet's own durations of PROBE_TYPE's successful (and unknown) results during the load, from
        its histogram's sum and count between the counter's samples (a second apart, a probe period at
        most one result): how many, their mean, and the slowest; failed results have none (the kubelet
        observes no duration for them: they are the ones that hit the timeout). None without samples."""
        durations = []
        for rows in self.counter.values():
            inside = [c.get(probe_type, {}) for t, c in rows if self.phases.start <= t <= self.phases.stop]
            for b, c in zip(inside, inside[1:], strict=False):
                n = c.get("timed", 0) - b.get("timed", 0)
                if n > 0 and c.get("uid") == b.get("uid"):
                    durations.append((c.get("seconds", 0.0) - b.get("seconds", 0.0)) / n)
        if not durations:
            return None
        return {"count": len(durations), "mean": sum(durations) / len(durations), "slowest": max(durations)}

    def to_json(self) -> dict:
        """verdict.json's figures of this variant."""
        f = self.figures
        failures, source = self.liveness_failures()
        return {
            "variant": self.variant,
            "pods": self.pods.pods,
            "podsAddedDuringRun": self.pods.added_during_run,
            "restarts": [r.to_json() for r in self.pods.restarts],
            "restartsByPod": self.pods.restarts_by_pod,
            "evicted": self.pods.evicted,
            "livenessFailureEvents": [{"pod": x.pod, "t": x.t} for x in self.probes.liveness_failures],
            "livenessFailures": failures,
            "livenessFailuresFrom": source,
            "unhealthy": self.probes.unhealthy,
            "killing": self.probes.killing,
            "kills": [k.to_json() for k in self.kills],
            "killChecks": self.kill_checks(),
            "probeCounter": "read" if self.counter else (self.counter_error or "not recorded"),
            "livenessDurations": self.probe_durations(),
            "firstLivenessFailureS": self.first_liveness_failure_s,
            "firstLivenessKillS": self.first_liveness_kill_s,
            "firstRestartS": self.first_restart_s,
            "recoveryS": self.recovery_s,
            "requests": f.requests,
            "failures": f.failures,
            "failureRatio": f.failure_ratio,
            "p50": f.p50,
            "p95": f.p95,
            "p99": f.p99,
            "errors": f.errors,
            "holdMedianP50": f.hold_median_p50,
        }


def thresholds(settings: VariantSettings | None) -> dict[str, int]:
    """The failure threshold of each probe that kills (liveness and startup), by the kubelet's probe type."""
    probes = {"Liveness": settings.liveness, "Startup": settings.startup} if settings else {}
    return {kind: p.failure_threshold for kind, p in probes.items() if p}


def analyze_variant(variant: str, data: RunData, phases: Phases, settings: VariantSettings | None = None) -> VariantAnalysis:
    pods = pod_history(data.timeline, variant)
    probes = probe_events(data.timeline, variant, phases, pods.pods if pods.pods else None)
    rows = counter_rows(data.timeline, pods.pods)
    counted = [k for pod, r in rows.items() for k in counter_kills(pod, r, thresholds(settings)) if k.t >= phases.start - CLOCK_SLACK_S]

    def covered(pod, since, until):
        r = rows.get(pod)
        begins = max(since, phases.start, pods.first_seen.get(pod, phases.start))
        return bool(r) and r[0][0] <= begins + CLOCK_SLACK_S and r[-1][0] >= until - CLOCK_SLACK_S

    kills = attribute_restarts(pods.restarts, probes.kills, counted, covered, phases.start)
    series_rows = series(data.history, variant)
    error = next((r["message"] for r in data.timeline if r["kind"] == "error" and r.get("what") == "probes"), None)
    return VariantAnalysis(
        variant=variant,
        phases=phases,
        pods=pods,
        probes=probes,
        figures=request_figures(data, variant, series_rows, phases),
        series=series_rows,
        settings=settings,
        recovery_s=recovery_after(pods.ready, phases.stop),
        kills=kills,
        counter=rows,
        counter_error=error,
    )


@dataclass
class ServedLoad:
    """One variant's load as its own pods counted it (the recorder's ``metrics`` samples), against what
    Locust offered it."""

    variant: str
    offered: int  # Locust's requests to the variant, failed ones included
    allowance: int  # load_allowance: what the pods may count beyond `offered` on their own
    served: int | None  # requests the pods finished over the recording; None: no pod was ever read
    samples: int  # answered scrapes
    missed: dict[str, int]  # pod -> scrapes it did not answer
    resets: dict[str, int]  # pod -> counter restarts from 0 (its container restarted)
    before_start_in_flight: int  # most requests in flight in one sample before Locust started
    before_start_served: int  # requests finished between the samples before Locust started

    @property
    def ratio(self) -> float | None:
        return None if self.served is None or not self.offered else self.served / self.offered

    @property
    def extra(self) -> bool:
        """More served than offered, beyond the allowance: someone else was sending requests."""
        return self.served is not None and self.served > self.offered + self.allowance

    @property
    def busy_before(self) -> bool:
        return self.before_start_in_flight > 0 or self.before_start_served > 0

    def describe(self) -> str:
        """The served-vs-offered figure: "3,702 / 3,720 (100 %)"."""
        if self.served is None:
            return f"not read / {self.offered:,}"
        ratio = f" ({self.ratio:.0%})" if self.ratio is not None else ""
        return f"{self.served:,} / {self.offered:,}{ratio}"

    def to_json(self) -> dict:
        return {
            "served": self.served,
            "offered": self.offered,
            "allowance": self.allowance,
            "samples": self.samples,
            "missed": self.missed,
            "resets": self.resets,
            "beforeStartInFlight": self.before_start_in_flight,
            "beforeStartServed": self.before_start_served,
            "extra": self.extra,
            "busyBefore": self.busy_before,
        }


def load_allowance(offered: int, users: int) -> int:
    """How many requests beyond OFFERED a variant's pods may count with no other load (see EXTRA_PER_USER)."""
    return users * EXTRA_PER_USER + math.ceil(offered * EXTRA_SHARE)


def records_metrics(timeline: list[dict]) -> bool:
    """The timeline samples the service's own counters: its start says so, or a `metrics` record is in it."""
    return any(r["kind"] == "metrics" or (r["kind"] == "start" and r.get("metrics")) for r in timeline)


def served_load(timeline: list[dict], variant: str, start: float, offered: int, users: int) -> ServedLoad:
    """Requests the variant's pods served over the recording: per pod, the sum of the increases of its
    counter between answered scrapes; a counter that went down, or a restart count that went up, started
    again from 0 with the new container, so its whole value is the increase. A pod first seen after the
    first sample came up during the run and counts from 0. Before START (Locust's start) the pods must be
    idle: nothing in flight, nothing finished between two samples."""
    samples = [r for r in timeline if r["kind"] == "metrics"]
    first_pods = set(samples[0]["pods"]) | set(samples[0].get("missed", {})) if samples else set()
    last, served, answered, missed, resets = {}, {}, 0, {}, {}
    in_flight_before = served_before = 0
    for r in samples:
        for pod, m in r.get("missed", {}).items():
            if m["variant"] == variant:
                missed[pod] = missed.get(pod, 0) + 1
        for pod, m in sorted(r["pods"].items()):
            if m["variant"] != variant or "served" not in m:
                continue
            answered += 1
            before_start = m["t"] < start
            if before_start:
                in_flight_before = max(in_flight_before, m.get("inFlight", 0))
            prev = last.get(pod)
            if prev is None:
                # The first answer: a pod there from the start counts from here, a newer one from 0.
                served[pod] = 0 if pod in first_pods else m["served"]
            elif m["served"] < prev["served"] or m["restarts"] > prev["restarts"]:
                served[pod] += m["served"]
                resets[pod] = resets.get(pod, 0) + 1
            else:
                served[pod] += m["served"] - prev["served"]
                if before_start:
                    served_before += m["served"] - prev["served"]
            last[pod] = m
    return ServedLoad(
        variant=variant,
        offered=offered,
        allowance=load_allowance(offered, users),
        served=sum(served.values()) if served else None,
        samples=answered,
        missed=missed,
        resets=resets,
        before_start_in_flight=in_flight_before,
        before_start_served=served_before,
    )


def load_findings(loads: dict[str, ServedLoad]) -> tuple[list[str], list[str]]:
    """What the served-vs-offered comparison says: (disturbances, notes)."""
    disturbed, notes = [], []
    for v, x in loads.items():
        if x.served is None:
            disturbed.append(
                f"{v}: its pods' own request count was never read: the load they saw cannot be compared with what this run offered"
            )
            continue
        if x.busy_before:
            disturbed.append(
                f"{v}: already busy before the swarm started ({x.before_start_in_flight} request(s) in flight, "
                f"{x.before_start_served} served during the baseline): something else is sending it requests"
            )
        if x.extra:
            disturbed.append(
                f"{v}: its pods served {x.served:,} requests, the run offered {x.offered:,} "
                f"(allowed up to {x.offered + x.allowance:,}): another load generator swarmed it too"
            )
        if x.missed:
            total = sum(x.missed.values())
            pods = ", ".join(f"{p} {n}" for p, n in sorted(x.missed.items()))
            notes.append(
                f"{v}: {total} of {total + x.samples} scrapes of its pods' counters unanswered ({pods}): a saturated or restarting "
                "pod does not answer; requests a pod finished after its last answer before a restart are not counted, so "
                f"{x.served:,} served is a lower bound"
            )
        if x.resets:
            notes.append(
                f"{v}: counters started again from 0 after a container restart "
                f"({', '.join(f'{p} {n}x' for p, n in sorted(x.resets.items()))}); added up"
            )
    return disturbed, notes


@dataclass(frozen=True)
class KillWindow:
    """When the first liveness kill may come, in seconds after the load start (or after an action)."""

    earliest_s: float  # (F-1)*P + T
    latest_s: float  # F*P + T
    early_slack_s: float
    late_slack_s: float
    probe: Probe

    @property
    def low(self) -> float:
        return self.earliest_s - self.early_slack_s

    @property
    def high(self) -> float:
        return self.latest_s + self.late_slack_s

    def contains(self, seconds: float) -> bool:
        return self.low <= seconds <= self.high

    def describe(self) -> str:
        p = self.probe
        return (
            f"{self.low:.0f}-{self.high:.0f} s: (F-1)*P+T {self.earliest_s:.0f} s to F*P+T {self.latest_s:.0f} s "
            f"(P {p.period_s:g} s, T {p.timeout_s:g} s, F {p.failure_threshold}), slack {self.early_slack_s:.0f} s early, "
            f"{self.late_slack_s:.0f} s late"
        )


def kill_window(probe: Probe, run: dict, settings: VariantSettings | None = None, from_action: bool = False) -> KillWindow:
    """The window of the first liveness kill, in seconds after the load start; FROM_ACTION: after an action
    that makes every check fail at once (a downstream gone). The one computation of it (the chart's
    NOTES.txt prints the same (F-1)P+T to FP+T, held equal by chart/tests/notes_test.yaml's cases).

    docs/sources.md, "Kubelet probes": once every probe fails, the kubelet decides the kill between
    (F-1)*P + T and F*P + T later (F failureThreshold, P periodSeconds, T timeoutSeconds of the liveness
    probe): where in its period the probe clock stands when the failing starts is unknown, hence the width P.
    It is timed from the load start, not from the first failed probe: that failure is already T into the
    window and its kill comes exactly (F-1)*P after it, so timing from it would test nothing. The load
    start comes a little before saturation, so the window gets a slack: CLOCK_SLACK_S early (event times
    are whole seconds), and late CLOCK_SLACK_S plus the time the ramp takes to put one request on each
    event loop (users start evenly over the ramp, each with one request in flight at most; the whole ramp
    when the event-loop count is not known). On Tomcat (the settings' Tomcat threads, a servlet variant) a
    probe waits its turn in the pool's FIFO queue: it times out once more than threads x T / L requests
    wait ahead of it, so saturation comes with threads x (1 + T / L) users in flight. After an action the
    early slack is T longer, because a check that fails at once (503 in milliseconds) does not wait out T.
    """
    p, t, f = probe.period_s, probe.timeout_s, probe.failure_threshold
    if from_action:
        return KillWindow((f - 1) * p + t, f * p + t, CLOCK_SLACK_S + t, CLOCK_SLACK_S, probe)
    ramp, users = float(run["phases"]["ramp"]), int(run["users_per_variant"])
    threads = settings.tomcat_threads if settings else None
    if threads:
        latency_s = requested_latency_ms(run) / 1000
        saturating = threads * (1 + t / latency_s) if latency_s > 0 else None
    else:
        saturating = settings.event_loops if settings else None
    # The ramp starts users evenly; the loops (or threads) are all held once there are that many users.
    to_saturation = ramp if not saturating else ramp * min(1.0, saturating / users)
    return KillWindow((f - 1) * p + t, f * p + t, CLOCK_SLACK_S, CLOCK_SLACK_S + to_saturation, probe)


def variant_kill_window(a: VariantAnalysis, run: dict) -> KillWindow | None:
    """kill_window of the variant's recorded liveness probe, None without one."""
    return kill_window(a.liveness_probe, run, a.settings) if a.liveness_probe else None


# --- measures of one variant that the predictions name (the lab's keys; base/scenario.py lists them) ---

# How Locust's FastHttpUser names an answer with status 429 in its failures.
SHED_ERROR = re.compile(r"\bcode=429\b")


def shed(a: VariantAnalysis) -> int:
    """Requests the variant answered 429 (demo.max-in-flight's load shedding)."""
    return sum(n for error, n in a.figures.errors if SHED_ERROR.search(error))


def hold_throughput(a: VariantAnalysis) -> float | None:
    """Median requests/s of the variant during the hold, its first 10 s left out (as for latency); None
    without a sample there."""
    ph = a.phases
    rps = sorted(s.rps for s in a.series if ph.hold + 10 <= s.t <= ph.stop)
    return rps[len(rps) // 2] if rps else None


def not_ready_during_load(a: VariantAnalysis) -> list[float]:
    """Seconds after the load start at which some pod of the variant was not Ready, load to quiet."""
    ph = a.phases
    return [round(t - ph.start, 1) for t, ready, total in a.pods.ready if ph.start <= t <= ph.quiet and ready < total]


def during_load(a: VariantAnalysis) -> list[tuple[float, int, int]]:
    """The variant's (t, Ready, pods) snapshots from the load start to the load stop, the state at the load
    start first (the last snapshot before it, moved to it): a snapshot holds until the next one."""
    ph = a.phases
    before = [x for x in a.pods.ready if x[0] < ph.start]
    inside = [x for x in a.pods.ready if ph.start <= x[0] <= ph.stop]
    return ([(ph.start, *before[-1][1:])] if before else []) + inside


def ready_share(a: VariantAnalysis) -> float | None:
    """Percent of the variant's pod-seconds Ready during the load, each snapshot weighted by the time to
    the next one; None without snapshots."""
    snaps = during_load(a)
    if not snaps:
        return None
    ready = total = 0.0
    for (t, r, n), nxt in zip(snaps, [*snaps[1:], (a.phases.stop, 0, 0)], strict=True):
        ready += r * (nxt[0] - t)
        total += n * (nxt[0] - t)
    return round(100 * ready / total, 1) if total > 0 else None


def longest_not_ready(a: VariantAnalysis) -> float | None:
    """The longest stretch in seconds, during the load, in which the variant had no Ready pod (its Service no
    endpoint); None without snapshots."""
    snaps = during_load(a)
    if not snaps:
        return None
    longest, since = 0.0, None
    for t, r, _ in [*snaps, (a.phases.stop, 1, 1)]:
        if r == 0 and since is None:
            since = t
        elif r > 0 and since is not None:
            longest, since = max(longest, t - since), None
    return round(longest, 1)


def longest_restart_wait(a: VariantAnalysis) -> float | None:
    """The longest of the variant's restart waits (PodHistory.waits); None when no restart was seen with both
    times."""
    return max(a.pods.waits) if a.pods.waits else None


def first_kill_after_action(a: VariantAnalysis, actions: list[RecordedAction]) -> float | None:
    """Seconds from the first action to the variant's first liveness kill after it; None without either."""
    if not actions:
        return None
    start = actions[0].t
    kills = [k.t for k in a.liveness_kills if k.t >= start - CLOCK_SLACK_S]
    return round(min(kills) - start, 1) if kills else None


def recovery_after_actions(a: VariantAnalysis, actions: list[RecordedAction]) -> float | None:
    """Seconds from the last action's rollout done until every pod of the variant is Ready and stays so to
    the end of the recording; None when that never happens (or nothing was rolled out)."""
    if not actions or actions[-1].done is None:
        return None
    return recovery_after(a.pods.ready, actions[-1].done)


def kills_after_actions(a: VariantAnalysis, actions: list[RecordedAction]) -> int | None:
    """The variant's liveness kills after the last action was done (rolled out, or taken in place); None
    when it never was within the recording."""
    if not actions or actions[-1].done is None:
        return None
    return sum(1 for k in a.liveness_kills if k.t > actions[-1].done + CLOCK_SLACK_S)


def added_pods(a: VariantAnalysis, actions: list[RecordedAction]) -> list[str] | None:
    """The pods an action added to the variant; None when no action raised its replicas."""
    if not any(x.target == a.variant and x.replicas for x in actions):
        return None
    return added_by_actions(a.pods, a.variant, actions)


def first_kills_spread(a: VariantAnalysis) -> float | None:
    """Seconds from the variant's first liveness kill to the first liveness kill of the last of its pods to
    be killed (0 with one pod killed); None without a liveness kill."""
    first: dict[str, float] = {}
    for k in a.liveness_kills:
        first[k.pod] = min(first.get(k.pod, k.t), k.t)
    return round(max(first.values()) - min(first.values()), 1) if first else None


def first_end(a: VariantAnalysis) -> tuple[str, float, str] | None:
    """The variant's first container to end: (pod, t, cause), cause a key of CAUSES; t the kill's time where a
    kill ended it (as gc_before_kills measures kills), else the container's own end (finishedAt). A kill
    whose restart the recording has not seen counts too. None: no container ended."""
    ends = [(r.kill.t if r.kill is not None else r.t, r.pod, r.cause) for r in a.pods.restarts]
    ends += [(k.t, k.pod, "liveness" if k.probe == "Liveness" else "startup") for k in a.pending_kills]
    if not ends:
        return None
    t, pod, cause = min(ends)
    return pod, t, cause


def throttled_pct(a: VariantAnalysis, throttled: dict[str, float]) -> float | None:
    """Percent of CFS periods throttled over the run (or, given CpuCheck.throttled_peak, in the most
    throttled interval), the variant's most throttled pod; None when the recorder could not read the
    kubelet's counters."""
    found = [share for pod, share in throttled.items() if pod in a.pods.pods]
    return round(100 * max(found), 1) if found else None


@dataclass
class CpuCheck:
    """The CPU during the run. Only the machine's busy share (``machine_warnings``: the node's CPU, which no
    prediction is about) can make a run say nothing; the spared variants' own throttling, probe failures and
    slow answers (``signs``) are outcomes of the run, shown beside it and judged by its predictions, never a
    reason to void it: a reactive pod killed for liveness on a machine under the line is a claim that failed,
    not one that cannot be told."""

    notes: list[str]
    signs: list[str]
    throttled: dict[str, float]
    machine_warnings: list[str] = field(default_factory=list)
    throttled_peak: dict[str, float] = field(default_factory=dict)  # per pod, its most throttled interval's share
    busy_mean: float | None = None  # the machine's CPU busy share on average during the hold; None unread

    @property
    def starved(self) -> bool:
        """The machine was busy over the line: what happened may be its doing, not the variants'."""
        return bool(self.machine_warnings)


def throttle_intervals(throttles: list[dict]):
    """(pod, periods throttled, periods) of each pod between each two consecutive samples; a restarted
    container starts its counters again from 0, so the interval then counts the new container from its
    start."""
    for before, after in zip(throttles, throttles[1:], strict=False):
        for pod, m in after["pods"].items():
            prev = before["pods"].get(pod, {})
            hits, periods = (
                cur - old if cur >= old else cur
                for cur, old in (
                    (m.get(key, 0.0), prev.get(key, 0.0))
                    for key in ("container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total")
                )
            )
            yield pod, hits, periods


def throttled_share(throttles: list[dict]) -> dict[str, float]:
    """Per pod, the share of CFS periods throttled, summed over consecutive samples."""
    hits, periods = {}, {}
    for pod, h, n in throttle_intervals(throttles):
        hits[pod], periods[pod] = hits.get(pod, 0.0) + h, periods.get(pod, 0.0) + n
    return {pod: hits[pod] / n for pod, n in periods.items() if n > 0}


def throttled_peak(throttles: list[dict]) -> dict[str, float]:
    """Per pod, the share of CFS periods throttled in its most throttled interval between two consecutive
    samples in which it ran at least PEAK_MIN_PERIODS periods: a JVM starved while it warms up, though
    throttled in few periods once warm."""
    peak: dict[str, float] = {}
    for pod, h, n in throttle_intervals(throttles):
        if n >= PEAK_MIN_PERIODS:
            peak[pod] = max(peak.get(pod, 0.0), h / n)
    return peak


def cpu_check(data: RunData, phases: Phases, analyses: dict[str, VariantAnalysis], latency_ms: float) -> CpuCheck:
    timeline = data.timeline
    busy = [r["busy"] for r in timeline if r["kind"] == "cpu" and phases.hold <= r["t"] <= phases.stop]
    throttles = [r for r in timeline if r["kind"] == "throttle"]
    throttle_error = next((r["message"] for r in timeline if r["kind"] == "error" and r.get("what") == "throttle"), None)
    notes, machine, signs, mean = [], [], [], None
    if busy:
        mean, peak = sum(busy) / len(busy), max(busy)
        source = next((r.get("source") for r in timeline if r["kind"] == "cpu" and r.get("source")), "/proc/stat")
        notes.append(f"machine CPU busy during the hold: mean {mean:.0%}, peak {peak:.0%} ({len(busy)} samples, {source})")
        if mean >= BUSY_WARN:
            machine.append(f"the machine's CPU was {mean:.0%} busy on average during the hold (the line: {BUSY_WARN:.0%})")
    else:
        why = next((r["message"] for r in timeline if r["kind"] == "error" and r.get("what") == "cpu"), None)
        notes.append(f"machine CPU: no samples{f' ({why})' if why else ''}")
    throttled, peak = {}, {}
    kernel = cgroups.throttled_share(timeline)
    if kernel:
        # The kernel's counters every second: the most throttled 15 s found exactly (report.cgroups).
        throttled, peak = kernel, cgroups.throttled_peak(timeline, PEAK_MIN_PERIODS)
        notes.append(
            f"CFS throttling per pod over the run ({cgroups.SOURCE}): " + ", ".join(f"{p} {r:.0%}" for p, r in sorted(throttled.items()))
        )
    elif len(throttles) >= 2:
        throttled, peak = throttled_share(throttles), throttled_peak(throttles)
        notes.append(
            "CFS throttling per pod over the run: " + (", ".join(f"{p} {r:.0%}" for p, r in sorted(throttled.items())) or "no data")
        )
    elif throttle_error:
        notes.append(f"CFS throttling: not readable ({throttle_error})")
    for v, spared in analyses.items():
        if mode_of(v) not in NON_BLOCKING_MODES:
            continue
        for pod in spared.pods.pods:
            if throttled.get(pod, 0) >= THROTTLE_WARN:
                signs.append(f"{v} pod {pod} was CPU-throttled in {throttled[pod]:.0%} of its periods")
        if spared.probes.unhealthy:
            signs.append(f"{v} pods failed {spared.probes.unhealthy} probe(s), though they never hold a serving thread while they wait")
        p50 = spared.figures.hold_median_p50
        if p50 is not None:
            notes.append(f"{v} median latency during the hold: {p50:.0f} ms for {latency_ms:.0f} ms requested")
            if p50 > LATENCY_WARN_FACTOR * latency_ms:
                signs.append(
                    f"{v} median latency {p50:.0f} ms is over {LATENCY_WARN_FACTOR}x the requested {latency_ms:.0f} ms: the pod was slow"
                )
    return CpuCheck(notes, signs, throttled, machine, peak, mean)


def made_by_actions(history: PodHistory, variant: str, actions: list[RecordedAction]) -> list[str]:
    """The pods of VARIANT that came up during the run after an action made pods of it: a scale-out's, or
    a rollout's (an action that changed its container's environment). The scenario's own."""
    made = [a.t for a in actions if a.target == variant and (a.replicas or a.rollout)]
    if not made:
        return []
    return [p for p in history.added_during_run if history.first_seen.get(p, 0) >= min(made) - CLOCK_SLACK_S]


def disturbances(analyses: dict[str, VariantAnalysis], api_errors: int, actions: list[RecordedAction] | None = None) -> list[str]:
    """Why the run says nothing about the claim, if it does not. Pods an action of the lab made (a
    scale-out, a rollout) are the run's own."""
    found = []
    for v, a in analyses.items():
        others = sorted(set(a.pods.added_during_run) - set(made_by_actions(a.pods, v, actions or [])))
        if others:
            found.append(f"{v}: pods created during the run ({', '.join(others)}): a rollout or a deletion, not the load")
    if api_errors >= API_ERRORS_DISTURBED:
        found.append(f"the Kubernetes API did not answer {api_errors} times during the recording: the cluster went away or was overloaded")
    return found


@dataclass
class RunFacts:
    """The facts of one recorded run: per variant its analysis, and what holds for the whole run."""

    run: dict
    phases: Phases
    analyses: dict[str, VariantAnalysis]
    kill_windows: dict[str, KillWindow]
    cpu: CpuCheck
    api_errors: int
    actions: list[RecordedAction]
    disturbances: list[str]  # why the run says nothing, if it does not
    notes: list[str]  # what was not measured, and why
    # Served vs offered per variant; empty for a timeline without the service's counters (records_metrics).
    loads: dict[str, ServedLoad] = field(default_factory=dict)
    load_notes: list[str] = field(default_factory=list)
    clocks: clock.ClockCheck | None = None
    # The virtual-thread scheduler per variant that runs on virtual threads, over the load (report.scheduler).
    schedulers: dict[str, Scheduler] = field(default_factory=dict)
    # Per variant with liveness kills, the collector's pauses before each (report.gc).
    gc: dict[str, list[GcBeforeKill]] = field(default_factory=dict)
    # Per variant with a container that ended, the collector's pauses before the first to end (report.gc).
    gc_first: dict[str, GcBeforeKill] = field(default_factory=dict)
    # Per variant, its fullest old generation after a major collection (report.gc), where recorded.
    heaps: dict[str, HeapHigh] = field(default_factory=dict)

    @property
    def cannot_tell(self) -> list[str]:
        """Why the run says nothing either way, from evidence no prediction is about: the disturbances (pods
        replaced under it by something else, the API gone, the clocks apart, load it did not offer) and
        the machine busy over the line. A variant's own restarts, probe failures, throttling or latency are
        never here: they are what the predictions judge. The demo's verdict and the lab's judge read this one list."""
        return self.disturbances + [f"the machine busy: {w}" for w in self.cpu.machine_warnings]


def gc_window(a: VariantAnalysis) -> float:
    """How far before a kill its GC pauses count: the seconds the kubelet counts its failures in (period x
    threshold, the chart's 5 x 3)."""
    probe = a.liveness_probe
    return probe.period_s * probe.failure_threshold if probe else 15.0


def gc_before_first_end(timeline: list[dict], a: VariantAnalysis) -> GcBeforeKill:
    """The collector's pauses before the variant's first container to end (first_end), killed or not."""
    pod, t, cause = first_end(a)
    return replace(gc_before_kills(timeline, a.variant, [(pod, t)], gc_window(a))[0], ended=cause)


def run_facts(data: RunData) -> RunFacts:
    """The facts of DATA, every cluster time moved to the host's clock first."""
    clocks = clock.check(data.timeline, CLOCK_SLACK_S)
    data = replace(data, timeline=clock.to_host_clock(data.timeline, clocks.offset))
    run = data.run
    phases = run_phases(run)
    settings = run_settings(run) or {}
    analyses = {v: analyze_variant(v, data, phases, settings.get(v)) for v in chosen_variants(run)}
    api_errors = sum(1 for r in data.timeline if r["kind"] == "error" and r.get("what") == "api")
    actions = recorded_actions(data.timeline)
    disturbed, notes = disturbances(analyses, api_errors, actions), []
    if clocks.start or clocks.end:
        notes.append(clocks.describe())
    if not clocks.steady:
        disturbed.append(
            f"the cluster's clock moved {clocks.drift:.1f} s against the host's during the run "
            f"(start {clocks.start.offset:+.1f} s, end {clocks.end.offset:+.1f} s; more than the {clocks.slack:.0f} s slack): "
            "no event can be placed on the run's timetable (Docker Desktop's VM clock drifts after the machine sleeps)"
        )
    loads, load_notes = {}, []
    if records_metrics(data.timeline):
        users = int(run["users_per_variant"])
        loads = {v: served_load(data.timeline, v, phases.start, a.figures.requests, users) for v, a in analyses.items()}
        more, load_notes = load_findings(loads)
        disturbed += more
    else:
        load_notes = [
            "the timeline has no reading of the service's own counters (the recorder did not scrape them): the load the "
            "variants saw is not compared with what Locust offered"
        ]
    probes_error = next((r["message"] for r in data.timeline if r["kind"] == "error" and r.get("what") == "probes"), None)
    if probes_error:
        notes.append(f"the kubelet's probe counter was not read ({probes_error}): kills and failures from the events only")
    return RunFacts(
        run=run,
        phases=phases,
        analyses=analyses,
        kill_windows={v: w for v, a in analyses.items() if (w := variant_kill_window(a, run))},
        cpu=cpu_check(data, phases, analyses, requested_latency_ms(run)),
        api_errors=api_errors,
        actions=actions,
        disturbances=disturbed,
        notes=notes,
        loads=loads,
        load_notes=load_notes,
        clocks=clocks,
        schedulers={v: x for v, x in schedulers(data.timeline, phases.start, phases.stop).items() if v in analyses},
        gc={
            v: gc_before_kills(data.timeline, v, [(k.pod, k.t) for k in a.liveness_kills], gc_window(a))
            for v, a in analyses.items()
            if a.liveness_kills
        },
        gc_first={v: gc_before_first_end(data.timeline, a) for v, a in analyses.items() if first_end(a)},
        heaps={v: h for v in analyses if (h := fullest_heap(data.timeline, v)) is not None},
    )
