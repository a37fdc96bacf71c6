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

A measure is a feature, in these places: its words in ``base.scenario.PREDICTIONS`` (the vocabulary the
scenario loader checks, with ``CHOICES`` for a value that is a word); its judge, a function of (key,
predicted, evidence) to a ``Line`` registered by its key with ``@measure("key")`` (``live=True`` when a
workshop's live window can judge it too, and then its key in ``workshop.course.LIVE_PREDICTIONS``) in the
``measures_*`` module of its concept: kills and restarts, load, readiness, actions, CPU and the JVM; its
figure, if the matrix shows one, in ``lab.judge.figures`` and ``lab.matrix`` (``MORE_FIGURES``,
``FIGURE_KEYS``). ``tests/test_measures.py`` holds the vocabulary and the registry equal.
"""

from liveness_lab.base import exits

# Imported for their @measure registrations: every judge is in JUDGES before a prediction is judged.
from . import measures_actions, measures_cpu, measures_kills, measures_load, measures_ready  # noqa: F401
from .facts import RunFacts
from .measure import (  # noqa: F401  (the names the lab, the workshop and the demo import from here)
    HELD,
    JUDGES,
    LIVE,
    NOT_HELD,
    NOT_MEASURED,
    NOT_YET,
    NOTHING,
    Evidence,
    Line,
    count_state,
    in_words,
)
from .measures_kills import last_failure  # noqa: F401  (the workshop's checks name a variant's last failure)
from .variant import VariantAnalysis

# A run's outcome is HELD, NOT_HELD or this (decide).
CANNOT_TELL = "cannot tell"
# The demo's names for the outcomes, and the exit code of both (base/exits.py): the one mapping.
VERDICT = {HELD: "PASS", NOT_HELD: "FAIL", CANNOT_TELL: "INCONCLUSIVE"}
EXIT = {HELD: exits.HELD, NOT_HELD: exits.NOT_HELD, CANNOT_TELL: exits.CANNOT_TELL}


def judge_line(key: str, expected, ev: Evidence) -> Line:
    """One prediction of the scenario, judged on EV by its measure's judge (JUDGES). A live window judges
    only the measures registered live; of the others it says the lab judges them after a run."""
    v = ev.analysis.variant
    if ev.live and key not in LIVE:
        return Line(v, key, str(expected), "not judged on a live window", NOT_MEASURED, f"{v} {key}: the lab judges it after a run")
    if key not in JUDGES:
        raise ValueError(f"unknown prediction {key!r}")  # the loader refuses these
    return JUDGES[key](key, expected, ev)


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
