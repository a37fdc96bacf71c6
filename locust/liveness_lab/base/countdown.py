"""The countdown: which failure of its threshold each liveness failure is ("1/3", "2/3", then the kill at
3/3), from the kubelet's events and the probe's periodSeconds (P) and failureThreshold (F). One reading
for the Live tab (``locust_ext/live_view.py``) and report.html (``report/build.py``).

The kubelet kills a container when F liveness probes in a row have failed: its prober worker counts the
results in a row (``resultRun``), a success starts the count again, and after a kill it starts from 0
(kubernetes/kubernetes, pkg/kubelet/prober/worker.go). Each failed probe is an ``Unhealthy`` event
("Liveness probe failed: ..."), the kill a ``Killing`` event ("... failed liveness probe, will be
restarted"). What those events hide, and how the count stays right here:

- **Aggregation.** The kubelet's event recorder (client-go, tools/record/events_cache.go) sends the second
  and later identical events of a container as updates of one Event object: its ``count`` goes up and its
  ``lastTimestamp`` moves (``series.count`` and ``series.lastObservedTime`` in events.k8s.io/v1), its
  ``firstTimestamp`` stays. A list shows only each object's latest state, so the failures in between
  lose their times unless every update is seen. Rule (``EventReader``): each update seen whose count rose
  by k is k failures, the last at its ``lastTimestamp``; the k-1 before it are placed P apart before it
  when the time since the previous update leaves room for nothing else (they came in a row, as when the
  tab lists events less often than the probe runs), else they are only counted (``hidden``: after an
  update the kubelet could not send, they may lie anywhere since). An object first seen with count n is
  its first failure at ``firstTimestamp`` and an update from there.
- **The spam filter.** The same recorder lets a source send 25 events about an object (of one type, since
  kubernetes/kubernetes#124747), then one every 5 minutes, and each update of an aggregated event spends
  one; what it cannot send still adds to the count the next update carries. A pod that keeps failing spends its budget on its startup,
  readiness and liveness failures around its first kill; from then on no ``Unhealthy`` event of it comes
  at all, while its ``Killing`` events (type Normal, a budget of their own) still do
  (kubernetes/kubernetes#131026; the recorded runs in tests/fixtures stop at exactly 25 Warning updates).
  That is why failure markers vanished after the first kill. Rule: a kill means F failures in a row
  ended at its time, P apart: the failures within (F - 1/2) P before a kill (and after the pod's previous
  kill and restart) are numbered back from it, F - round((kill - t) / P), and each number no event
  reported becomes an ``unreported`` failure at kill - (F - i) P, drawn hollow and said to be inferred
  (or, when a later update's count holds it, said to be folded into that update).
- **A skipped probe is not a success.** The kubelet skips a new container's liveness probes until its
  startup probe has passed, and a skipped probe does not break the count: a failure in the container's
  first period (a probe that ran before the kubelet knew the startup probe had not passed, "connection
  refused") counts with the failures after startup (recorded: run-extra-load's pod was killed after that
  one and two more). Rule: such a failure takes the lowest numbers the kill's own window left free.
- **A success is never an event.** Nothing says when failures in a row were broken, so the count in a row
  restarts silently. Rule, for failures no kill (yet) ended: one more than 1.5 P after the previous
  failure of its pod starts a new count (a success must have come between: the probe runs every P); so
  does a kill or a restart of the pod, and a failure that would be the (F+1)-th (its kill went unseen).
  The Live tab counts a row in progress this way, and numbers it again back from the kill once it comes.

Limits: event times are whole seconds and placed times rest on P, so a placed failure can be a second
or so off (a probe that timed out is stamped its timeout after it started); a failure reported after a
gap the spam filter made and never followed by a kill counts from 1 although more may have come just
before it ("?/F" when the count says some did); a stray failure right after a restart followed by a
success and a new row is counted with that row when the row's first failures had no events; kills folded
into one update (their count rose by more than one) and restarts without a ``Killing`` event (after five
or six kills the Normal budget runs out too: Killing, Pulled, Created and Started each restart, 24 by
the sixth start in run-pass) get no countdown before them; one container per pod, as the chart runs.
"""

from dataclasses import dataclass, field

from .kube import is_liveness_failure, is_liveness_kill
from .probes import Probe

# A failure this many periods after the previous one of its pod starts a new count.
GAP_PERIODS = 1.5
# Event times are whole seconds: the F-th failure and its kill may be stamped a second apart.
STAMP_SLACK_S = 1.0


@dataclass
class Occurrence:
    """One liveness failure or kill the kubelet's events tell of."""

    kind: str  # "failure" or "kill"
    pod: str
    t: float
    message: str
    exact: bool = True  # the kubelet stamped this time; False: placed P apart from the update after it
    hidden: int = 0  # more that happened before it since `since`, at times no event tells
    since: float | None = None


class EventReader:
    """Turns the events it is shown, again and again (each a ``kube.event_record``), into the liveness
    failures and kills new since the last time, by the aggregation rule in the module docstring."""

    def __init__(self):
        self._seen = {}  # event uid -> (count, lastTimestamp) when last shown

    def read(self, events, probe_of=lambda pod: None) -> list[Occurrence]:
        """The occurrences EVENTS add; PROBE_OF(pod) gives the pod's Probe (or None: nothing is placed)."""
        found = []
        for e in events:
            kind = "kill" if is_liveness_kill(e) else "failure" if is_liveness_failure(e) else None
            if kind is None or e.get("last") is None:
                continue
            before = self._seen.get(e["uid"])
            if before is not None and e["count"] <= before[0]:
                continue
            if before is None:
                first = e["first"] if e.get("first") is not None else e["last"]
                found.append(Occurrence(kind, e["pod"], first, e["message"]))
                before = (1, first)
            if e["count"] > before[0]:
                found += self._update(kind, e, before, probe_of(e["pod"]))
            self._seen[e["uid"]] = (e["count"], e["last"])
        return found

    @staticmethod
    def _update(kind, e, before, probe: Probe | None) -> list[Occurrence]:
        """The update from BEFORE (count, last) to E: k = the count's rise, the last at E's last time."""
        k, since, last = e["count"] - before[0], before[1], e["last"]
        span = last - since
        # Room for the k failures after `since` and for nothing else: they came in a row, P apart.
        in_a_row = (
            kind == "failure"
            and probe is not None
            and k > 1
            and (k - 1) * probe.period_s - STAMP_SLACK_S < span < (k + 0.5) * probe.period_s
        )
        if in_a_row:
            placed = [Occurrence(kind, e["pod"], last - j * probe.period_s, e["message"], exact=False) for j in range(k - 1, 0, -1)]
            return [*placed, Occurrence(kind, e["pod"], last, e["message"])]
        return [Occurrence(kind, e["pod"], last, e["message"], hidden=k - 1, since=since if k > 1 else None)]


@dataclass
class Marker:
    """A failure, an unreported failure or a kill with its place in the countdown."""

    kind: str  # "failure", "unreported" (inferred from a kill) or "kill"
    pod: str
    t: float
    message: str
    position: int | None = None  # which failure in a row; None: the probe is unknown, or hidden ones came before
    threshold: int | None = None
    exact: bool = True
    hidden: int = 0
    since: float | None = None
    kill_t: float | None = None  # an unreported failure's kill; a kill's own time
    unreported: list[int] = field(default_factory=list)  # a kill's failures no event reported
    period_s: float | None = None  # the probe's, for an unreported failure's text
    folded_into: float | None = None  # an unreported failure counted by the update of an aggregated event then
    before_startup: bool = False  # a new container's failure counted with those after its startup probe passed

    @property
    def label(self) -> str:
        """ "2/3"; "?/3" when hidden failures may have come before it; "" without the probe."""
        if self.threshold is None:
            return ""
        return f"{self.position if self.position is not None else '?'}/{self.threshold}"


def countdown(occurrences: list[Occurrence], restarts: list[tuple[str, float]], probe_of) -> list[Marker]:
    """The markers of OCCURRENCES (liveness failures and kills, any order) with their countdown, and the
    unreported failures of each kill, by the rules in the module docstring. RESTARTS: (pod, time its
    container ended); PROBE_OF(pod): its Probe, or None (then no number and nothing inferred)."""
    out = []
    for pod in sorted({o.pod for o in occurrences}):
        mine = sorted((o for o in occurrences if o.pod == pod), key=lambda o: (o.t, o.kind != "failure"))
        ends = sorted(t for p, t in restarts if p == pod)
        out += _pod_countdown(mine, ends, probe_of(pod))
    return sorted(out, key=lambda m: (m.t, m.kind == "kill"))


def _pod_countdown(occurrences: list[Occurrence], ends: list[float], probe: Probe | None) -> list[Marker]:
    failures = [
        Marker("failure", o.pod, o.t, o.message, exact=o.exact, hidden=o.hidden, since=o.since) for o in occurrences if o.kind == "failure"
    ]
    kills = [Marker("kill", o.pod, o.t, o.message, hidden=o.hidden, since=o.since, kill_t=o.t) for o in occurrences if o.kind == "kill"]
    if probe is None:
        return failures + kills
    period, threshold = probe.period_s, probe.failure_threshold
    numbered, unreported = set(), []
    for i, kill in enumerate(kills):
        # Back from the kill: the failures of its count are within (F - 1/2) P before it, after the
        # previous kill and the restart that followed it (a failure stamped the second the old container
        # ended is the new one's: the old one's probe is on hold once it is to be killed).
        last_kill = max((k.t for k in kills[:i]), default=float("-inf"))
        last_end = max((t for t in ends if t < kill.t), default=float("-inf"))

        def after_previous(t, last_kill=last_kill, last_end=last_end):
            return t > last_kill and t >= last_end

        window = [f for f in failures if id(f) not in numbered and after_previous(f.t) and f.t <= kill.t + STAMP_SLACK_S]
        early = [f for f in window if kill.t - f.t > (threshold - 0.5) * period]
        taken = set()
        for f in window:
            if all(f is not e for e in early):
                f.position = min(threshold, max(1, threshold - round((kill.t - f.t) / period)))
                taken.add(f.position)
        # The kubelet skips a new container's liveness probes until its startup probe has passed, and a
        # skipped probe does not break the count in a row: a failure in the container's first period (a
        # probe that ran before the kubelet knew the startup probe had not passed: "connection refused")
        # is counted with the failures after startup. It takes the lowest numbers no event reported.
        lowest = min(taken, default=threshold + 1)
        early = [f for f in early if f.t - last_end <= period + STAMP_SLACK_S]
        for f, n in zip(early, [n for n in range(1, lowest) if n not in taken], strict=False):
            f.position, f.before_startup = n, True
            taken.add(n)
        for f in window:
            if f.position is not None:
                f.threshold, f.kill_t = threshold, kill.t
                numbered.add(id(f))
        for n in range(1, threshold + 1):
            t = kill.t - (threshold - n) * period
            if n not in taken and after_previous(t):
                missing = Marker("unreported", kill.pod, t, kill.message, n, threshold, exact=False, kill_t=kill.t, period_s=period)
                # Counted by a later update of an aggregated event, at no time of its own: it is this one.
                later = next((f for f in failures if f.hidden and f.since < t < f.t), None)
                if later is not None:
                    later.hidden -= 1
                    missing.folded_into = later.t
                unreported.append(missing)
                kill.unreported.append(n)
        kill.position, kill.threshold = threshold, threshold
    # Forward for the rest: a count in a row that no kill (yet) ended.
    resets = sorted([k.t for k in kills] + ends)
    previous, count = None, 0
    for f in failures:
        if id(f) in numbered:
            previous, count = f, f.position
            continue
        broken = (
            previous is None
            or f.t - previous.t > GAP_PERIODS * period
            or any(previous.t < r < f.t for r in resets)
            or (count is not None and count >= threshold)
        )
        # Failures counted but not placed (hidden) may belong to the same row: from there the number is
        # unknown until the row is broken.
        count = 1 if broken else None if count is None else count + 1
        if f.hidden:
            count = None
        f.position, f.threshold = count, threshold
        previous = f
    return failures + unreported + kills


def describe(marker: Marker, start: float, labels: dict[str, str]) -> str:
    """The hover text of MARKER, times since START: "liveness failure 2/3 at +8.5 s: <kubelet message>".
    LABELS: the markers' names by kind (style.MARKERS' labels)."""
    at = f"+{marker.t - start:.1f} s"
    if marker.kind == "kill":
        text = f"{labels['kill']} {'after ' + marker.label + ' ' if marker.label else ''}at {at}: {marker.message}"
        if marker.unreported:
            numbers = ", ".join(f"{n}/{marker.threshold}" for n in marker.unreported)
            text += f" (failure {numbers} before it with no event of its own: drawn hollow)"
    elif marker.kind == "unreported":
        why = (
            f"counted only by the update of its aggregated event at +{marker.folded_into - start:.1f} s, which gave no time of its own"
            if marker.folded_into is not None
            else "the kubelet's event spam filter dropped its event"
        )
        text = (
            f"{labels['failure']} {marker.label} at {at}, no event of its own: {why}; placed from the kill at "
            f"+{marker.kill_t - start:.1f} s, which came after {marker.threshold} failures in a row, one every {marker.period_s:g} s"
        )
    else:
        text = " ".join(x for x in (labels["failure"], marker.label) if x) + f" at {at}: {marker.message}"
        if marker.before_startup:
            text += (
                " (the container had just started: the kubelet counts it with the failures after the startup probe passed, "
                "as it skips liveness probes until then)"
            )
        if not marker.exact:
            text += " (its time placed a period before the next: the kubelet's aggregated event gave only the last)"
    if marker.hidden:
        text += f" (+{marker.hidden} earlier since +{marker.since - start:.1f} s, at times the kubelet's events do not tell)"
    return text
