"""The CPU during a run: how busy the machine was during the hold (the one CPU figure that can void a run),
the CFS throttling of each pod (the kernel's counters every second where the recorder read them,
report.cgroups, else cAdvisor's every 15 s), and the spared variants' signs of a short CPU (throttling,
probe failures, slow answers), shown beside the run and never voiding it (``CpuCheck``).
"""

from dataclasses import dataclass, field

from liveness_lab.base.variants import mode_of

from . import cgroups
from .recording import Phases, RunData
from .variant import NON_BLOCKING_MODES, VariantAnalysis

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
LATENCY_WARN_FACTOR = 1.5


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
