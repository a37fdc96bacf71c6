"""Everything a run says of one variant (``VariantAnalysis``, made by ``analyze_variant``): its pods and
restarts, the probes' failures and kills, each restart attributed to its own kill (``base.causes``:
the kubelet's counter and the events merged), Locust's figures, and the settings it ran with; and the
claim's two sides, the modes whose serving threads block while a request waits and those that do not.
"""

from dataclasses import dataclass, field

from liveness_lab.base import countdown
from liveness_lab.base.causes import (
    CLOCK_SLACK_S,
    Kill,
    attribute_restarts,
    counter_failed,
    counter_kills,
    counter_rows,
)
from liveness_lab.base.probes import Probe

from .kills import ProbeEvents, probe_events
from .load import RequestFigures, Sample, request_figures, series
from .pods import PodHistory, PodTime, pod_history, recovery_after
from .recording import Phases, RunData
from .settings import VariantSettings

# The claim's two sides, by what a mode's serving threads do while a request waits: block (an event loop,
# a Tomcat worker thread: the kubelet's probe waits behind them, and it should kill their pods) or hold none
# (a timer, a DeferredResult, a virtual thread: it should leave them alone). Offloaded and virtual are
# neither (their pools block, the probe does not wait on them): reported, not judged.
BLOCKING_MODES = ("blocking", "servlet")
NON_BLOCKING_MODES = ("reactive", "servlet-async", "servlet-virtual")


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
