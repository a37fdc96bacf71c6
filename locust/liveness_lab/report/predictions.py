"""The lab's prediction vocabulary (``base.scenario.PREDICTIONS``) judged in one place: for a finished run
(the lab's ``lab.judge``) and for a live window on a swarm (the workshop's ``workshop.check``), with a flag,
not a copy. Every figure is a fact of ``report.facts``; nothing is derived again here.

A prediction is ``held``, ``not held``, ``not measured`` (the run cannot say: no probe settings recorded,
no pod snapshots, a restart whose cause nothing recorded), ``nothing to judge`` (it is about something that
did not happen: the cause of restarts when there was none), or, live only, ``not yet``. Only held and not
held decide a run; a run none of whose predictions decided says so (``lab.judge``):

- a count with an upper bound (``0``, ``<=2``) fails as soon as it is passed, and holds once the run has
  gone past the time a kill would have come (the kill window's end plus one probe period: the evidence
  time); a lower bound (``>=1``, ``>0``) holds once reached, and fails if not reached by then; a finished
  run is past its evidence time by definition;
- ``restarts`` counts a kill whose restart has not come yet as the restart it starts (a live check turns
  green at the kill, not 10-40 s later when the container has stopped);
- a prediction that requests fail no more than so many needs requests served: with none it cannot hold;
- ``kill_reason``: every restart a liveness kill of its own (``base.causes.Restart.cause``); a restart with
  another cause fails it, one whose cause nothing recorded cannot be judged, and with no restart at all
  there is nothing to judge (never "held" on nothing);
- ``kill_timing``: the first liveness kill within the window of the probe's settings (held), outside it, or
  none by its end (not held); ``throughput``: the median requests/s of the hold, from 10 s after the ramp,
  at least 90 % of the offered, once 10 s of it were measured.

A run's outcome (``decide``), the same for the lab's scenarios and the demo's claim (which is the baseline
scenario's prediction, ``report.verdict``), in this order:

- "cannot tell" from evidence no prediction is about (``RunFacts.cannot_tell``: pods replaced under the
  run by something else, the API gone, the machine busy over the line; or a predicted variant not in it);
- "not held" when any deciding prediction did not hold: a variant's own restarts, probe failures,
  throttling or latency are outcomes, and one that contradicts a prediction fails it, even where another
  prediction could not be measured;
- "cannot tell" when a prediction could not be measured (no probe settings recorded, a restart whose
  cause nothing recorded), or none decided (each had nothing to judge, or is the race's);
- "held" otherwise. The demo calls these PASS, FAIL and INCONCLUSIVE (``VERDICT``, the one mapping).
"""

from dataclasses import asdict, dataclass, field

from liveness_lab.base import exits
from liveness_lab.base.causes import CAUSES
from liveness_lab.base.scenario import BAND, COUNT, THROUGHPUT_SHARE

from .actions import RecordedAction
from .cpu import PEAK_MIN_PERIODS
from .facts import (
    RunFacts,
    added_pods,
    first_end,
    first_kill_after_action,
    first_kills_spread,
    hold_throughput,
    kills_after_actions,
    longest_not_ready,
    longest_restart_wait,
    not_ready_during_load,
    ready_share,
    recovery_after_actions,
    shed,
    throttled_pct,
)
from .gc import GcBeforeKill, lowest_share
from .kills import KillWindow, kill_window
from .scheduler import Scheduler
from .variant import VariantAnalysis

HELD, NOT_YET, NOT_HELD, NOT_MEASURED, NOTHING = "held", "not yet", "not held", "not measured", "nothing to judge"
# A run's outcome is HELD, NOT_HELD or this (decide).
CANNOT_TELL = "cannot tell"
# The demo's names for the outcomes, and the exit code of both (base/exits.py): the one mapping.
VERDICT = {HELD: "PASS", NOT_HELD: "FAIL", CANNOT_TELL: "INCONCLUSIVE"}
EXIT = {HELD: exits.HELD, NOT_HELD: exits.NOT_HELD, CANNOT_TELL: exits.CANNOT_TELL}
# Without a liveness probe to time a kill against, a live run must have gone this long before an absence holds.
EVIDENCE_DEFAULT_S = 30.0
# How much of the hold the throughput rule (THROUGHPUT_SHARE) needs in a live window.
THROUGHPUT_MIN_S = 10.0


@dataclass
class Line:
    """One prediction of one variant, judged."""

    variant: str
    key: str
    predicted: str
    measured: str
    state: str  # HELD, NOT_HELD, NOT_MEASURED, NOTHING; live also NOT_YET
    why: str = ""  # in words, for a workshop's participant

    @property
    def held(self) -> bool | None:
        """True held, False not held, None neither (not measured, nothing to judge, not yet)."""
        return {HELD: True, NOT_HELD: False}.get(self.state)

    def text(self) -> str:
        mark = {HELD: "held", NOT_HELD: "NOT held", NOT_MEASURED: "not measured", NOTHING: "nothing to judge", NOT_YET: "not yet"}[
            self.state
        ]
        return f"{self.variant} {self.key}: predicted {self.predicted}, measured {self.measured}: {mark}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Line":
        """A line of lab.json."""
        return cls(**d)


@dataclass
class Evidence:
    """What the predictions of one variant are judged on: its facts, the run's, and how far the run has got."""

    analysis: VariantAnalysis
    run: dict  # run.json (a live window's is made from it: workshop.check.run_of)
    live: bool  # a window still being judged: an absence holds only past evidence_s
    elapsed: float  # seconds from the load start to the end judged
    actions: list[RecordedAction] = field(default_factory=list)  # the lab's, during the run
    throttled: dict[str, float] = field(default_factory=dict)  # CFS throttling per pod (cpu.CpuCheck)
    throttled_peak: dict[str, float] = field(default_factory=dict)  # in each pod's most throttled interval
    gc: list[GcBeforeKill] = field(default_factory=list)  # the collector's pauses before each liveness kill (report.gc)
    gc_first: GcBeforeKill | None = None  # the same before the first container to end, killed or not
    scheduler: Scheduler | None = None  # the virtual-thread scheduler's readings (report.scheduler)

    @property
    def kill_window(self) -> KillWindow | None:
        probe = self.analysis.liveness_probe
        return kill_window(probe, self.run, self.analysis.settings) if probe else None

    @property
    def evidence_s(self) -> float:
        """How long the run must have gone before an absence holds: a kill's latest time plus a period."""
        kw = self.kill_window
        return kw.high + kw.probe.period_s if kw else EVIDENCE_DEFAULT_S

    @property
    def settled(self) -> bool:
        return not self.live or self.elapsed >= self.evidence_s

    @property
    def started(self) -> float:
        return self.analysis.phases.start

    @property
    def offered(self) -> float:
        """Requests/s offered to the variant: its users times each user's rate."""
        return float(self.run["users_per_variant"]) * float(self.run["rate_per_user"])


def bounds(expr) -> tuple[str | None, int]:
    """A count prediction's comparison and number; a band ("5700..10500") is ">=" its low end (band_top: its high end)."""
    band = BAND.match(str(expr).strip())
    if band:
        return ">=", int(band.group(1))
    op, number = COUNT.match(str(expr).strip()).groups()
    return op, int(number)


def band_top(expr) -> int | None:
    """A band's high end ("5700..10500": 10500); None for a number or a comparison."""
    band = BAND.match(str(expr).strip())
    return int(band.group(2)) if band else None


def count_state(expr, n: int, settled: bool) -> str:
    """A count prediction EXPR (a number, a comparison such as ">=1", or a band "5700..10500") against N so
    far; SETTLED: the run has gone past its evidence time (a finished run always has)."""
    op, k = bounds(expr)
    top = band_top(expr)
    if top is not None and n > top:
        return NOT_HELD
    if op in (">=", ">"):
        return HELD if (n >= k if op == ">=" else n > k) else (NOT_HELD if settled else NOT_YET)
    passed = n > k if op in (None, "==", "<=") else n >= k
    if passed:
        return NOT_HELD
    if op in (None, "==") and n < k:
        return NOT_HELD if settled else NOT_YET
    return HELD if settled else NOT_YET


def in_words(expr) -> str:
    """A count prediction in words: "1 or more", "at most 2", "from 5700 to 10500"."""
    op, k = bounds(expr)
    if band_top(expr) is not None:
        return f"from {k} to {band_top(expr)}"
    return {None: f"{k}", "==": f"{k}", ">=": f"{k} or more", ">": f"more than {k}", "<=": f"at most {k}", "<": f"fewer than {k}"}[op]


def restarts_now(a: VariantAnalysis) -> int:
    """Restarts, counting a kill whose restart has not come yet as the restart it starts."""
    return len(a.pods.restarts) + len(a.pending_kills)


def _count(v, key, expected, n, measured, ev: Evidence, what: str) -> Line:
    """A count line with the participant's words: "blocking: 3 of 120 requests failed". A prediction that
    requests fail no more than so many holds only on requests served: none at all says nothing (a swarm
    that never reached the variant)."""
    state = count_state(expected, n, ev.settled)
    if state == HELD and key in ("failures", "failures_not_shed") and not ev.analysis.figures.requests:
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, key, str(expected), "no request served", state, f"{v}: no request answered yet: nothing to judge")
    why = f"{v}: {what}"
    if state == NOT_HELD:
        why += f"; the lab predicts {in_words(expected)}"
    elif state == NOT_YET:
        why += (
            f" (+{ev.elapsed:.0f} s of the {ev.evidence_s:.0f} s a kill would take)"
            if bounds(expected)[0] not in (">=", ">")
            else (f" so far (+{ev.elapsed:.0f} s)")
        )
    return Line(v, key, str(expected), measured, state, why)


def between(numbers: list[int]) -> str:
    """A sorted list's range: "60-88", or "60" when all are one."""
    return f"{numbers[0]}" if numbers[0] == numbers[-1] else f"{numbers[0]}-{numbers[-1]}"


def judge_line(key: str, expected, ev: Evidence) -> Line:
    """One prediction of the scenario, judged on EV."""
    a, v = ev.analysis, ev.analysis.variant
    f, t = a.figures, f"+{ev.elapsed:.0f} s"
    kills = [k.t - ev.started for k in a.liveness_kills]
    if key == "restarts":
        n = restarts_now(a)
        per_pod = ", ".join(f"{p.rsplit('-', 1)[-1]} {k}" for p, k in a.pods.restarts_by_pod.items())
        first = f"first liveness kill at +{min(kills):.1f} s" if kills else ""
        measured = f"{n}" + (f" ({'; '.join(x for x in (per_pod, first) if x)})" if per_pod or first else "")
        state = count_state(expected, n, ev.settled)
        if state == HELD:
            why = f"{v}: killed for liveness at +{min(kills):.1f} s" if kills else f"{v}: {n or 'no'} restart{'s' if n != 1 else ''}"
            why += f" ({n} restarts)" if kills and n > 1 else ""
        elif state == NOT_HELD:
            why = f"{v} restarted {n} time(s); the lab predicts {in_words(expected)}"
        elif bounds(expected)[0] in (">=", ">"):
            last = last_failure(a)
            why = f"{v}: no liveness kill yet ({t}{'; last: ' + last if last else ''}; expected by +{ev.evidence_s:.0f} s)"
        else:
            why = f"{v}: no restart so far ({t} of the {ev.evidence_s:.0f} s a kill would take)"
        return Line(v, key, str(expected), measured, state, why)
    if key == "restarted_pods":
        restarted = {r.pod for r in a.pods.restarts} | {k.pod for k in a.pending_kills}
        n, total = len(restarted & set(a.pods.pods)), len(a.pods.pods)
        if expected == "all":
            state = HELD if n == total > 0 else (NOT_HELD if ev.settled else NOT_YET)
        else:
            state = count_state(expected, n, ev.settled)
        return Line(v, key, str(expected), f"{n} of {total}", state, f"{v}: {n} of {total} pod(s) restarted")
    if key == "kill_reason":
        return _kill_reason(expected, a, ev)
    if key == "kill_timing":
        return _kill_timing(expected, a, ev)
    if key in ("failures", "shed", "failures_not_shed"):
        n = {"failures": f.failures, "shed": shed(a), "failures_not_shed": f.failures - shed(a)}[key]
        what = {"failures": "failed", "shed": "answered 429", "failures_not_shed": "failed other than 429"}[key]
        measured = f"{n} of {f.requests}" + (f" ({f.failure_ratio:.1%})" if key == "failures" else "")
        if key == "failures_not_shed":
            other = ", ".join(f"{error} x{k}" for error, k in f.errors if "code=429" not in error)
            measured = f"{n}" + (f" ({other})" if other else "")
        return _count(v, key, expected, n, measured, ev, f"{n} of {f.requests} requests {what}")
    if key == "liveness_failures":
        n, source = a.liveness_failures(end=a.phases.start + ev.elapsed if ev.live else None)
        return _count(v, key, expected, n, f"{n} ({source})", ev, f"{n} liveness failures")
    if key == "unhealthy":
        n = a.probes.unhealthy
        return _count(v, key, expected, n, str(n), ev, f"{n} Unhealthy events (any probe)")
    if key == "ready":
        return _ready(expected, a, ev)
    if key == "throughput":
        return _throughput(a, ev)
    if ev.live:
        return Line(v, key, str(expected), "not judged on a live window", NOT_MEASURED, f"{v} {key}: the lab judges it after a run")
    return _after_the_run(key, expected, a, ev)


# kill_reason's values: the causes (base/causes.py) each allows a restart to have.
KILL_REASONS = {"liveness": ("liveness",), "liveness-or-exit": ("liveness", "exit")}


def _kill_reason(expected: str, a: VariantAnalysis, ev: Evidence) -> Line:
    """kill_reason: every restart of one of the causes EXPECTED allows (KILL_REASONS): 'liveness' a liveness
    kill of its own, 'liveness-or-exit' that or the application's own exit (a JVM out of heap:
    -XX:+ExitOnOutOfMemoryError); none a startup kill, OOMKilled, evicted."""
    v, allowed = a.variant, KILL_REASONS[expected]
    restarts = a.pods.restarts
    other = [r for r in restarts if r.cause not in (*allowed, "unknown")]
    unknown = [r for r in restarts if r.cause == "unknown"]
    pending = [k for k in a.pending_kills if k.probe != "Liveness"]
    if expected == "liveness":
        measured = f"{sum(r.liveness for r in restarts)} of {len(restarts)} restarts liveness kills of their own"
        held, wrong = "every restart a liveness kill of its own", "not by a liveness kill"
    else:
        measured = ", ".join(f"{sum(r.cause == c for r in restarts)} {CAUSES[c]}" for c in CAUSES if any(r.cause == c for r in restarts))
        held, wrong = "every restart a liveness kill or an exit of its own", "not by a liveness kill or an exit of its own"
    if other or pending or a.pods.evicted:
        measured += "; " + ", ".join(
            [f"{r.pod} at +{r.t - ev.started:.1f} s: {r.describe()}" for r in other]
            + [f"{k.pod}: a {k.probe.lower()} kill at +{k.t - ev.started:.1f} s" for k in pending]
            + [f"{p} evicted" for p in a.pods.evicted]
        )
        why = "; ".join(
            [f"{v}: {r.pod} restarted by {r.describe()}, {wrong}" for r in other]
            + [f"{v}: {k.pod} killed for its {k.probe.lower()} probe" for k in pending]
            + [f"{v}: {p} evicted" for p in a.pods.evicted]
        )
        return Line(v, "kill_reason", expected, measured, NOT_HELD, why)
    if unknown:
        measured += "; cause unknown: " + ", ".join(f"{r.pod} at +{r.t - ev.started:.1f} s ({r.evidence})" for r in unknown)
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, "kill_reason", expected, measured, state, f"{v}: {len(unknown)} restart(s) whose cause is not known yet")
    if not restarts:
        return Line(v, "kill_reason", expected, "no restart to attribute", NOTHING, f"{v}: no restart, so no cause to judge")
    return Line(v, "kill_reason", expected, measured, HELD, f"{v}: {held}")


def _first_restart(expected: str, a: VariantAnalysis, ev: Evidence) -> Line:
    """first_restart: 'liveness' or 'exit': what ended the variant's first container to end (first_end)."""
    v, first = a.variant, first_end(a)
    if first is None:
        return Line(v, "first_restart", expected, "no container ended", NOT_HELD if ev.settled else NOT_YET, f"{v}: no restart yet")
    pod, t, cause = first
    measured = f"{CAUSES[cause]} ({pod} at +{t - ev.started:.1f} s)"
    if cause == "unknown":
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, "first_restart", expected, measured, state, f"{v}: the first restart's cause is not known yet")
    state = HELD if cause == expected else NOT_HELD
    return Line(v, "first_restart", expected, measured, state, f"{v}: the first container ended by {CAUSES[cause]}")


def _kill_timing(expected, a: VariantAnalysis, ev: Evidence) -> Line:
    v, key = a.variant, "kill_timing"
    probe = a.liveness_probe
    if probe is None:
        state = NOT_HELD if ev.live else NOT_MEASURED
        return Line(
            v, key, str(expected), "no liveness probe settings recorded", state, f"{v} has no liveness probe to time a kill against"
        )
    if expected == "from-action":
        if not ev.actions:
            return Line(v, key, expected, "no action recorded in the timeline", NOT_MEASURED, f"{v}: no action to time a kill from")
        window = kill_window(probe, ev.run, a.settings, from_action=True)
        first = first_kill_after_action(a, ev.actions)
        at = f" (+{ev.actions[0].t - ev.started:.0f} s: {ev.actions[0].what})"
        predicted = f"first kill {window.low:.0f}-{window.high:.0f} s after the first action{at}"
        if first is None:
            return Line(v, key, predicted, "no liveness kill after it", NOT_HELD, f"{v}: no liveness kill after the action")
        return Line(
            v,
            key,
            predicted,
            f"{first:.1f} s after it",
            HELD if window.contains(first) else NOT_HELD,
            f"{v}: killed {first:.1f} s after it",
        )
    kw, first = ev.kill_window, a.first_liveness_kill_s
    predicted = f"first kill at {kw.low:.0f}-{kw.high:.0f} s"
    unknown = [r for r in a.pods.restarts if r.cause == "unknown"]
    if first is None and unknown:
        # A restart whose cause nothing recorded (the kubelet's events for the pod spent, no probe counter):
        # it may be the kill, so its absence is not evidence.
        r = unknown[0]
        why = f"{v}: restarted at +{r.t - ev.started:.1f} s by a cause not known yet: {r.evidence}"
        measured = f"a restart of unknown cause at +{r.t - ev.started:.1f} s"
        return Line(v, key, predicted, measured, NOT_YET if ev.live else NOT_MEASURED, why)
    if first is None:
        state = NOT_YET if ev.live and ev.elapsed < kw.high else NOT_HELD
        why = f"{v}: no liveness kill by +{ev.elapsed:.0f} s (the probe's window: {kw.low:.0f}-{kw.high:.0f} s)"
        return Line(v, key, predicted, "no liveness kill", state, why)
    inside = kw.contains(first)
    why = f"{v}: first liveness kill at +{first:.1f} s, {'within' if inside else 'outside'} {kw.low:.0f}-{kw.high:.0f} s"
    return Line(v, key, predicted, f"+{first:.1f} s", HELD if inside else NOT_HELD, why)


def _ready(expected, a: VariantAnalysis, ev: Evidence) -> Line:
    v = a.variant
    if not a.pods.ready:
        return Line(v, "ready", expected, "no pod snapshots", NOT_MEASURED, f"{v}: no pod snapshots")
    seen = not_ready_during_load(a)
    measured = f"NotReady in {len(seen)} snapshot(s)" + (f", from +{seen[0]:.0f} s to +{seen[-1]:.0f} s" if seen else "")
    if expected == "throughout":
        state = NOT_HELD if seen else (HELD if ev.settled else NOT_YET)
        why = f"{v}: not Ready at +{seen[0]:.0f} s" if seen else f"{v}: Ready throughout so far (+{ev.elapsed:.0f} s)"
    else:
        state = HELD if seen else (NOT_HELD if ev.settled else NOT_YET)
        why = f"{v}: NotReady from +{seen[0]:.0f} s" if seen else f"{v}: Ready throughout so far (+{ev.elapsed:.0f} s)"
    return Line(v, "ready", expected, measured, state, why)


def _throughput(a: VariantAnalysis, ev: Evidence) -> Line:
    v, offered = a.variant, ev.offered
    predicted = f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s"
    got = hold_throughput(a)
    hold = a.phases.hold + 10 - a.phases.start
    if ev.live and ev.elapsed < hold + THROUGHPUT_MIN_S:
        got = None
    if got is None:
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(
            v, "throughput", predicted, "no samples during the hold", state, f"{v}: throughput measured from +{hold:.0f} s, for 10 s"
        )
    ok = got >= THROUGHPUT_SHARE * offered
    return Line(
        v,
        "throughput",
        predicted,
        f"median {got:.1f} req/s",
        HELD if ok else NOT_HELD,
        f"{v} answers {got:.1f} of {offered:g} req/s offered",
    )


def _killed_before_started(expected, a: VariantAnalysis, ev: Evidence) -> Line:
    """killed_before_started: liveness kills before the container's startup probe passed (kubernetes#141155)."""
    v, key = a.variant, "killed_before_started"
    found = a.killed_before_started()
    if found is None:
        return Line(v, key, str(expected), "the kubelet's probe counter was not read", NOT_MEASURED, f"{v} {key}: not measured")
    early, judged = found
    measured = f"{len(early)} of the {judged} liveness kills of containers started in the run" + "".join(
        f"; {k.pod.rsplit('-', 1)[-1]} at +{k.t - ev.started:.1f} s" for k in early
    )
    return Line(v, key, str(expected), measured, count_state(expected, len(early), True), f"{v} {key}: {measured}")


def _after_the_run(key: str, expected, a: VariantAnalysis, ev: Evidence) -> Line:
    """The predictions only a finished run can judge (the step loader refuses them for the workshop)."""
    v = a.variant

    def line(predicted, measured, state):
        return Line(v, key, predicted, measured, state, f"{v} {key}: {measured}")

    if key == "recovers":
        r = a.recovery_s
        measured = "not within the quiet period" if r is None else f"all Ready {r:.0f} s after load stop"
        return line("all Ready within the quiet period", measured, HELD if r is not None else NOT_HELD)
    if key in ("recovery_after_actions", "kills_after_actions"):
        if not ev.actions:
            return line(str(expected), "no action recorded in the timeline", NOT_MEASURED)
        last = ev.actions[-1]
        if last.done is None:
            return line(str(expected), f"the last action ({last.what}) was not done when the recording ended", NOT_MEASURED)
        done = f"+{last.done - ev.started:.0f} s"
        if key == "kills_after_actions":
            n = kills_after_actions(a, ev.actions)
            return line(str(expected), f"{n} liveness kill(s) after the last action (done at {done})", count_state(expected, n, True))
        r = recovery_after_actions(a, ev.actions)
        predicted = f"{expected} s after the last action (rolled out at {done})"
        if r is None:
            return line(predicted, "not Ready to the end of the recording", NOT_HELD)
        return line(predicted, f"all Ready {r:.0f} s after it", count_state(expected, round(r), True))
    if key in ("added_restarts", "added_liveness_failures"):
        added = added_pods(a, ev.actions)
        if added is None:
            return line(str(expected), f"no recorded action raised {v}'s replicas", NOT_MEASURED)
        if key == "added_restarts":
            n = sum(1 for r in a.pods.restarts if r.pod in added) + sum(1 for k in a.pending_kills if k.pod in added)
        else:
            n = sum(1 for x in a.probes.liveness_failures if x.pod in added)
        return line(str(expected), f"{n} ({len(added)} pod(s) added)", count_state(expected, n, True))
    if key in ("throttled_pct", "throttled_peak_pct"):
        peak = key == "throttled_peak_pct"
        pct = throttled_pct(a, ev.throttled_peak if peak else ev.throttled)
        if pct is None:
            why = "no CFS throttling counters recorded (nodes/proxy not readable?)"
            if peak and ev.throttled:
                why = f"no interval with {PEAK_MIN_PERIODS} CFS periods or more"
            return line(f"{expected} %", why, NOT_MEASURED)
        measured = f"{pct:.0f} % of periods" + (" in its most throttled 15 s" if peak else "")
        return line(f"{expected} %", measured, count_state(expected, round(pct), True))
    if key == "gc_paused_before_kills_pct":
        if not a.liveness_kills:
            return line(f"{expected} %", "no liveness kill", NOT_HELD)
        measured = [g for g in ev.gc if g.share is not None]
        if not measured:
            return line(f"{expected} %", f"no two answered scrapes before any of {len(ev.gc)} kill(s)", NOT_MEASURED)
        shares = sorted(round(100 * g.share) for g in measured)
        logged = sum(1 for g in measured if g.source == "log")
        waits = sorted(round(g.last_answer_s) for g in measured if g.source != "log" and g.last_answer_s is not None)
        text = f"{between(shares)} % of the time stopped for GC before {len(measured)} of {len(ev.gc)} kill(s)"
        if logged:
            text += f" ({logged} from the killed container's GC log)"
        if waits:
            text += f" (the last scrape answered {between(waits)} s before the kill)"
        return line(f"{expected} %", text, count_state(expected, round(100 * lowest_share(ev.gc)), True))
    if key in ("gc_paused_before_first_restart_pct", "in_flight_before_first_restart"):
        first, unit = ev.gc_first, (f"{expected} %" if key.endswith("_pct") else str(expected))
        if first is None:
            return line(unit, "no container ended", NOT_HELD if ev.settled else NOT_YET)
        ended = f"{first.pod}'s first restart at +{first.t - ev.started:.0f} s ({CAUSES[first.ended]})"
        if key == "in_flight_before_first_restart":
            if first.in_flight is None:
                return line(unit, f"no answered scrape before {ended}", NOT_MEASURED)
            measured = f"{first.in_flight} requests in flight in its scrapes before {ended}"
            if first.cpu_pct is None:
                return line(unit, measured, count_state(expected, first.in_flight, True))
            measured += f", its collector with {first.cpu_pct:.0f} % of a CPU in its pauses"
            if first.typical_pause_s is not None:
                # Reported, not judged: how many requests the kill needs depends on the collector's CPU (report/gc.py).
                measured += f" (a full collection {first.work_s:.2f} s of CPU at the median: {1000 * first.typical_pause_s:.0f} ms each)"
            return line(unit, measured, count_state(expected, first.in_flight, True))
        if first.share is None:
            return line(unit, f"no GC log and no two answered scrapes before {ended}", NOT_MEASURED)
        source = "its GC log" if first.source == "log" else f"its scrapes, the last {first.last_answer_s:.0f} s before it"
        text = f"{100 * first.share:.0f} % of the {first.span_s:.0f} s before {ended}, from {source}"
        return line(unit, text, count_state(expected, round(100 * first.share), True))
    if key == "first_restart":
        return _first_restart(expected, a, ev)
    if key == "first_kills_spread_s":
        spread = first_kills_spread(a)
        if spread is None:
            return line(f"{expected} s", "no liveness kill", NOT_HELD)
        killed = len({k.pod for k in a.liveness_kills})
        measured = f"{spread:.0f} s between the first kills of {killed} of {len(a.pods.pods)} pod(s)"
        return line(f"{expected} s", measured, count_state(expected, round(spread), True))
    if key == "vthreads_queued":
        x = ev.scheduler
        if x is None or x.queued_max is None:
            asked = f" ({x.readings + x.missed} asked, none answered in time)" if x else ""
            return line(str(expected), f"the scheduler was not read{asked}", NOT_MEASURED)
        return line(str(expected), x.describe(), count_state(expected, x.queued_max, True))
    if key == "ready_share_pct":
        share = ready_share(a)
        if share is None:
            return line(f"{expected} %", "no pod snapshots during the load", NOT_MEASURED)
        return line(f"{expected} %", f"{share:.0f} % of pod-seconds Ready", count_state(expected, round(share), True))
    if key == "longest_not_ready_s":
        longest = longest_not_ready(a)
        if longest is None:
            return line(f"{expected} s", "no pod snapshots during the load", NOT_MEASURED)
        return line(f"{expected} s", f"{longest:.0f} s without a Ready pod", count_state(expected, round(longest), True))
    if key == "longest_restart_wait_s":
        longest = longest_restart_wait(a)
        if longest is None:
            why = "no restart" if not a.pods.restarts else "no restart seen with its container's exit and the next one's start"
            return line(f"{expected} s", why, NOT_MEASURED if a.pods.restarts else NOT_HELD)
        waits = ", ".join(f"{w:.0f}" for w in a.pods.waits)
        return line(
            f"{expected} s",
            f"{longest:.0f} s from a container's exit to the next start (each restart: {waits} s)",
            count_state(expected, round(longest), True),
        )
    if key == "killed_before_started":
        return _killed_before_started(expected, a, ev)
    raise ValueError(f"unknown prediction {key!r}")  # the loader refuses these


def last_failure(a: VariantAnalysis) -> str | None:
    """The variant's last liveness failure or kill with its place in the count to a kill: from the kubelet's
    probe counter where it was read ("liveness failure 2/3 at +9.0 s (the kubelet's counter)": the row of
    failures since the last other result, exact whatever the events say of a pod reused from an earlier
    swarm), else from the events' countdown (base.countdown, as the Live tab numbers it)."""
    probe = a.liveness_probe
    if not probe:
        return None
    found = []
    for rows in a.counter.values():
        run, last = 0, None
        for (_, b), (t, c) in zip(rows, rows[1:], strict=False):
            before, now = b.get("Liveness", {}), c.get("Liveness", {})
            failed = now.get("failed", 0) - before.get("failed", 0)
            other = now.get("successful", 0) + now.get("unknown", 0) - before.get("successful", 0) - before.get("unknown", 0)
            if failed < 0 or other < 0 or now.get("uid") != before.get("uid"):
                run, last = 0, None
                continue
            run = run + failed if not other else failed
            last = t if failed else last
            if run >= probe.failure_threshold:
                found.append(("liveness kill", probe.failure_threshold, t))
                run, last = 0, None
        if run and last is not None:
            found.append(("liveness failure", run, last))
    found = [x for x in found if x[2] >= a.phases.start - 1]
    if found:
        what, n, t = max(found, key=lambda x: x[2])
        return f"{what} {n}/{probe.failure_threshold} at +{t - a.phases.start:.1f} s (the kubelet's counter)"
    marks = [m for m in a.countdown() if m.t >= a.phases.start - 1 and m.kind != "unreported"]
    if not marks:
        return None
    m = marks[-1]
    what = "liveness kill" if m.kind == "kill" else "liveness failure"
    return f"{what} {m.label} at +{m.t - a.phases.start:.1f} s".replace("  ", " ")


def evidence_of(a: VariantAnalysis, run: dict, facts: RunFacts) -> Evidence:
    """What a finished run gives the predictions of variant A: its whole recording, the lab's actions, the
    throttling, the collector and the virtual-thread scheduler as read."""
    return Evidence(
        a,
        run,
        live=False,
        elapsed=a.phases.end - a.phases.start,
        actions=facts.actions,
        throttled=facts.cpu.throttled,
        throttled_peak=facts.cpu.throttled_peak,
        gc=facts.gc.get(a.variant, []),
        gc_first=facts.gc_first.get(a.variant),
        scheduler=facts.schedulers.get(a.variant),
    )


def judge_predictions(predict: dict[str, dict], facts: RunFacts) -> tuple[list[Line], list[str]]:
    """PREDICT (per variant, its predictions: a scenario's ``predict``) judged on a finished run's FACTS: the
    lines, and the predicted variants the run did not have (evidence that it cannot tell)."""
    lines, missing = [], []
    for variant, expected in predict.items():
        a = facts.analyses.get(variant)
        if a is None:
            missing.append(f"{variant} was not in the run (run.json variants: {facts.run['variants']})")
            continue
        ev = evidence_of(a, facts.run, facts)
        lines += [judge_line(key, value, ev) for key, value in expected.items()]
    return lines, missing


def decide(lines: list[Line], independent: list[str], race: list[str] = ()) -> tuple[str, list[str]]:
    """The outcome of a finished run's judged LINES (module doc), and why it cannot tell. INDEPENDENT: the
    evidence no prediction is about that voids the run (``RunFacts.cannot_tell``, a predicted variant
    missing); RACE: "<variant> <key>" of the lines that are a race's, which decide nothing (the lab counts
    them over its runs)."""
    if independent:
        return CANNOT_TELL, list(independent)
    deciding = [x for x in lines if f"{x.variant} {x.key}" not in race and x.held is not None]
    if any(x.held is False for x in deciding):
        return NOT_HELD, []
    why = [f"{x.variant} {x.key}: {x.measured}" for x in lines if x.state == NOT_MEASURED]
    if not why and not deciding:
        why = ["nothing to judge: no prediction outside the race was about something that happened in the run"]
    return (CANNOT_TELL, why) if why else (HELD, [])
