"""The measures of kills and restarts: how many, of which pods, by what cause, when, and the probe failures
that lead to them. Each judge is registered by its prediction key (``measure.measure``); module doc of
``report.predictions`` for the rules they share.
"""

from liveness_lab.base.causes import CAUSES

from .facts import first_end, first_kill_after_action, first_kills_spread, longest_restart_wait
from .kills import kill_window
from .measure import (
    HELD,
    NOT_HELD,
    NOT_MEASURED,
    NOT_YET,
    NOTHING,
    Evidence,
    Line,
    after_run_line,
    bounds,
    count_line,
    count_state,
    in_words,
    measure,
)
from .variant import VariantAnalysis

# kill_reason's values: the causes (base/causes.py) each allows a restart to have.
KILL_REASONS = {"liveness": ("liveness",), "liveness-or-exit": ("liveness", "exit")}


def restarts_now(a: VariantAnalysis) -> int:
    """Restarts, counting a kill whose restart has not come yet as the restart it starts."""
    return len(a.pods.restarts) + len(a.pending_kills)


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


@measure("restarts", live=True)
def _restarts(key: str, expected, ev: Evidence) -> Line:
    """restarts: the variant's container restarts, a kill whose restart has not come yet counted (restarts_now)."""
    a, v = ev.analysis, ev.analysis.variant
    kills = [k.t - ev.started for k in a.liveness_kills]
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
        why = f"{v}: no liveness kill yet (+{ev.elapsed:.0f} s{'; last: ' + last if last else ''}; expected by +{ev.evidence_s:.0f} s)"
    else:
        why = f"{v}: no restart so far (+{ev.elapsed:.0f} s of the {ev.evidence_s:.0f} s a kill would take)"
    return Line(v, key, str(expected), measured, state, why)


@measure("restarted_pods", live=True)
def _restarted_pods(key: str, expected, ev: Evidence) -> Line:
    """restarted_pods: 'all' or a count of the variant's pods that restarted at least once."""
    a, v = ev.analysis, ev.analysis.variant
    restarted = {r.pod for r in a.pods.restarts} | {k.pod for k in a.pending_kills}
    n, total = len(restarted & set(a.pods.pods)), len(a.pods.pods)
    if expected == "all":
        state = HELD if n == total > 0 else (NOT_HELD if ev.settled else NOT_YET)
    else:
        state = count_state(expected, n, ev.settled)
    return Line(v, key, str(expected), f"{n} of {total}", state, f"{v}: {n} of {total} pod(s) restarted")


@measure("kill_reason", live=True)
def _kill_reason(key: str, expected: str, ev: Evidence) -> Line:
    """kill_reason: every restart of one of the causes EXPECTED allows (KILL_REASONS): 'liveness' a liveness
    kill of its own, 'liveness-or-exit' that or the application's own exit (a JVM out of heap:
    -XX:+ExitOnOutOfMemoryError); none a startup kill, OOMKilled, evicted."""
    a = ev.analysis
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
        return Line(v, key, expected, measured, NOT_HELD, why)
    if unknown:
        measured += "; cause unknown: " + ", ".join(f"{r.pod} at +{r.t - ev.started:.1f} s ({r.evidence})" for r in unknown)
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, key, expected, measured, state, f"{v}: {len(unknown)} restart(s) whose cause is not known yet")
    if not restarts:
        return Line(v, key, expected, "no restart to attribute", NOTHING, f"{v}: no restart, so no cause to judge")
    return Line(v, key, expected, measured, HELD, f"{v}: {held}")


@measure("first_restart")
def _first_restart(key: str, expected: str, ev: Evidence) -> Line:
    """first_restart: 'liveness' or 'exit': what ended the variant's first container to end (first_end)."""
    a = ev.analysis
    v, first = a.variant, first_end(a)
    if first is None:
        return Line(v, key, expected, "no container ended", NOT_HELD if ev.settled else NOT_YET, f"{v}: no restart yet")
    pod, t, cause = first
    measured = f"{CAUSES[cause]} ({pod} at +{t - ev.started:.1f} s)"
    if cause == "unknown":
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, key, expected, measured, state, f"{v}: the first restart's cause is not known yet")
    state = HELD if cause == expected else NOT_HELD
    return Line(v, key, expected, measured, state, f"{v}: the first container ended by {CAUSES[cause]}")


@measure("kill_timing", live=True)
def _kill_timing(key: str, expected, ev: Evidence) -> Line:
    """kill_timing: the first liveness kill within the window of the probe's settings, from the load's start
    ('from-settings') or from the scenario's first action ('from-action')."""
    a = ev.analysis
    v, probe = a.variant, a.liveness_probe
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


@measure("liveness_failures", live=True)
def _liveness_failures(key: str, expected, ev: Evidence) -> Line:
    """liveness_failures: failed liveness probes, up to the window's end on a live window."""
    a = ev.analysis
    n, source = a.liveness_failures(end=a.phases.start + ev.elapsed if ev.live else None)
    return count_line(key, expected, n, f"{n} ({source})", ev, f"{n} liveness failures")


@measure("unhealthy", live=True)
def _unhealthy(key: str, expected, ev: Evidence) -> Line:
    """unhealthy: Unhealthy events of any probe."""
    n = ev.analysis.probes.unhealthy
    return count_line(key, expected, n, str(n), ev, f"{n} Unhealthy events (any probe)")


@measure("killed_before_started")
def _killed_before_started(key: str, expected, ev: Evidence) -> Line:
    """killed_before_started: liveness kills before the container's startup probe passed (kubernetes#141155)."""
    a = ev.analysis
    v, found = a.variant, a.killed_before_started()
    if found is None:
        return Line(v, key, str(expected), "the kubelet's probe counter was not read", NOT_MEASURED, f"{v} {key}: not measured")
    early, judged = found
    measured = f"{len(early)} of the {judged} liveness kills of containers started in the run" + "".join(
        f"; {k.pod.rsplit('-', 1)[-1]} at +{k.t - ev.started:.1f} s" for k in early
    )
    return after_run_line(key, ev, str(expected), measured, count_state(expected, len(early), True))


@measure("inherited_started")
def _inherited_started(key: str, expected, ev: Evidence) -> Line:
    """inherited_started: containers reported started before their startup probe ran (kubernetes#141155)."""
    a = ev.analysis
    inherited = a.pods.inherited_started
    if inherited is None:
        return after_run_line(key, ev, str(expected), "the pods' started flag was not recorded", NOT_MEASURED)
    began = [s for pod, times in a.pods.starts.items() for s in times if s >= a.pods.first_seen.get(pod, a.phases.start)]
    n = sum(len(times) for times in inherited.values())
    measured = f"{n} of the {len(began)} containers started in the run reported started before their startup probe ran"
    return after_run_line(key, ev, str(expected), measured, count_state(expected, n, True))


@measure("first_kills_spread_s")
def _first_kills_spread(key: str, expected, ev: Evidence) -> Line:
    """first_kills_spread_s: seconds from the variant's first liveness kill to its last pod's first."""
    a = ev.analysis
    spread = first_kills_spread(a)
    if spread is None:
        return after_run_line(key, ev, f"{expected} s", "no liveness kill", NOT_HELD)
    killed = len({k.pod for k in a.liveness_kills})
    measured = f"{spread:.0f} s between the first kills of {killed} of {len(a.pods.pods)} pod(s)"
    return after_run_line(key, ev, f"{expected} s", measured, count_state(expected, round(spread), True))


@measure("longest_restart_wait_s")
def _longest_restart_wait(key: str, expected, ev: Evidence) -> Line:
    """longest_restart_wait_s: the longest wait from a container's exit to the next one's start (the back-off)."""
    a = ev.analysis
    longest = longest_restart_wait(a)
    if longest is None:
        why = "no restart" if not a.pods.restarts else "no restart seen with its container's exit and the next one's start"
        return after_run_line(key, ev, f"{expected} s", why, NOT_MEASURED if a.pods.restarts else NOT_HELD)
    waits = ", ".join(f"{w:.0f}" for w in a.pods.waits)
    return after_run_line(
        key,
        ev,
        f"{expected} s",
        f"{longest:.0f} s from a container's exit to the next start (each restart: {waits} s)",
        count_state(expected, round(longest), True),
    )
