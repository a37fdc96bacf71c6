"""The cluster's clock against the host's: how far apart they are, measured, so a run judges every time
in one clock.

A scripted run mixes two clocks. Locust's stats history, the run's timetable and the recorder's own
``t`` are the host's; event times (the kubelet's ``firstTimestamp``/``lastTimestamp``), a container's
``finishedAt`` and a pod's creation are the cluster's. On Linux with Docker Engine both are the same
kernel clock. Docker Desktop runs the cluster in a VM whose clock drifts from the Mac's after the Mac
sleeps (docker/for-mac#17, #2921), by seconds to minutes: kills would fall outside their window and old
pods count as new, with nothing saying why.

How it is measured: the API server stamps every answer with an HTTP ``Date`` header, in whole seconds.
Asking again and again (every ``POLL_S``) until that second ticks over pins the cluster's second
boundary between two of our requests, so the offset (cluster minus host) is known to within about a
round trip plus the polling gap: a few milliseconds on a local cluster, against the verdict's 2 s of
slack. It takes at most a little over a second and a few dozen cheap requests (``GET /version``).
"""

import time
from dataclasses import asdict, dataclass
from email.utils import parsedate_to_datetime

# Between two asks while waiting for the cluster's second to tick over.
POLL_S = 0.01
# The tick comes within a second; a little more, for a slow answer.
MAX_WAIT_S = 1.5


@dataclass(frozen=True)
class ClockSample:
    """The cluster's clock minus the host's (seconds), to within +- `uncertainty` seconds, measured at
    host time `at`."""

    offset: float
    uncertainty: float
    at: float
    source: str = "API server Date header"

    def to_json(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}

    @staticmethod
    def from_json(d: dict) -> "ClockSample":
        return ClockSample(float(d["offset"]), float(d["uncertainty"]), float(d["at"]), d.get("source", ""))


def date_header_seconds(value: str) -> int:
    """An HTTP Date header ('Tue, 24 Nov 2026 15:04:05 GMT') as epoch seconds."""
    return int(parsedate_to_datetime(value).timestamp())


def measure(server_second, now=time.time, sleep=time.sleep, poll_s=POLL_S, max_wait_s=MAX_WAIT_S) -> ClockSample:
    """The offset, from SERVER_SECOND() (one request; the cluster's time in whole seconds as it answered).

    Each ask is bracketed by the host's clock. When the answer's second moves from s to s+1 between two
    asks, the cluster's clock read s+1.000 somewhere between the start of the earlier ask and the end of
    the later one: the midpoint of that interval is the estimate and half its width the uncertainty."""
    t0 = now()
    first = server_second()
    t1 = now()
    before = (t0, t1, first)
    deadline = t1 + max_wait_s
    while now() < deadline:
        sleep(poll_s)
        a = now()
        second = server_second()
        b = now()
        if second > before[2]:
            if second - before[2] > 1:  # a slow answer skipped a whole second: start over from this one
                before = (a, b, second)
                continue
            low, high = before[0], b
            tick = (low + high) / 2
            return ClockSample(offset=second - tick, uncertainty=(high - low) / 2, at=tick)
        before = (a, b, second)
    # No tick seen (answers slower than a second apart): the coarse estimate, +- half a second plus the ask.
    mid = (t0 + t1) / 2
    return ClockSample(offset=first + 0.5 - mid, uncertainty=0.5 + (t1 - t0) / 2, at=mid)


def api_server_second(api_client, timeout_s: float = 3.0):
    """A SERVER_SECOND for measure(): GET /version on the API server, its Date header in epoch seconds."""
    from kubernetes import client

    version = client.VersionApi(api_client)

    def ask() -> int:
        result = version.get_code_with_http_info(_request_timeout=timeout_s)
        # An ApiResponse (the client's current generator) or a (data, status, headers) tuple (older ones).
        headers = result[2] if isinstance(result, tuple) else result.headers
        return date_header_seconds(headers["Date"])

    return ask


@dataclass(frozen=True)
class ClockCheck:
    """The run's two samples, and what they mean for judging it."""

    start: ClockSample | None
    end: ClockSample | None
    slack: float

    @property
    def offset(self) -> float:
        """The offset to apply: the mean of the samples taken (0 when none was)."""
        taken = [s.offset for s in (self.start, self.end) if s]
        return sum(taken) / len(taken) if taken else 0.0

    @property
    def drift(self) -> float | None:
        """How far the offset moved during the run, when both ends were measured."""
        return abs(self.end.offset - self.start.offset) if self.start and self.end else None

    @property
    def steady(self) -> bool:
        return self.drift is None or self.drift <= self.slack

    def describe(self) -> str:
        if not (self.start or self.end):
            return "the cluster's clock was not measured against the host's: event times are taken as they are"
        parts = [f"{name} {s.offset:+.3f} s (+-{s.uncertainty:.3f})" for name, s in (("start", self.start), ("end", self.end)) if s]
        text = f"cluster clock minus host clock: {', '.join(parts)}"
        if self.drift is not None:
            text += f"; moved {self.drift:.3f} s during the run"
        return text + f"; every cluster time shifted by {-self.offset:+.3f} s onto the host's clock"

    def to_json(self) -> dict:
        return {
            "start": self.start.to_json() if self.start else None,
            "end": self.end.to_json() if self.end else None,
            "offset": round(self.offset, 4),
            "drift": None if self.drift is None else round(self.drift, 4),
            "slack": self.slack,
        }


def check(timeline: list[dict], slack: float) -> ClockCheck:
    """The recorder's `clock` records of a timeline (the first is the start, the last the end)."""
    samples = [ClockSample.from_json(r["sample"]) for r in timeline if r.get("kind") == "clock" and r.get("sample")]
    return ClockCheck(samples[0] if samples else None, samples[-1] if len(samples) > 1 else None, slack)


def to_host_clock(timeline: list[dict], offset: float) -> list[dict]:
    """The timeline with every time the cluster stamped moved onto the host's clock (host = cluster -
    offset): events' `first` and `last`, pods' `lastTerminatedAt` and `startedAt`, the end of each GC pause the
    container runtime stamped (`gclog`). The records' own `t` is the host's."""
    if not offset:
        return timeline

    def shift(value):
        return None if value is None else value - offset

    out = []
    for r in timeline:
        if r.get("kind") == "event":
            r = r | {"first": shift(r.get("first")), "last": shift(r.get("last"))}
        elif r.get("kind") == "pods":
            r = r | {"pods": [p | {k: shift(p.get(k)) for k in ("lastTerminatedAt", "startedAt")} for p in r.get("pods", [])]}
        elif r.get("kind") == "gclog":
            r = r | {"pauses": [[shift(p[0]), *p[1:]] for p in r.get("pauses", [])]}
        out.append(r)
    return out
