"""The measures of the load: the swarm's requests as Locust counted them, failed, shed (429) or otherwise,
and the throughput of the hold against the offered. Each judge is registered by its prediction key
(``measure.measure``); module doc of ``report.predictions`` for the rules they share.
"""

from liveness_lab.base.scenario import THROUGHPUT_SHARE

from .facts import hold_throughput, shed
from .measure import HELD, NOT_HELD, NOT_MEASURED, NOT_YET, Evidence, Line, count_line, measure

# How much of the hold the throughput rule (THROUGHPUT_SHARE) needs in a live window.
THROUGHPUT_MIN_S = 10.0


@measure("failures", "shed", "failures_not_shed", live=True)
def _failures(key: str, expected, ev: Evidence) -> Line:
    """failures, shed, failures_not_shed: requests failed, answered 429, and failed otherwise."""
    a = ev.analysis
    f = a.figures
    n = {"failures": f.failures, "shed": shed(a), "failures_not_shed": f.failures - shed(a)}[key]
    what = {"failures": "failed", "shed": "answered 429", "failures_not_shed": "failed other than 429"}[key]
    measured = f"{n} of {f.requests}" + (f" ({f.failure_ratio:.1%})" if key == "failures" else "")
    if key == "failures_not_shed":
        other = ", ".join(f"{error} x{k}" for error, k in f.errors if "code=429" not in error)
        measured = f"{n}" + (f" ({other})" if other else "")
    return count_line(key, expected, n, measured, ev, f"{n} of {f.requests} requests {what}")


@measure("throughput", live=True)
def _throughput(key: str, expected, ev: Evidence) -> Line:
    """throughput: 'offered': the hold's median requests/s at least THROUGHPUT_SHARE of the offered, from 10 s
    after the ramp, once 10 s of it were measured."""
    a = ev.analysis
    v, offered = a.variant, ev.offered
    predicted = f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s"
    got = hold_throughput(a)
    hold = a.phases.hold + 10 - a.phases.start
    if ev.live and ev.elapsed < hold + THROUGHPUT_MIN_S:
        got = None
    if got is None:
        state = NOT_YET if ev.live else NOT_MEASURED
        return Line(v, key, predicted, "no samples during the hold", state, f"{v}: throughput measured from +{hold:.0f} s, for 10 s")
    ok = got >= THROUGHPUT_SHARE * offered
    return Line(
        v,
        key,
        predicted,
        f"median {got:.1f} req/s",
        HELD if ok else NOT_HELD,
        f"{v} answers {got:.1f} of {offered:g} req/s offered",
    )
