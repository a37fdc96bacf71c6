"""Judges a scripted run: from the run parameters, Locust's stats history and the recorder's timeline,
the figures per variant and the verdict on the claim.

The claim (issue 5; issue 38 on Tomcat): under the same load every pod of a variant whose serving
threads block (blocking: an event loop; servlet: Tomcat's worker threads) is restarted, each restart
preceded by liveness probe failures (not OOMKilled, not evicted), the first kill on time for the run's
probe settings; every pod of a variant that never holds a serving thread while it waits (reactive,
servlet-async, servlet-virtual) has no restart and no `Unhealthy` event, and its requests have no failure.
Offloaded and virtual are reported as they fall; no verdict is invented for them. The verdict is PASS,
FAIL, or INCONCLUSIVE: no variant of either side was in the run, pods were replaced during it
(someone rolled the Deployments out or deleted pods), the Kubernetes API stopped answering (the
cluster went away), or the variants carried load this run did not offer.

The load a variant saw is its own pods' count of the requests they served (the recorder's ``metrics``
samples), compared with the requests Locust offered it: more than Locust offered (beyond
``load_allowance``), or requests in flight or served before Locust started, means something else was
swarming the variants (the in-cluster Locust, a second run), and no verdict is given over load the run
did not offer. A variant whose count was never read cannot be checked, which is no verdict either; a
timeline recorded before the recorder read the counts gets a note instead.

The first kill is timed against run.json's probe settings (settings.kill_window: the window and its
slack); a run recorded before run.json held them gets no timing check, and the report says so.

Every time is judged on the host's clock: the recorder measures the cluster's clock against it at the
start and the end (report.clock), and the times the cluster stamped (events, a container's finishedAt)
are moved by that offset first. When the offset moved by more than the slack during the run (Docker
Desktop's VM after the Mac slept), no time can be trusted: INCONCLUSIVE, naming the offsets.
"""

import csv
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from liveness_lab.base import DEFAULT_LATENCY_MS
from liveness_lab.base.kube import is_liveness_failure, is_liveness_kill
from liveness_lab.base.variants import VARIANTS, mode_of, request_name

from . import clock
from .settings import CLOCK_SLACK_S, KillWindow, VariantSettings, kill_window, run_settings

# CPU starvation hints: the machine this busy during the hold, or the reactive pods throttled this often.
BUSY_WARN = 0.90
THROTTLE_WARN = 0.25
# This many failed reads of the API (about one a second) and the timeline has holes: no verdict.
API_ERRORS_DISTURBED = 5
# The reactive median may exceed the requested latency by this factor before we call it starved.
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
KILLED_MODES = ("blocking", "servlet")
SPARED_MODES = ("reactive", "servlet-async", "servlet-virtual")
EXIT_CODES = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}


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


@dataclass
class Restart:
    pod: str
    t: float
    reason: str | None
    exit_code: int | None
    attribution: str | None = None  # why it counts as a liveness restart; None: it does not

    @property
    def after_liveness_failure(self) -> bool:
        return self.attribution is not None


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


def pod_history(timeline: list[dict], variant: str) -> PodHistory:
    """Restarts: a pod's restart count going up between two snapshots. Its time is the container's
    finishedAt when the API gave one, else the snapshot's."""
    snapshots = [(r["t"], [p for p in r["pods"] if p["variant"] == variant]) for r in timeline if r["kind"] == "pods"]
    baseline, last_count, restarts, evicted, ready, first_seen = {}, {}, [], set(), [], {}
    for t, pods in snapshots:
        ready.append((t, sum(p["ready"] for p in pods), len(pods)))
        for p in pods:
            name = p["name"]
            if p.get("reason") == "Evicted":
                evicted.add(name)
            if name not in last_count:
                baseline[name] = last_count[name] = p["restarts"]
                first_seen[name] = t
                continue
            if p["restarts"] > last_count[name]:
                at = p["lastTerminatedAt"] if p["lastTerminatedAt"] and p["lastTerminatedAt"] <= t else t
                restarts += [
                    Restart(name, at, p["lastTerminatedReason"], p["lastTerminatedExitCode"])
                    for _ in range(p["restarts"] - last_count[name])
                ]
                last_count[name] = p["restarts"]
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


def recorded_actions(timeline: list[dict]) -> list[RecordedAction]:
    """The timeline's `action` records, each with the time of its `action-done`; those the API refused
    are left out."""
    done = {r["index"]: r["t"] for r in timeline if r["kind"] == "action-done"}
    return [
        RecordedAction(r["index"], r["t"], r["target"], r.get("what", ""), r.get("replicas"), done.get(r["index"]), r.get("error"))
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
    liveness_kills: list[PodTime]  # Killing "failed liveness probe"
    unhealthy: int  # Unhealthy events of any probe
    killing: int


def probe_events(timeline: list[dict], variant: str, phases: Phases, pods: list[str] | None = None) -> ProbeEvents:
    """PODS: the pods the run saw (its snapshots); events of others (a rollout's old pods, gone before
    the run began) are not the run's."""
    events = [
        r
        for r in timeline
        if r["kind"] == "event"
        and r["variant"] == variant
        and r["last"] is not None
        and r["last"] >= phases.start - CLOCK_SLACK_S
        and (pods is None or r["pod"] in pods)
    ]

    def times(match):
        return [PodTime(p, t) for p, t in sorted({(e["pod"], e["last"]) for e in events if match(e)}, key=lambda x: x[1])]

    return ProbeEvents(
        events=sorted(
            ({k: e.get(k) for k in ("t", "uid", "pod", "reason", "message", "count", "first", "last")} for e in events),
            key=lambda e: e["last"] or 0,
        ),
        liveness_failures=times(is_liveness_failure),
        liveness_kills=times(lambda e: e["reason"] == "Killing" and is_liveness_kill(e)),
        unhealthy=sum(e["reason"] == "Unhealthy" for e in events),
        killing=sum(e["reason"] == "Killing" for e in events),
    )


def attribute_restarts(restarts: list[Restart], probes: ProbeEvents, phases: Phases) -> None:
    """Each restart must follow a liveness failure of the same pod, after that pod's previous restart: an
    Unhealthy "Liveness probe failed" event, or a Killing "failed liveness probe" event. The kubelet's
    event spam filter (client-go: a burst of 25 events per object and event type, then one per 5 minutes)
    drops events of a pod that keeps failing, so a later restart may have neither; it still counts when
    the container ended in place on SIGTERM (exit 143: only the kubelet does that to a container whose pod
    lives on) and the same pod's liveness failures were seen earlier in the run."""
    evidence = probes.liveness_failures + probes.liveness_kills
    previous, seen_failure = {}, set()
    for r in sorted(restarts, key=lambda r: r.t):
        since = previous.get(r.pod, phases.start - CLOCK_SLACK_S)
        window = [e.t for e in evidence if e.pod == r.pod and since - CLOCK_SLACK_S < e.t <= r.t + CLOCK_SLACK_S]
        if window:
            r.attribution = "liveness failure events before it"
        elif r.exit_code == 143 and r.pod in seen_failure:
            r.attribution = "SIGTERM by the kubelet (exit 143) after earlier liveness failures; its events were rate-limited"
        if window or any(e.pod == r.pod and e.t <= r.t + CLOCK_SLACK_S for e in evidence):
            seen_failure.add(r.pod)
        previous[r.pod] = r.t


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
    """Everything the report says about one variant."""

    variant: str
    phases: Phases
    pods: PodHistory
    probes: ProbeEvents
    figures: RequestFigures
    series: list[Sample]
    settings: VariantSettings | None
    recovery_s: float | None

    def since_start(self, times) -> float | None:
        return round(min(times) - self.phases.start, 1) if times else None

    @property
    def first_liveness_failure_s(self):
        return self.since_start([x.t for x in self.probes.liveness_failures])

    @property
    def first_liveness_kill_s(self):
        return self.since_start([x.t for x in self.probes.liveness_kills])

    @property
    def first_restart_s(self):
        return self.since_start([r.t for r in self.pods.restarts])

    def to_json(self) -> dict:
        """verdict.json's figures of this variant."""
        f = self.figures
        return {
            "variant": self.variant,
            "pods": self.pods.pods,
            "podsAddedDuringRun": self.pods.added_during_run,
            "restarts": [
                {
                    "pod": r.pod,
                    "t": r.t,
                    "reason": r.reason,
                    "exitCode": r.exit_code,
                    "attribution": r.attribution,
                    "afterLivenessFailure": r.after_liveness_failure,
                }
                for r in self.pods.restarts
            ],
            "restartsByPod": self.pods.restarts_by_pod,
            "evicted": self.pods.evicted,
            "livenessFailures": [{"pod": x.pod, "t": x.t} for x in self.probes.liveness_failures],
            "unhealthy": self.probes.unhealthy,
            "killing": self.probes.killing,
            "livenessKills": [{"pod": x.pod, "t": x.t} for x in self.probes.liveness_kills],
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


def analyze_variant(variant: str, data: RunData, phases: Phases, settings: VariantSettings | None = None) -> VariantAnalysis:
    pods = pod_history(data.timeline, variant)
    probes = probe_events(data.timeline, variant, phases, pods.pods if pods.pods else None)
    attribute_restarts(pods.restarts, probes, phases)
    rows = series(data.history, variant)
    return VariantAnalysis(
        variant=variant,
        phases=phases,
        pods=pods,
        probes=probes,
        figures=request_figures(data, variant, rows, phases),
        series=rows,
        settings=settings,
        recovery_s=recovery_after(pods.ready, phases.stop),
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
    """The timeline samples the service's own counters (recorded after the recorder learnt to)."""
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
class Check:
    who: str
    ok: bool
    text: str


def expected(variant: str) -> str | None:
    """'killed', 'spared' or None (not judged): the claim's side of VARIANT, by its mode."""
    mode = mode_of(variant)
    return "killed" if mode in KILLED_MODES else "spared" if mode in SPARED_MODES else None


def check_killed(a: VariantAnalysis) -> list[Check]:
    who = a.variant
    checks = [Check(who, bool(a.pods.pods), f"{who} pods observed: {len(a.pods.pods)}")]
    for pod, n in a.pods.restarts_by_pod.items():
        checks.append(Check(who, n >= 1, f"{pod} restarted {n} time(s) (needs >= 1)"))
    for r in a.pods.restarts:
        how = r.attribution or "no liveness failure seen before it"
        checks.append(
            Check(who, r.after_liveness_failure, f"{r.pod} restart at +{r.t - a.phases.start:.0f}s preceded by a liveness failure: {how}")
        )
        checks.append(Check(who, r.reason != "OOMKilled", f"{r.pod} restart reason {r.reason} (exit {r.exit_code}), not OOMKilled"))
    checks.append(Check(who, not a.pods.evicted, f"no {who} pod evicted ({', '.join(a.pods.evicted) or 'none'})"))
    return checks


def check_spared(a: VariantAnalysis) -> list[Check]:
    who = a.variant
    checks = [Check(who, bool(a.pods.pods), f"{who} pods observed: {len(a.pods.pods)}")]
    for pod, n in a.pods.restarts_by_pod.items():
        checks.append(Check(who, n == 0, f"{pod} restarted {n} time(s) (needs 0)"))
    checks.append(Check(who, a.probes.unhealthy == 0, f"{who} Unhealthy events during the run: {a.probes.unhealthy} (needs 0)"))
    checks.append(Check(who, a.figures.requests > 0, f"{who} requests served: {a.figures.requests}"))
    checks.append(Check(who, a.figures.failures == 0, f"{who} request failures: {a.figures.failures} (needs 0)"))
    return checks


def variant_kill_window(a: VariantAnalysis, run: dict) -> KillWindow | None:
    s = a.settings
    return kill_window(s.liveness, s.event_loops, run, s.tomcat_threads) if s and s.liveness else None


def check_kill_timing(a: VariantAnalysis, run: dict) -> tuple[list[Check], list[str]]:
    """The first liveness kill of a variant the claim expects killed, against its window; or a note saying
    why it was not timed."""
    window = variant_kill_window(a, run)
    first = a.first_liveness_kill_s
    if run.get("settings") is None:
        return [], [
            "run.json records no probe settings (recorded before it did, or the API did not answer): the kill timing is not checked"
        ]
    if window is None:
        return [], [f"run.json records no liveness probe of {a.variant}: its kill timing is not checked"]
    if first is None:
        # No kill at all is the restart checks' business; here there is nothing to time.
        return [], [f"{a.variant}: no liveness kill event to time (window {window.describe()})"]
    pod = min(a.probes.liveness_kills, key=lambda k: k.t).pod
    inside = window.contains(first)
    text = f"{pod} first liveness kill at +{first:.1f}s after load start, {'within' if inside else 'OUTSIDE'} {window.describe()}"
    return [Check(a.variant, inside, text)], []


@dataclass
class CpuCheck:
    """Signs that CPU starvation, not a blocked event loop, could explain what happened."""

    notes: list[str]
    warnings: list[str]
    throttled: dict[str, float]
    machine_warnings: list[str] = field(default_factory=list)  # those of warnings about the machine's busy share

    @property
    def starved(self) -> bool:
        return bool(self.warnings)


def throttled_share(throttles: list[dict]) -> dict[str, float]:
    """Per pod, the share of CFS periods throttled, summed over consecutive samples; a restarted
    container starts its counters again from 0."""
    hits, periods = {}, {}
    for before, after in zip(throttles, throttles[1:], strict=False):
        for pod, m in after["pods"].items():
            prev = before["pods"].get(pod, {})
            for key, acc in (("container_cpu_cfs_throttled_periods_total", hits), ("container_cpu_cfs_periods_total", periods)):
                cur, old = m.get(key, 0.0), prev.get(key, 0.0)
                acc[pod] = acc.get(pod, 0.0) + (cur - old if cur >= old else cur)
    return {pod: hits.get(pod, 0.0) / n for pod, n in periods.items() if n > 0}


def cpu_check(data: RunData, phases: Phases, analyses: dict[str, VariantAnalysis], latency_ms: float) -> CpuCheck:
    timeline = data.timeline
    busy = [r["busy"] for r in timeline if r["kind"] == "cpu" and phases.hold <= r["t"] <= phases.stop]
    throttles = [r for r in timeline if r["kind"] == "throttle"]
    throttle_error = next((r["message"] for r in timeline if r["kind"] == "error" and r.get("what") == "throttle"), None)
    notes, warnings = [], []
    if busy:
        mean, peak = sum(busy) / len(busy), max(busy)
        source = next((r.get("source") for r in timeline if r["kind"] == "cpu" and r.get("source")), "/proc/stat")
        notes.append(f"machine CPU busy during the hold: mean {mean:.0%}, peak {peak:.0%} ({len(busy)} samples, {source})")
        if mean >= BUSY_WARN:
            warnings.append(f"the machine's CPU was {mean:.0%} busy on average during the hold")
    else:
        why = next((r["message"] for r in timeline if r["kind"] == "error" and r.get("what") == "cpu"), None)
        notes.append(f"machine CPU: no samples{f' ({why})' if why else ''}")
    machine = list(warnings)
    throttled = {}
    if len(throttles) >= 2:
        throttled = throttled_share(throttles)
        notes.append(
            "CFS throttling per pod over the run: " + (", ".join(f"{p} {r:.0%}" for p, r in sorted(throttled.items())) or "no data")
        )
    elif throttle_error:
        notes.append(f"CFS throttling: not readable ({throttle_error})")
    for v, spared in analyses.items():
        if expected(v) != "spared":
            continue
        for pod in spared.pods.pods:
            if throttled.get(pod, 0) >= THROTTLE_WARN:
                warnings.append(f"{v} pod {pod} was CPU-throttled in {throttled[pod]:.0%} of its periods")
        if spared.probes.unhealthy:
            warnings.append(
                f"{v} pods failed {spared.probes.unhealthy} probe(s): with a free event loop or thread that means CPU starvation or "
                "a sick node"
            )
        p50 = spared.figures.hold_median_p50
        if p50 is not None:
            notes.append(f"{v} median latency during the hold: {p50:.0f} ms for {latency_ms:.0f} ms requested")
            if p50 > LATENCY_WARN_FACTOR * latency_ms:
                warnings.append(
                    f"{v} median latency {p50:.0f} ms is over {LATENCY_WARN_FACTOR}x the requested {latency_ms:.0f} ms: the "
                    "pod was short of CPU"
                )
    return CpuCheck(notes, warnings, throttled, machine)


@dataclass
class Verdict:
    verdict: str
    checks: list[Check]
    notes: list[str]  # what was not checked, and why
    disturbances: list[str]
    analyses: dict[str, VariantAnalysis]
    phases: Phases
    cpu: CpuCheck
    api_errors: int
    kill_windows: dict[str, KillWindow] = field(default_factory=dict)
    # Served vs offered per variant; empty for a timeline recorded before the recorder read the counts.
    loads: dict[str, ServedLoad] = field(default_factory=dict)
    load_notes: list[str] = field(default_factory=list)
    clocks: clock.ClockCheck | None = None
    actions: list[RecordedAction] = field(default_factory=list)  # the lab's, during the run

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict:
        """verdict.json: the verdict, its checks and the figures (without the time series)."""
        return {
            "verdict": self.verdict,
            "checks": [{"who": c.who, "ok": c.ok, "text": c.text} for c in self.checks],
            "notes": self.notes,
            "disturbances": self.disturbances,
            "cpu": {
                "notes": self.cpu.notes,
                "warnings": self.cpu.warnings,
                "machineWarnings": self.cpu.machine_warnings,
                "starved": self.cpu.starved,
                "throttled": self.cpu.throttled,
            },
            "phases": vars(self.phases),
            "killWindows": {
                v: {"fromS": w.low, "toS": w.high, "earliestS": w.earliest_s, "latestS": w.latest_s} for v, w in self.kill_windows.items()
            },
            "variants": {v: a.to_json() for v, a in self.analyses.items()},
            "load": {"notes": self.load_notes, "variants": {v: x.to_json() for v, x in self.loads.items()}},
            "clock": self.clocks.to_json() if self.clocks else None,
            "actions": [vars(a) for a in self.actions],
        }


def disturbances(analyses: dict[str, VariantAnalysis], api_errors: int, actions: list[RecordedAction] | None = None) -> list[str]:
    """Why the run says nothing about the claim, if it does not. Pods an action of the lab added (a
    scale-out) are the run's own."""
    found = []
    for v, a in analyses.items():
        others = sorted(set(a.pods.added_during_run) - set(added_by_actions(a.pods, v, actions or [])))
        if others:
            found.append(f"{v}: pods created during the run ({', '.join(others)}): a rollout or a deletion, not the load")
    if api_errors >= API_ERRORS_DISTURBED:
        found.append(f"the Kubernetes API did not answer {api_errors} times during the recording: the cluster went away or was overloaded")
    return found


def judge(data: RunData) -> Verdict:
    """Analyses per chosen variant, the checks, the CPU check and the verdict."""
    clocks = clock.check(data.timeline, CLOCK_SLACK_S)
    data = replace(data, timeline=clock.to_host_clock(data.timeline, clocks.offset))
    run = data.run
    phases = run_phases(run)
    settings = run_settings(run) or {}
    analyses = {v: analyze_variant(v, data, phases, settings.get(v)) for v in chosen_variants(run)}
    checks, notes = [], []
    killed = [v for v in analyses if expected(v) == "killed"]
    spared = [v for v in analyses if expected(v) == "spared"]
    for v in killed:
        checks += check_killed(analyses[v])
        timing, why_not = check_kill_timing(analyses[v], run)
        checks += timing
        notes += why_not
    for v in spared:
        checks += check_spared(analyses[v])
    windows = {v: w for v, a in analyses.items() if (w := variant_kill_window(a, run))}
    api_errors = sum(1 for r in data.timeline if r["kind"] == "error" and r.get("what") == "api")
    actions = recorded_actions(data.timeline)
    disturbed = disturbances(analyses, api_errors, actions)
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
            "the timeline was recorded before the recorder read the service's own counters: the load the variants saw is not "
            "compared with what Locust offered"
        ]
    if disturbed:
        verdict = "INCONCLUSIVE"
    elif any(not c.ok for c in checks):
        verdict = "FAIL"
    elif killed and spared:
        verdict = "PASS"
    else:
        verdict = "INCONCLUSIVE"
    return Verdict(
        verdict=verdict,
        checks=checks,
        notes=notes,
        disturbances=disturbed,
        analyses=analyses,
        phases=phases,
        cpu=cpu_check(data, phases, analyses, requested_latency_ms(run)),
        api_errors=api_errors,
        kill_windows=windows,
        loads=loads,
        load_notes=load_notes,
        clocks=clocks,
        actions=actions,
    )
