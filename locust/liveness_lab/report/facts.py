"""The facts of a scripted run, and of a workshop's window on a swarm, from what was recorded: ``run_facts``
assembles them into ``RunFacts``. Everything that judges (the demo's verdict in ``verdict``, the predictions
of the lab and the workshop in ``predictions``) reads these facts and derives none of its own.

Each concept has its module, and this one puts them together:

- ``recording``: the report folder as read (``RunData``, ``load_run``), the run's timetable (``Phases``);
- ``pods``: a variant's pods, their restarts, Ready counts over time;
- ``kills``: the probes' failures and kills from the kubelet's events, the window of the first liveness kill;
- ``variant``: everything the run says of one variant (``VariantAnalysis``), each restart with its own cause;
- ``load``: Locust's figures, and the load the pods served against what Locust offered;
- ``cpu``: the machine's busy share, CFS throttling, the spared variants' signs of a short CPU;
- ``actions``: the lab's actions during the run and the pods they made;
- ``gc``, ``scheduler``, ``clock``, ``settings``: the collector, the virtual-thread scheduler, the cluster's
  clock, the variants' settings.

Here: ``RunFacts`` and ``run_facts``, why a run says nothing (``disturbances``), and the small measures of
one variant that the predictions name (``shed``, ``ready_share``, ``first_end`` ...).

Every time is on the host's clock once ``run_facts`` has moved the cluster's stamps (report.clock).
"""

import re
from dataclasses import dataclass, field, replace

from liveness_lab.base.causes import CLOCK_SLACK_S

from . import clock
from .actions import RecordedAction, added_by_actions, made_by_actions, recorded_actions
from .cpu import CpuCheck, cpu_check
from .gc import GcBeforeKill, HeapHigh, fullest_heap, gc_before_kills
from .kills import KillWindow, kill_window
from .load import ServedLoad, load_findings, records_metrics, served_load
from .pods import recovery_after
from .recording import Phases, RunData, chosen_variants, requested_latency_ms, run_phases

# load_run lives in report.recording; re-exported for the tests and scripts that read a run as facts.load_run.
from .recording import load_run as load_run
from .scheduler import Scheduler, schedulers
from .settings import run_settings
from .variant import VariantAnalysis, analyze_variant

# This many failed reads of the API (about one a second) and the timeline has holes: no verdict.
API_ERRORS_DISTURBED = 5


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
