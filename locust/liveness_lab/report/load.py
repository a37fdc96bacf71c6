"""The load of one variant: what Locust counted (its stats history as a series, its totals, failures and
latency percentiles) and what the variant's own pods served against what Locust offered (``served_load``,
from the service's counters the recorder scraped), with what that comparison says of the run
(``load_findings``: another load generator, a variant busy before the swarm, unanswered scrapes).
"""

import math
from dataclasses import dataclass

from liveness_lab.base.variants import request_name

from .recording import Phases, RunData, num

# How many more requests a variant's pods may count than Locust offered it, with nobody else sending any:
# one per user, because each user has at most one request in flight and those Locust cuts off when it
# stops its users are served but never counted by Locust; plus 5 % of the offered load, because Locust's
# FastHttpUser client sends a request again once when a kept-alive connection was closed under it (a
# restarting pod does that), which the service may count twice. Another swarm adds its whole rate, far more.
EXTRA_PER_USER = 1
EXTRA_SHARE = 0.05


@dataclass
class Counts:
    """Locust's request and failure counts of one variant, and its latency percentiles in ms."""

    requests: int
    failures: int
    p50: float | None
    p95: float | None
    p99: float | None


def percentiles(row: dict) -> dict:
    """The p50, p95 and p99 of a Locust CSV row (stats or stats history), None where it has none."""
    return {"p50": num(row.get("50%")), "p95": num(row.get("95%")), "p99": num(row.get("99%"))}


@dataclass
class Sample(Counts):
    """One row of a variant's stats history: requests/s and failures/s over the last window, latency."""

    t: float
    rps: float = 0.0
    fps: float = 0.0


def series(history: list[dict], variant: str, window_s: float = 5.0) -> list[Sample]:
    """The variant's stats history rows.

    Requests/s and failures/s come from the cumulative counts over the last WINDOW_S seconds, not from
    Locust's own "current" columns: those are relative to the last request, so they freeze at their last
    value when the load stops. Percentiles (Locust's last 10 s) are dropped where no request ended then.
    """
    rows = sorted(
        (
            Sample(
                t=num(row["Timestamp"]),
                requests=int(num(row["Total Request Count"]) or 0),
                failures=int(num(row["Total Failure Count"]) or 0),
                **percentiles(row),
            )
            for row in history
            if row.get("Name") == request_name(variant)
        ),
        key=lambda r: r.t,
    )
    j = 0
    last_change = None
    for i, r in enumerate(rows):
        while j < i and r.t - rows[j + 1].t >= window_s:
            j += 1
        span = r.t - rows[j].t
        r.rps = (r.requests - rows[j].requests) / span if span > 0 else 0.0
        r.fps = (r.failures - rows[j].failures) / span if span > 0 else 0.0
        if i == 0 or r.requests != rows[i - 1].requests:
            last_change = r.t
        if last_change is None or r.t - last_change > 10:
            r.p50 = r.p95 = r.p99 = None
    return rows


@dataclass
class RequestFigures(Counts):
    """Locust's figures of one variant: totals, percentiles, errors, the median latency during the hold."""

    errors: list[tuple[str, int]]  # (error, occurrences), most frequent first
    hold_median_p50: float | None

    @property
    def failure_ratio(self) -> float:
        return self.failures / self.requests if self.requests else 0.0


def request_figures(data: RunData, variant: str, rows: list[Sample], phases: Phases) -> RequestFigures:
    totals = next((r for r in data.totals if r.get("Name") == request_name(variant)), {})
    hold_p50 = sorted(r.p50 for r in rows if r.p50 is not None and phases.hold + 10 <= r.t <= phases.stop)
    return RequestFigures(
        requests=int(num(totals.get("Request Count")) or max((r.requests for r in rows), default=0)),
        failures=int(num(totals.get("Failure Count")) or max((r.failures for r in rows), default=0)),
        **percentiles(totals),
        errors=sorted(
            ((e.get("Error", ""), int(num(e.get("Occurrences")) or 0)) for e in data.failures if e.get("Name") == request_name(variant)),
            key=lambda x: -x[1],
        ),
        hold_median_p50=hold_p50[len(hold_p50) // 2] if hold_p50 else None,
    )


@dataclass
class ServedLoad:
    """One variant's load as its own pods counted it (the recorder's ``metrics`` samples), against what
    Locust offered it."""

    variant: str
    offered: int  # Locust's requests to the variant, failed ones included
    allowance: int  # load_allowance: what the pods may count beyond `offered` on their own
    served: int | None  # requests the pods finished over the recording; None: no pod was ever read
    samples: int  # answered scrapes
    missed: dict[str, int]  # pod -> scrapes it did not answer
    resets: dict[str, int]  # pod -> counter restarts from 0 (its container restarted)
    before_start_in_flight: int  # most requests in flight in one sample before Locust started
    before_start_served: int  # requests finished between the samples before Locust started

    @property
    def ratio(self) -> float | None:
        return None if self.served is None or not self.offered else self.served / self.offered

    @property
    def extra(self) -> bool:
        """More served than offered, beyond the allowance: someone else was sending requests."""
        return self.served is not None and self.served > self.offered + self.allowance

    @property
    def busy_before(self) -> bool:
        return self.before_start_in_flight > 0 or self.before_start_served > 0

    def describe(self) -> str:
        """The served-vs-offered figure: "3,702 / 3,720 (100 %)"."""
        if self.served is None:
            return f"not read / {self.offered:,}"
        ratio = f" ({self.ratio:.0%})" if self.ratio is not None else ""
        return f"{self.served:,} / {self.offered:,}{ratio}"

    def to_json(self) -> dict:
        return {
            "served": self.served,
            "offered": self.offered,
            "allowance": self.allowance,
            "samples": self.samples,
            "missed": self.missed,
            "resets": self.resets,
            "beforeStartInFlight": self.before_start_in_flight,
            "beforeStartServed": self.before_start_served,
            "extra": self.extra,
            "busyBefore": self.busy_before,
        }


def load_allowance(offered: int, users: int) -> int:
    """How many requests beyond OFFERED a variant's pods may count with no other load (see EXTRA_PER_USER)."""
    return users * EXTRA_PER_USER + math.ceil(offered * EXTRA_SHARE)


def records_metrics(timeline: list[dict]) -> bool:
    """The timeline samples the service's own counters: its start says so, or a `metrics` record is in it."""
    return any(r["kind"] == "metrics" or (r["kind"] == "start" and r.get("metrics")) for r in timeline)


def served_load(timeline: list[dict], variant: str, start: float, offered: int, users: int) -> ServedLoad:
    """Requests the variant's pods served over the recording: per pod, the sum of the increases of its
    counter between answered scrapes; a counter that went down, or a restart count that went up, started
    again from 0 with the new container, so its whole value is the increase. A pod first seen after the
    first sample came up during the run and counts from 0. Before START (Locust's start) the pods must be
    idle: nothing in flight, nothing finished between two samples."""
    samples = [r for r in timeline if r["kind"] == "metrics"]
    first_pods = set(samples[0]["pods"]) | set(samples[0].get("missed", {})) if samples else set()
    last, served, answered, missed, resets = {}, {}, 0, {}, {}
    in_flight_before = served_before = 0
    for r in samples:
        for pod, m in r.get("missed", {}).items():
            if m["variant"] == variant:
                missed[pod] = missed.get(pod, 0) + 1
        for pod, m in sorted(r["pods"].items()):
            if m["variant"] != variant or "served" not in m:
                continue
            answered += 1
            before_start = m["t"] < start
            if before_start:
                in_flight_before = max(in_flight_before, m.get("inFlight", 0))
            prev = last.get(pod)
            if prev is None:
                # The first answer: a pod there from the start counts from here, a newer one from 0.
                served[pod] = 0 if pod in first_pods else m["served"]
            elif m["served"] < prev["served"] or m["restarts"] > prev["restarts"]:
                served[pod] += m["served"]
                resets[pod] = resets.get(pod, 0) + 1
            else:
                served[pod] += m["served"] - prev["served"]
                if before_start:
                    served_before += m["served"] - prev["served"]
            last[pod] = m
    return ServedLoad(
        variant=variant,
        offered=offered,
        allowance=load_allowance(offered, users),
        served=sum(served.values()) if served else None,
        samples=answered,
        missed=missed,
        resets=resets,
        before_start_in_flight=in_flight_before,
        before_start_served=served_before,
    )


def load_findings(loads: dict[str, ServedLoad]) -> tuple[list[str], list[str]]:
    """What the served-vs-offered comparison says: (disturbances, notes)."""
    disturbed, notes = [], []
    for v, x in loads.items():
        if x.served is None:
            disturbed.append(
                f"{v}: its pods' own request count was never read: the load they saw cannot be compared with what this run offered"
            )
            continue
        if x.busy_before:
            disturbed.append(
                f"{v}: already busy before the swarm started ({x.before_start_in_flight} request(s) in flight, "
                f"{x.before_start_served} served during the baseline): something else is sending it requests"
            )
        if x.extra:
            disturbed.append(
                f"{v}: its pods served {x.served:,} requests, the run offered {x.offered:,} "
                f"(allowed up to {x.offered + x.allowance:,}): another load generator swarmed it too"
            )
        if x.missed:
            total = sum(x.missed.values())
            pods = ", ".join(f"{p} {n}" for p, n in sorted(x.missed.items()))
            notes.append(
                f"{v}: {total} of {total + x.samples} scrapes of its pods' counters unanswered ({pods}): a saturated or restarting "
                "pod does not answer; requests a pod finished after its last answer before a restart are not counted, so "
                f"{x.served:,} served is a lower bound"
            )
        if x.resets:
            notes.append(
                f"{v}: counters started again from 0 after a container restart "
                f"({', '.join(f'{p} {n}x' for p, n in sorted(x.resets.items()))}); added up"
            )
    return disturbed, notes
