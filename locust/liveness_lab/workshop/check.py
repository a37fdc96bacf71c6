"""A step's self-check: the lab's prediction for its scenario, judged live on what is measured, with the
reason in words when it is not met.

What is judged is a **window**: one swarm started on a settled release (no rollout under way, no old pod
terminating, every pod Ready for ``LIVENESS_LAB_SETTLE`` seconds: ``base.settle``, the scripted run's own
rule), from its start to now or to its stop. Within it only the pods there when it started count, and only
their events: a rollout's old pods and what the kubelet said of them never count, and a pod created during
the window (the release changed under the swarm) ends the window's say. The figures are the scripted
run's own facts (``report.facts``: the pods' restarts, each with its own cause, the kills and the liveness
failures, from the kubelet's probe counter where the master may read it and from its events, Locust's
stats history, Ready over time), on the same records the Pods and Live tabs read (the Pods poller's pods,
events and probe counter, the master's stats history), and the kill window of the variant's own probe
(``report.kills.kill_window``); the countdown of the last liveness failure (1/3, 2/3) is ``base.countdown``'s.

Before the window counts, the release must run the step's values (``change.differences`` of every variant's
service container against what the release's own chart renders from the step's values: ``course.target_values``,
rendered by ``helm.HelmRelease.render``), and the swarm must offer the load the lab's prediction is for (the
scenario's users per variant, rate and latency).

Each prediction is judged by ``report.predictions``, the lab's own judge, on the window as a live run
(``Evidence.live``): held, not yet, or not held, in the words the tab shows.

Everything here works on recorded data (``Window`` and ``Release`` are plain JSON), so a recorded
window of the kind cluster drives the tests.
"""

import os
from dataclasses import asdict, dataclass, field

from liveness_lab.base.settle import DEFAULT_SETTLE_S, SETTLE_ENV, settle_problems
from liveness_lab.base.variants import COMPONENT_LABEL, VARIANTS, user_class
from liveness_lab.report.predictions import NOT_HELD, NOT_YET, Evidence, Line, judge_line, last_failure
from liveness_lab.report.recording import RunData, num, run_phases
from liveness_lab.report.settings import run_settings, settings_by_variant
from liveness_lab.report.variant import analyze_variant

from .change import container_of, differences
from .course import Step

SETTLE_S = float(os.environ.get(SETTLE_ENV, DEFAULT_SETTLE_S))
# The states of a check, in the order the tab explains them.
STATES = ("met", "checking", "not as predicted", "change", "settling", "waiting", "load", "disturbed", "unknown")


@dataclass
class Window:
    """One swarm on the release, as measured: what the check judges."""

    started: float  # epoch s, the swarm's start (Locust's test_start on the master)
    users: dict[str, int]  # release variant -> users of its class the swarm runs
    spawn_rate: float
    rate: float  # requests per second per user
    latency_ms: int
    deployments: dict  # API List of the variant Deployments when the swarm started
    unsettled: list[str]  # why the release had not settled when the swarm started (empty: it had)
    timeline: list[dict] = field(default_factory=list)  # the recorder's records since the start: pods, event
    history: list[dict] = field(default_factory=list)  # Locust's stats history rows since the start
    failures: list[dict] = field(default_factory=list)  # Locust's failures (Method, Name, Error, Occurrences)
    stopped: float | None = None  # epoch s, when the swarm stopped; None while it runs

    def end(self, now: float) -> float:
        return self.stopped if self.stopped is not None else now

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Window":
        return cls(**d)


@dataclass
class Release:
    """The release now: its variant Deployments and pods (API Lists), and the service container of each
    variant its chart renders from the current step's values (None: not rendered, RENDER_ERROR says why)."""

    deployments: dict
    pods: dict
    expected: dict[str, dict] | None
    error: str | None = None  # the API did not answer
    render_error: str | None = None

    def deployment(self, variant: str) -> dict | None:
        return next(
            (d for d in self.deployments.get("items", []) if (d["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == variant), None
        )

    def variants(self) -> list[str]:
        """The variants the release deploys (its Deployments of the variant table)."""
        found = {(d["metadata"].get("labels") or {}).get(COMPONENT_LABEL) for d in self.deployments.get("items", [])}
        return [v for v in VARIANTS if v in found]


@dataclass
class Result:
    step: str
    state: str  # one of STATES
    reason: str  # in words
    lines: list[Line] = field(default_factory=list)
    measured: dict[str, dict] = field(default_factory=dict)  # per judged variant: what the window measured
    elapsed: float | None = None  # seconds of the window judged
    window: dict | None = None  # the window's start, stop, users; and its kill windows

    @property
    def met(self) -> bool:
        return self.state == "met"

    def to_json(self) -> dict:
        return {**asdict(self), "met": self.met}


def change_problems(step: Step, release: Release) -> list[str]:
    """Why the release does not run STEP's values (for a step without any, the values it started with):
    each variant's service container as it runs against the one its chart renders from them; a variant
    rendered and not deployed, or deployed and not rendered, is said too."""
    if release.expected is None:
        return [f"what the step's values run could not be rendered: {release.render_error}"]
    rendered = {v: c for v, c in release.expected.items() if v in VARIANTS}
    problems = []
    for variant in sorted(set(rendered) | set(release.variants()) | set(step.judge)):
        d = release.deployment(variant)
        if variant not in rendered:
            problems.append(f"{variant}: deployed, but not by this step's values" if d else f"{variant}: not deployed by the step's values")
        elif d is None:
            problems.append(f"the release has no {variant} Deployment yet (it deploys {', '.join(release.variants()) or 'none'})")
        else:
            problems += [f"{variant}: {x}" for x in differences(rendered[variant], container_of(d))]
    return problems


def load_problems(step: Step, window: Window) -> list[str]:
    """How the swarm's load differs from the one the scenario's prediction is for."""
    load = step.scenario.load
    out = []
    for variant in step.judge:
        have = window.users.get(variant, 0)
        if have != load["users"]:
            out.append(f"{load['users']} users of {user_class(variant)}, the swarm runs {have}")
    if abs(window.rate - load["rate"]) > 1e-9:
        out.append(f"{load['rate']:g} request/s per user, the swarm asks {window.rate:g}")
    if window.latency_ms != load["latency_ms"]:
        out.append(f"requests of {load['latency_ms']} ms, the swarm asks {window.latency_ms} ms")
    return out


def describe_load(step: Step) -> str:
    load, judged = step.scenario.load, list(step.judge)
    classes = " and ".join(user_class(v) for v in judged)
    each = " each" if len(judged) > 1 else ""
    return f"{load['users']} users{each} of {classes} at {load['rate']:g} request/s of {load['latency_ms']} ms"


def _generation(deployments: dict, variant: str) -> int | None:
    d = next((x for x in deployments.get("items", []) if (x["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == variant), None)
    return None if d is None else d["metadata"].get("generation")


def run_of(window: Window, variant: str, end: float) -> dict:
    """The window as a scripted run's run.json (report.verdict reads it): phases from the swarm's start."""
    total = sum(window.users.values()) or 1
    ramp = round(total / window.spawn_rate, 1) if window.spawn_rate > 0 else 0.0
    return {
        "variants": variant,
        "users_per_variant": max(1, window.users.get(variant, 0)),
        "rate_per_user": window.rate,
        "latency_ms": window.latency_ms,
        "phases": {"ramp": ramp, "hold": max(0.0, end - window.started - ramp), "cooldown": 0, "quiet": 0},
        "locust_started": window.started,
        "settings": settings_by_variant(window.deployments),
    }


def evidence(window: Window, variant: str, end: float) -> Evidence:
    """The facts of VARIANT over the window up to END (what was recorded later is not seen: a recorded
    window judged at any moment of it gives what the check said then), as a live run."""
    run = run_of(window, variant, end)
    timeline = [r for r in window.timeline if r["t"] <= end]
    history = [r for r in window.history if (num(r.get("Timestamp")) or 0) <= end]
    data = RunData(run=run, history=history, totals=[], failures=window.failures, timeline=timeline)
    a = analyze_variant(variant, data, run_phases(run), (run_settings(run) or {}).get(variant))
    return Evidence(a, run, live=True, elapsed=end - window.started)


def measured(window: Window, ev: Evidence) -> dict:
    """What the window measured of VARIANT, for the tab: requests, the failed share, p95 against the
    requested latency, restarts with their causes, liveness kills, Ready pods."""
    a, f = ev.analysis, ev.analysis.figures
    p95 = next((s.p95 for s in reversed(a.series) if s.p95 is not None), None)
    ready = a.pods.ready[-1] if a.pods.ready else None
    kw = ev.kill_window
    return {
        "requests": f.requests,
        "failures": f.failures,
        "failedShare": round(f.failure_ratio, 4),
        "p95": p95,
        "latencyMs": window.latency_ms,
        "restarts": [
            {
                "pod": r.pod,
                "t": round(r.t - window.started, 1),
                "reason": r.reason,
                "exitCode": r.exit_code,
                "cause": r.cause,
                "why": r.describe(),
                "liveness": r.liveness,
            }
            for r in a.pods.restarts
        ],
        "livenessKills": [round(k.t - window.started, 1) for k in a.liveness_kills],
        "livenessFailures": a.liveness_failures(end=window.started + ev.elapsed)[0],
        "lastFailure": last_failure(a),
        "ready": None if ready is None else {"ready": ready[1], "pods": ready[2]},
        "killWindow": None if kw is None else [round(kw.low, 1), round(kw.high, 1)],
    }


def evaluate(step: Step, release: Release, window: Window | None, now: float, settle_s: float = SETTLE_S) -> Result:
    """STEP's check on RELEASE as it is now and the latest WINDOW (None: no swarm since the workshop
    started). See the module docstring for the order of what is checked."""
    if release.error:
        return Result(step.name, "unknown", f"the Kubernetes API does not answer: {release.error}")
    problems = change_problems(step, release)
    if problems:
        what = "this step's values" if step.values else "the values it started with (Reset brings them back)"
        how = " (apply them with the solution's helm upgrade, or Skip)" if step.values else ""
        return Result(step.name, "change", f"the release does not run {what} yet{how}: " + "; ".join(problems))
    variants = release.variants()
    fresh = (
        window is not None
        and not window.unsettled
        and all(_generation(window.deployments, v) == _generation(release.deployments, v) for v in variants)
    )
    if not fresh:
        unsettled = settle_problems(release.deployments, release.pods, variants, now, settle_s)
        if window is not None and window.stopped is None:
            why = (
                f"the swarm started before the release had settled ({'; '.join(window.unsettled)})"
                if window.unsettled
                else "the release changed while the swarm ran"
            )
            return Result(
                step.name, "settling" if unsettled else "waiting", f"{why}: stop it, and start a new one once the release has settled"
            )
        if unsettled:
            return Result(
                step.name, "settling", "the release is changing, wait until it has settled (stop any swarm): " + "; ".join(unsettled)
            )
        return Result(
            step.name, "waiting", f"the release is ready: start a swarm of {describe_load(step)} (the start form proposes the lab's load)"
        )
    wrong = load_problems(step, window)
    if wrong:
        return Result(
            step.name,
            "load",
            f"the lab's prediction is for {describe_load(step)}: " + "; ".join(wrong) + ". Start a new swarm with that load",
        )
    end = window.end(now)
    lines, found, windows = [], {}, {}
    for variant in step.judge:
        ev = evidence(window, variant, end)
        if ev.analysis.pods.added_during_run:
            added = ", ".join(ev.analysis.pods.added_during_run)
            return Result(
                step.name,
                "disturbed",
                f"{variant}: pods created during the swarm ({added}): the release changed under it. "
                "Stop it, let the release settle and start a new one",
                elapsed=round(ev.elapsed, 1),
            )
        found[variant] = measured(window, ev)
        windows[variant] = found[variant]["killWindow"]
        lines += [judge_line(key, expected, ev) for key, expected in step.predictions()[variant].items()]
    elapsed = round(end - window.started, 1)
    info = {"started": window.started, "stopped": window.stopped, "users": window.users}
    failed = [x for x in lines if x.state == NOT_HELD]
    waiting = [x for x in lines if x.state == NOT_YET]
    if failed:
        state, reason = "not as predicted", "; ".join(x.why for x in failed)
    elif waiting:
        # One line per variant, its first prediction still open: what the participant waits for.
        first = {}
        for x in waiting:
            first.setdefault(x.variant, x.why)
        state, reason = "checking", "; ".join(first.values())
        if window.stopped is not None:
            reason = f"the swarm stopped at +{elapsed:.0f} s, before the check could tell ({reason}): start a new one"
    else:
        state, reason = (
            "met",
            "; ".join(x.why for x in lines if x.key in ("restarts", "failures", "ready", "throughput", "kill_timing")) or "as predicted",
        )
    return Result(step.name, state, reason, lines, found, elapsed, info)
