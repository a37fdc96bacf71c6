"""A step's self-check: the lab's prediction for its scenario, judged live on what is measured, with the
reason in words when it is not met.

What is judged is a **window**: one swarm started on a settled release (no rollout under way, no old pod
terminating, every pod Ready for ``LIVENESS_LAB_SETTLE`` seconds: ``base.settle``, the scripted run's own
rule), from its start to now or to its stop. Within it only the pods there when it started count, and only
their events: a rollout's old pods and what the kubelet said of them never count, and a pod created during
the window (the release changed under the swarm) ends the window's say. The figures are the scripted
run's own analysis (``report.verdict``: the pods' restarts and their reasons, each attributed to liveness
or not, the liveness failures and kills, Locust's stats history, Ready over time), on the same records the
Pods and Live tabs read (the Pods poller's pods and events, the master's stats history), and the kill
window of the variant's own probe (``report.settings.kill_window``); the countdown of the last liveness
failure (1/3, 2/3) is ``base.countdown``'s.

Before the window counts, the release must run the step's change (``change.differences`` against the
container the workshop started with, patched by the step), and the swarm must offer the load the lab's
prediction is for (the scenario's users per variant, rate and latency).

A prediction, judged while the swarm runs, is held, not yet, or not held:

- a count with an upper bound (``0``, ``<=2``) fails at once when it is passed, and holds once the swarm
  has run past the time a kill would have come (the kill window's end plus one probe period: the
  evidence time); a lower bound (``>=1``, ``>0``) holds once reached, and fails if not reached by then;
- ``restarts`` counts a liveness kill (the kubelet's ``Killing`` event) as the restart it starts, so the
  check turns green at the kill, not 10-40 s later when the container has stopped;
- ``kill_timing``: the first liveness kill within the window of the probe's settings (held), outside it,
  or none by its end (not held); ``throughput``: the median requests/s of the hold, from 10 s after the
  ramp, at least 90 % of the offered, once 10 s of it were measured.

Everything here works on recorded data (``Window`` and ``Release`` are plain JSON), so a recorded
window of the kind cluster drives the tests.
"""

import os
import re
import statistics
from dataclasses import asdict, dataclass, field

from liveness_lab.base import countdown
from liveness_lab.base.scenario import COUNT, THROUGHPUT_SHARE
from liveness_lab.base.settle import DEFAULT_SETTLE_S, SETTLE_ENV, settle_problems
from liveness_lab.base.variants import COMPONENT_LABEL, VARIANTS, user_class
from liveness_lab.report import verdict
from liveness_lab.report.settings import run_settings, settings_by_variant

from .change import container_of, differences, merge
from .steps import Step

SETTLE_S = float(os.environ.get(SETTLE_ENV, DEFAULT_SETTLE_S))
# Without a liveness probe to time a kill against, the swarm must have run this long before an absence holds.
EVIDENCE_DEFAULT_S = 30.0
# How much of the hold the lab's throughput rule (THROUGHPUT_SHARE) needs here.
THROUGHPUT_MIN_S = 10.0
HELD, NOT_YET, NOT_HELD = "held", "not yet", "not held"
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
    """The release now: its variant Deployments and pods (API Lists), and the service containers the
    workshop started with, per variant."""

    deployments: dict
    pods: dict
    start: dict[str, dict]
    error: str | None = None  # the API did not answer

    def deployment(self, variant: str) -> dict | None:
        return next(
            (d for d in self.deployments.get("items", []) if (d["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == variant), None
        )

    def variants(self) -> list[str]:
        """The variants the release deploys (its Deployments of the variant table)."""
        found = {(d["metadata"].get("labels") or {}).get(COMPONENT_LABEL) for d in self.deployments.get("items", [])}
        return [v for v in VARIANTS if v in found]


@dataclass
class Line:
    """One prediction of one variant, judged live."""

    variant: str  # the release's
    key: str
    predicted: str
    measured: str
    state: str  # HELD, NOT_YET, NOT_HELD
    why: str  # in words, for the participant


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


def expected_container(step: Step, start: dict[str, dict], variant: str) -> dict:
    """The service container VARIANT's Deployment runs with STEP's change: the one the workshop started
    with, patched."""
    return merge(start[variant], step.change.get(variant, {}))


def change_problems(step: Step, release: Release) -> list[str]:
    """Why the release does not run STEP's change (or, for a step without one, its starting values)."""
    problems = []
    for variant in sorted(set(step.judge) | set(step.change)):
        d = release.deployment(variant)
        if d is None:
            problems.append(f"the release has no {variant} Deployment (it deploys {', '.join(release.variants()) or 'none'})")
            continue
        if variant not in release.start:
            problems.append(f"{variant}: the workshop has no record of how it started (a Deployment added since)")
            continue
        problems += [f"{variant}: {d}" for d in differences(expected_container(step, release.start, variant), container_of(d))]
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


@dataclass
class Evidence:
    """What the window measured of one variant: report.verdict's analysis and the kill window."""

    analysis: verdict.VariantAnalysis
    run: dict
    kill_window: object  # settings.KillWindow or None
    elapsed: float
    evidence_s: float  # the swarm must run this long before an absence holds

    @property
    def settled(self) -> bool:
        return self.elapsed >= self.evidence_s


def evidence(window: Window, variant: str, end: float) -> Evidence:
    """The verdict's analysis of VARIANT over the window up to END (what was recorded later is not seen:
    a recorded window judged at any moment of it gives what the check said then)."""
    run = run_of(window, variant, end)
    timeline = [r for r in window.timeline if r["t"] <= end]
    history = [r for r in window.history if (verdict.num(r.get("Timestamp")) or 0) <= end]
    data = verdict.RunData(run=run, history=history, totals=[], failures=window.failures, timeline=timeline)
    phases = verdict.run_phases(run)
    a = verdict.analyze_variant(variant, data, phases, (run_settings(run) or {}).get(variant))
    kw = verdict.variant_kill_window(a, run)
    evidence_s = kw.high + kw.probe.period_s if kw else EVIDENCE_DEFAULT_S
    return Evidence(a, run, kw, end - window.started, evidence_s)


def restarts_now(a: verdict.VariantAnalysis) -> int:
    """Restarts, counting a liveness kill whose restart has not come yet as the restart it starts."""
    return max(len(a.pods.restarts), len(a.probes.liveness_kills))


def _bounds(expr) -> tuple[str | None, int]:
    op, number = COUNT.match(str(expr).strip()).groups()
    return op, int(number)


def count_state(expr, n: int, settled: bool) -> str:
    """A count prediction EXPR against N so far; SETTLED: the swarm has run past its evidence time."""
    op, k = _bounds(expr)
    if op in (">=", ">"):
        return HELD if (n >= k if op == ">=" else n > k) else (NOT_HELD if settled else NOT_YET)
    passed = n > k if op in (None, "==", "<=") else n >= k
    if passed:
        return NOT_HELD
    if op in (None, "==") and n < k:
        return NOT_HELD if settled else NOT_YET
    return HELD if settled else NOT_YET


def _predicted(expr) -> str:
    op, k = _bounds(expr)
    return {None: f"{k}", "==": f"{k}", ">=": f"{k} or more", ">": f"more than {k}", "<=": f"at most {k}", "<": f"fewer than {k}"}[op]


def last_failure(window: Window, a: verdict.VariantAnalysis) -> str | None:
    """The variant's last liveness failure or kill in the window with its place in the countdown
    (base.countdown, as the Live tab numbers it): "liveness failure 2/3 at +9.0 s"."""
    s = a.settings
    if not s or not s.liveness:
        return None
    probe = countdown.Probe(s.liveness.period_s, s.liveness.failure_threshold)
    pods = set(a.pods.pods)
    end = a.phases.stop
    events = [r for r in window.timeline if r["kind"] == "event" and r.get("pod") in pods and r["t"] <= end]
    occurrences = countdown.EventReader().read(sorted(events, key=lambda r: r["t"]), lambda _pod: probe)
    ends = [(r.pod, r.t) for r in a.pods.restarts]
    marks = [m for m in countdown.countdown(occurrences, ends, lambda _pod: probe) if m.t >= window.started - 1 and m.kind != "unreported"]
    if not marks:
        return None
    m = marks[-1]
    what = "liveness kill" if m.kind == "kill" else "liveness failure"
    return f"{what} {m.label} at +{m.t - window.started:.1f} s".replace("  ", " ")


def judge_line(variant: str, key: str, expected, ev: Evidence, window: Window) -> Line:
    """One prediction of the scenario, judged on the window so far."""
    a, settled, t = ev.analysis, ev.settled, f"+{ev.elapsed:.0f} s"
    wait = f"{t} of the {ev.evidence_s:.0f} s a kill would take"
    f = a.figures
    if key == "restarts":
        n = restarts_now(a)
        kills = [k.t - window.started for k in a.probes.liveness_kills]
        measured = f"{n}" + (f" (first liveness kill at +{min(kills):.1f} s)" if kills else "")
        state = count_state(expected, n, settled)
        if state == HELD:
            why = (
                f"{variant}: killed for liveness at +{min(kills):.1f} s"
                if kills
                else f"{variant}: {n or 'no'} restart{'s' if n != 1 else ''}"
            )
            if kills and n > 1:
                why += f" ({n} restarts)"
        elif state == NOT_HELD:
            why = f"{variant} restarted {n} time(s); the lab predicts {_predicted(expected)}"
        else:
            last = last_failure(window, a)
            why = f"{variant}: no liveness kill yet ({t}{'; last: ' + last if last else ''}; expected by +{ev.evidence_s:.0f} s)"
            if _bounds(expected)[0] not in (">=", ">"):
                why = f"{variant}: no restart so far ({wait})"
        return Line(variant, key, _predicted(expected), measured, state, why)
    if key == "restarted_pods":
        restarted = {r.pod for r in a.pods.restarts} | {k.pod for k in a.probes.liveness_kills}
        n, total = len(restarted & set(a.pods.pods)), len(a.pods.pods)
        if expected == "all":
            state = HELD if n == total > 0 else (NOT_HELD if settled else NOT_YET)
        else:
            state = count_state(expected, n, settled)
        return Line(variant, key, str(expected), f"{n} of {total}", state, f"{variant}: {n} of {total} pod(s) restarted")
    if key == "kill_reason":
        bad = [r for r in a.pods.restarts if not r.after_liveness_failure or r.reason == "OOMKilled"]
        measured = f"{len(a.pods.restarts) - len(bad)} of {len(a.pods.restarts)} restarts after liveness failures"
        if bad or a.pods.evicted:
            why = "; ".join(
                [
                    f"{variant}: {r.pod} restarted ({r.reason or 'reason not reported'}, exit {r.exit_code}) "
                    "with no liveness failure before it"
                    for r in bad
                ]
                + [f"{variant}: {p} evicted" for p in a.pods.evicted]
            )
            return Line(variant, key, "liveness", measured, NOT_HELD, why)
        return Line(variant, key, "liveness", measured, HELD, f"{variant}: every restart after liveness failures")
    if key == "kill_timing":
        kw, first = ev.kill_window, a.first_liveness_kill_s
        if kw is None:
            return Line(
                variant, key, "from its probe", "no liveness probe", NOT_HELD, f"{variant} has no liveness probe to time a kill against"
            )
        predicted = f"first kill at {kw.low:.0f}-{kw.high:.0f} s"
        if first is None:
            state = NOT_YET if ev.elapsed < kw.high else NOT_HELD
            why = f"{variant}: no liveness kill by {t} (the probe's window: {kw.low:.0f}-{kw.high:.0f} s)"
            return Line(variant, key, predicted, "no liveness kill", state, why)
        inside = kw.contains(first)
        why = f"{variant}: first liveness kill at +{first:.1f} s, {'within' if inside else 'outside'} {kw.low:.0f}-{kw.high:.0f} s"
        return Line(variant, key, predicted, f"+{first:.1f} s", HELD if inside else NOT_HELD, why)
    if key in ("failures", "shed", "failures_not_shed"):
        shed = sum(n for error, n in f.errors if re.search(r"\bcode=429\b", error))
        n = {"failures": f.failures, "shed": shed, "failures_not_shed": f.failures - shed}[key]
        what = {"failures": "failed", "shed": "answered 429", "failures_not_shed": "failed other than 429"}[key]
        measured = f"{n} of {f.requests}"
        state = count_state(expected, n, settled)
        why = f"{variant}: {n} of {f.requests} requests {what}" + (
            "" if state != NOT_HELD else f"; the lab predicts {_predicted(expected)}"
        )
        if state == NOT_YET:
            why += f" ({wait})" if _bounds(expected)[0] not in (">=", ">") else f" so far ({t})"
        return Line(variant, key, _predicted(expected), measured, state, why)
    if key in ("liveness_failures", "unhealthy"):
        n = len(a.probes.liveness_failures) if key == "liveness_failures" else a.probes.unhealthy
        what = "liveness failures" if key == "liveness_failures" else "Unhealthy events (any probe)"
        state = count_state(expected, n, settled)
        why = f"{variant}: {n} {what}" + ("" if state != NOT_HELD else f"; the lab predicts {_predicted(expected)}")
        if state == NOT_YET:
            why += f" ({wait})"
        return Line(variant, key, _predicted(expected), str(n), state, why)
    if key == "ready":
        seen = [round(tt - window.started, 1) for tt, ready, total in a.pods.ready if ready < total]
        measured = f"NotReady in {len(seen)} snapshot(s)" + (f", first at +{seen[0]:.0f} s" if seen else "")
        if expected == "throughout":
            state = NOT_HELD if seen else (HELD if settled else NOT_YET)
            why = f"{variant}: not Ready at +{seen[0]:.0f} s" if seen else f"{variant}: Ready throughout so far ({wait})"
        else:
            state = HELD if seen else (NOT_HELD if settled else NOT_YET)
            why = f"{variant}: NotReady from +{seen[0]:.0f} s" if seen else f"{variant}: Ready throughout so far ({t})"
        return Line(variant, key, str(expected), measured, state, why)
    if key == "throughput":
        offered = window.users.get(variant, 0) * window.rate
        hold = ev.run["phases"]["ramp"] + 10
        rps = [s.rps for s in a.series if window.started + hold <= s.t]
        predicted = f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s"
        if ev.elapsed < hold + THROUGHPUT_MIN_S or not rps:
            return Line(
                variant, key, predicted, "not measured yet", NOT_YET, f"{variant}: throughput measured from +{hold:.0f} s, for 10 s ({t})"
            )
        median = statistics.median(rps)
        ok = median >= THROUGHPUT_SHARE * offered
        return Line(
            variant,
            key,
            predicted,
            f"median {median:.1f} req/s",
            HELD if ok else NOT_HELD,
            f"{variant} answers {median:.1f} of {offered:g} req/s offered",
        )
    raise ValueError(f"unknown prediction {key!r}")  # the step loader refuses these


def measured(window: Window, variant: str, ev: Evidence) -> dict:
    """What the window measured of VARIANT, for the tab: requests, the failed share, p95 against the
    requested latency, restarts with their reasons, liveness kills, Ready pods."""
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
                "liveness": r.after_liveness_failure,
            }
            for r in a.pods.restarts
        ],
        "livenessKills": [round(k.t - window.started, 1) for k in a.probes.liveness_kills],
        "livenessFailures": len(a.probes.liveness_failures),
        "lastFailure": last_failure(window, a),
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
        what = "this step's change" if step.change else "the values it started with (Reset brings them back)"
        how = " (apply it with the solution's helm upgrade, or Skip)" if step.change else ""
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
    for variant, theirs in step.judge.items():
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
        found[variant] = measured(window, variant, ev)
        windows[variant] = found[variant]["killWindow"]
        lines += [judge_line(variant, key, expected, ev, window) for key, expected in step.scenario.predict[theirs].items()]
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
