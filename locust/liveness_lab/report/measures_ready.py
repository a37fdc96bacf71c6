"""The measures of readiness: whether the variant's pods stayed Ready, how much of the load they were, the
longest stretch with none, and their recovery after the load. Each judge is registered by its prediction
key (``measure.measure``); module doc of ``report.predictions`` for the rules they share.
"""

from .facts import longest_not_ready, not_ready_during_load, ready_share
from .measure import HELD, NOT_HELD, NOT_MEASURED, NOT_YET, Evidence, Line, after_run_line, count_state, measure


@measure("ready", live=True)
def _ready(key: str, expected, ev: Evidence) -> Line:
    """ready: 'throughout' (every pod Ready in every snapshot of the load) or 'not-throughout'."""
    a = ev.analysis
    v = a.variant
    if not a.pods.ready:
        return Line(v, key, expected, "no pod snapshots", NOT_MEASURED, f"{v}: no pod snapshots")
    seen = not_ready_during_load(a)
    measured = f"NotReady in {len(seen)} snapshot(s)" + (f", from +{seen[0]:.0f} s to +{seen[-1]:.0f} s" if seen else "")
    if expected == "throughout":
        state = NOT_HELD if seen else (HELD if ev.settled else NOT_YET)
        why = f"{v}: not Ready at +{seen[0]:.0f} s" if seen else f"{v}: Ready throughout so far (+{ev.elapsed:.0f} s)"
    else:
        state = HELD if seen else (NOT_HELD if ev.settled else NOT_YET)
        why = f"{v}: NotReady from +{seen[0]:.0f} s" if seen else f"{v}: Ready throughout so far (+{ev.elapsed:.0f} s)"
    return Line(v, key, expected, measured, state, why)


@measure("recovers")
def _recovers(key: str, expected, ev: Evidence) -> Line:
    """recovers: every pod Ready again within the quiet period after the load stopped."""
    r = ev.analysis.recovery_s
    measured = "not within the quiet period" if r is None else f"all Ready {r:.0f} s after load stop"
    return after_run_line(key, ev, "all Ready within the quiet period", measured, HELD if r is not None else NOT_HELD)


@measure("ready_share_pct")
def _ready_share(key: str, expected, ev: Evidence) -> Line:
    """ready_share_pct: percent of the variant's pod-seconds Ready during the load."""
    share = ready_share(ev.analysis)
    if share is None:
        return after_run_line(key, ev, f"{expected} %", "no pod snapshots during the load", NOT_MEASURED)
    return after_run_line(key, ev, f"{expected} %", f"{share:.0f} % of pod-seconds Ready", count_state(expected, round(share), True))


@measure("longest_not_ready_s")
def _longest_not_ready(key: str, expected, ev: Evidence) -> Line:
    """longest_not_ready_s: the longest stretch of the load with no Ready pod of the variant."""
    longest = longest_not_ready(ev.analysis)
    if longest is None:
        return after_run_line(key, ev, f"{expected} s", "no pod snapshots during the load", NOT_MEASURED)
    return after_run_line(key, ev, f"{expected} s", f"{longest:.0f} s without a Ready pod", count_state(expected, round(longest), True))
