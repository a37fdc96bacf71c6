"""What every measure's judge is made of: the judged ``Line``, the ``Evidence`` it is judged on, the rules of a
count (``count_state``) and the registry, ``JUDGES``, that ``@measure`` fills where each judge is defined.

The judges live by concept in the ``measures_*`` modules beside this one, which import it; it imports none of
them, and ``report.predictions`` imports them all (so the registry is full wherever a prediction is judged).
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from liveness_lab.base.scenario import BAND, COUNT

from .actions import RecordedAction
from .gc import GcBeforeKill
from .kills import KillWindow, kill_window
from .scheduler import Scheduler
from .variant import VariantAnalysis

HELD, NOT_YET, NOT_HELD, NOT_MEASURED, NOTHING = "held", "not yet", "not held", "not measured", "nothing to judge"
# Without a liveness probe to time a kill against, a live run must have gone this long before an absence holds.
EVIDENCE_DEFAULT_S = 30.0


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


# A measure's judge: (its prediction key, the value predicted, the evidence) -> the judged line.
Judge = Callable[[str, object, Evidence], Line]
# Prediction key (base.scenario.PREDICTIONS) -> its judge; one judge may serve several keys.
JUDGES: dict[str, Judge] = {}
# The keys a live window is judged on too (the workshop's checks); the others only a finished run.
LIVE: set[str] = set()


def measure(*keys: str, live: bool = False) -> Callable[[Judge], Judge]:
    """Registers the function below as the judge of each of KEYS; LIVE: it judges a live window too. A key
    registered twice is refused, so the module that imports second fails at once."""

    def register(judge: Judge) -> Judge:
        for key in keys:
            if key in JUDGES:
                raise ValueError(f"prediction {key!r} has two judges: {JUDGES[key].__module__}.{JUDGES[key].__name__} and {judge.__name__}")
            JUDGES[key] = judge
            if live:
                LIVE.add(key)
        return judge

    return register


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


def count_line(key, expected, n, measured, ev: Evidence, what: str) -> Line:
    """A count line with the participant's words: "blocking: 3 of 120 requests failed". A prediction that
    requests fail no more than so many holds only on requests served: none at all says nothing (a swarm
    that never reached the variant)."""
    v = ev.analysis.variant
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


def after_run_line(key: str, ev: Evidence, predicted, measured: str, state: str) -> Line:
    """A line of a measure only a finished run judges: the lab reads it, no participant, so its why is what
    was measured."""
    v = ev.analysis.variant
    return Line(v, key, predicted, measured, state, f"{v} {key}: {measured}")


def between(numbers: list[int]) -> str:
    """A sorted list's range: "60-88", or "60" when all are one."""
    return f"{numbers[0]}" if numbers[0] == numbers[-1] else f"{numbers[0]}-{numbers[-1]}"
