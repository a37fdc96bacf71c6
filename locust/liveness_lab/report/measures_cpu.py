"""The measures of what starved the JVM: CFS throttling, the collector's pauses and the requests in flight
before a kill or an exit, and the virtual-thread scheduler's queue. A finished run only. Each judge is
registered by its prediction key (``measure.measure``); module doc of ``report.predictions`` for the rules
they share.
"""

from liveness_lab.base.causes import CAUSES

from .cpu import PEAK_MIN_PERIODS
from .facts import throttled_pct
from .gc import lowest_share
from .measure import NOT_HELD, NOT_MEASURED, NOT_YET, Evidence, Line, after_run_line, between, count_state, measure


@measure("throttled_pct", "throttled_peak_pct")
def _throttled(key: str, expected, ev: Evidence) -> Line:
    """throttled_pct: percent of CFS periods throttled, the variant's most throttled pod; throttled_peak_pct:
    the same in its most throttled 15 s."""
    peak = key == "throttled_peak_pct"
    pct = throttled_pct(ev.analysis, ev.throttled_peak if peak else ev.throttled)
    if pct is None:
        why = "no CFS throttling counters recorded (nodes/proxy not readable?)"
        if peak and ev.throttled:
            why = f"no interval with {PEAK_MIN_PERIODS} CFS periods or more"
        return after_run_line(key, ev, f"{expected} %", why, NOT_MEASURED)
    measured = f"{pct:.0f} % of periods" + (" in its most throttled 15 s" if peak else "")
    return after_run_line(key, ev, f"{expected} %", measured, count_state(expected, round(pct), True))


@measure("gc_paused_before_kills_pct")
def _gc_paused_before_kills(key: str, expected, ev: Evidence) -> Line:
    """gc_paused_before_kills_pct: the lowest over the liveness kills of the time stopped for GC before each."""
    if not ev.analysis.liveness_kills:
        return after_run_line(key, ev, f"{expected} %", "no liveness kill", NOT_HELD)
    measured = [g for g in ev.gc if g.share is not None]
    if not measured:
        return after_run_line(key, ev, f"{expected} %", f"no two answered scrapes before any of {len(ev.gc)} kill(s)", NOT_MEASURED)
    shares = sorted(round(100 * g.share) for g in measured)
    logged = sum(1 for g in measured if g.source == "log")
    waits = sorted(round(g.last_answer_s) for g in measured if g.source != "log" and g.last_answer_s is not None)
    text = f"{between(shares)} % of the time stopped for GC before {len(measured)} of {len(ev.gc)} kill(s)"
    if logged:
        text += f" ({logged} from the killed container's GC log)"
    if waits:
        text += f" (the last scrape answered {between(waits)} s before the kill)"
    return after_run_line(key, ev, f"{expected} %", text, count_state(expected, round(100 * lowest_share(ev.gc)), True))


@measure("gc_paused_before_first_restart_pct", "in_flight_before_first_restart")
def _before_first_restart(key: str, expected, ev: Evidence) -> Line:
    """gc_paused_before_first_restart_pct: the time stopped for GC before the first container to end;
    in_flight_before_first_restart: the most requests in flight in its scrapes before it."""
    first, unit = ev.gc_first, (f"{expected} %" if key.endswith("_pct") else str(expected))
    if first is None:
        return after_run_line(key, ev, unit, "no container ended", NOT_HELD if ev.settled else NOT_YET)
    ended = f"{first.pod}'s first restart at +{first.t - ev.started:.0f} s ({CAUSES[first.ended]})"
    if key == "in_flight_before_first_restart":
        if first.in_flight is None:
            return after_run_line(key, ev, unit, f"no answered scrape before {ended}", NOT_MEASURED)
        measured = f"{first.in_flight} requests in flight in its scrapes before {ended}"
        if first.cpu_pct is None:
            return after_run_line(key, ev, unit, measured, count_state(expected, first.in_flight, True))
        measured += f", its collector with {first.cpu_pct:.0f} % of a CPU in its pauses"
        if first.typical_pause_s is not None:
            # Reported, not judged: how many requests the kill needs depends on the collector's CPU (report/gc.py).
            measured += f" (a full collection {first.work_s:.2f} s of CPU at the median: {1000 * first.typical_pause_s:.0f} ms each)"
        return after_run_line(key, ev, unit, measured, count_state(expected, first.in_flight, True))
    if first.share is None:
        return after_run_line(key, ev, unit, f"no GC log and no two answered scrapes before {ended}", NOT_MEASURED)
    source = "its GC log" if first.source == "log" else f"its scrapes, the last {first.last_answer_s:.0f} s before it"
    text = f"{100 * first.share:.0f} % of the {first.span_s:.0f} s before {ended}, from {source}"
    return after_run_line(key, ev, unit, text, count_state(expected, round(100 * first.share), True))


@measure("vthreads_queued")
def _vthreads_queued(key: str, expected, ev: Evidence) -> Line:
    """vthreads_queued: the most virtual threads waiting for a carrier in one reading of the scheduler."""
    x = ev.scheduler
    if x is None or x.queued_max is None:
        asked = f" ({x.readings + x.missed} asked, none answered in time)" if x else ""
        return after_run_line(key, ev, str(expected), f"the scheduler was not read{asked}", NOT_MEASURED)
    return after_run_line(key, ev, str(expected), x.describe(), count_state(expected, x.queued_max, True))
