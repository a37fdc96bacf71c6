"""The probes' failures and kills of one variant as the kubelet's events tell them (``probe_events``), and
the window its first liveness kill may come in (``kill_window``). The kubelet's own probe counter and the
merge of both (each kill once, each restart given its own) are ``base.causes``'s, called in
``variant.analyze_variant``.
"""

from dataclasses import dataclass

from liveness_lab.base.causes import CLOCK_SLACK_S, Kill, event_kills
from liveness_lab.base.kube import is_liveness_failure
from liveness_lab.base.probes import Probe

from .pods import PodTime
from .recording import Phases, requested_latency_ms
from .settings import VariantSettings


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
