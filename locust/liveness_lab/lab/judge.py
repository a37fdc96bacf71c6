"""Judges one finished scripted run (a scripts/demo.sh report folder) against its scenario's prediction.

The facts are the run's own (``report.facts``: restarts and their causes, kills and failures from the
kubelet's probe counter and events, the kill window from the probe settings run.json recorded, Ready
counts, Locust's totals, the CPU check) and each prediction is judged by ``report.predictions``, the one
judge the workshop's live checks and the demo's claim use too, which also decides the outcome
(``predictions.decide``: held, not held, or cannot tell only from evidence no prediction is about or a
prediction that could not be measured); this module adds the figures, the race and lab.json.

The predictions of the scenario's `race` (a lesson that holds in some runs only) are judged and kept
but decide nothing: the matrix counts the runs they held in (lab.matrix).

lab.json in the report folder keeps the judgement for the matrix.
"""

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from liveness_lab.base.scenario import Scenario
from liveness_lab.report.facts import (
    RunFacts,
    added_pods,
    first_kill_after_action,
    first_kills_spread,
    hold_throughput,
    kills_after_actions,
    longest_not_ready,
    longest_restart_wait,
    ready_share,
    recovery_after_actions,
    shed,
    throttled_pct,
)
from liveness_lab.report.gc import first_share, lowest_share
from liveness_lab.report.predictions import CANNOT_TELL, HELD, NOT_HELD, Line, decide, judge_predictions
from liveness_lab.report.recording import load_run
from liveness_lab.report.variant import VariantAnalysis
from liveness_lab.report.verdict import judge


@dataclass
class Judgement:
    scenario: str
    folder: str
    outcome: str
    lines: list[Line]
    why_cannot_tell: list[str]
    report_verdict: str  # demo.sh's own verdict on its claim, for reference
    figures: dict  # per variant: the numbers the matrix shows
    race: list[str] = field(default_factory=list)  # "<variant> <key>" of the lines that are the scenario's race
    kubernetes: str | None = None  # the API server's release the run ran on (run.json); None where not recorded
    digest: str | None = None  # the scenario's prediction version it was judged by (Scenario.digest)
    commit: str | None = None  # the clone's commit the run ran from (run.json)
    busy_pct: float | None = None  # the machine's CPU busy on average through the hold
    started: float | None = None  # epoch seconds, the load's start (run.json locust_started)

    def is_race(self, line: Line) -> bool:
        return f"{line.variant} {line.key}" in self.race

    def text(self) -> list[str]:
        """The judgement as the lab prints it and writes judgement.txt."""
        race = " (a race: not required of a run)"
        return (
            [f"{self.scenario}: {self.outcome}"]
            + [f"  {x.text()}{race if self.is_race(x) else ''}" for x in self.lines]
            + [f"  cannot tell: {w}" for w in self.why_cannot_tell]
        )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict):
        return cls(**{**d, "lines": [Line.from_json(x) for x in d["lines"]]})


def figures(a: VariantAnalysis, facts: RunFacts | None = None) -> dict:
    """The few numbers the matrix shows per variant (with FACTS, those that read the actions and the
    throttling too)."""
    f = a.figures
    more = {}
    if facts is not None:
        added = added_pods(a, facts.actions)
        more = {
            "firstKillAfterActionS": first_kill_after_action(a, facts.actions),
            "recoveryAfterActionsS": recovery_after_actions(a, facts.actions),
            "killsAfterActions": kills_after_actions(a, facts.actions),
            "addedPods": None if added is None else len(added),
            "addedRestarts": None if added is None else sum(1 for r in a.pods.restarts if r.pod in added),
            "addedLivenessFailures": None if added is None else sum(1 for x in a.probes.liveness_failures if x.pod in added),
            "throttledPct": throttled_pct(a, facts.cpu.throttled),
            "throttledPeakPct": throttled_pct(a, facts.cpu.throttled_peak),
            "gcPausedBeforeKillsPct": None if (share := lowest_share(facts.gc.get(a.variant, []))) is None else round(100 * share, 1),
            "gcPausedBeforeFirstRestartPct": first_share(first := facts.gc_first.get(a.variant)),
            "inFlightBeforeFirstRestart": None if first is None else first.in_flight,
            "readySharePct": ready_share(a),
            "longestNotReadyS": longest_not_ready(a),
            "longestRestartWaitS": longest_restart_wait(a),
            "firstKillsSpreadS": first_kills_spread(a),
            "vthreadsQueuedMax": facts.schedulers[a.variant].queued_max if a.variant in facts.schedulers else None,
            "killedBeforeStarted": None if (early := a.killed_before_started()) is None else len(early[0]),
        }
    return {
        "pods": len(a.pods.pods),
        "restarts": len(a.pods.restarts),
        "causes": {cause: sum(r.cause == cause for r in a.pods.restarts) for cause in sorted({r.cause for r in a.pods.restarts})},
        "requests": f.requests,
        "failures": f.failures,
        "shed": shed(a),
        "firstLivenessKillS": a.first_liveness_kill_s,
        "livenessFailures": a.liveness_failures()[0],
        "unhealthy": a.probes.unhealthy,
        "recoveryS": a.recovery_s,
        "holdRps": hold_throughput(a),
    } | more


def judge_scenario(scenario: Scenario, folder) -> Judgement:
    """The scenario's predictions against the report folder FOLDER (demo.sh's files; the report itself
    need not be built)."""
    folder = Path(folder)
    data = load_run(folder)
    result = judge(data)
    facts = result.facts
    lines, missing = judge_predictions(scenario.predict, facts)
    race = [f"{x.variant} {x.key}" for x in lines if scenario.in_race(x.variant, x.key)]
    outcome, why = decide(lines, facts.cannot_tell + missing, race)
    return Judgement(
        scenario=scenario.name,
        folder=str(folder),
        outcome=outcome,
        lines=lines,
        why_cannot_tell=why,
        report_verdict=result.verdict,
        figures={v: figures(a, facts) for v, a in facts.analyses.items()},
        race=race,
        kubernetes=(facts.run.get("kubernetes") or {}).get("server"),
        digest=scenario.digest,
        commit=facts.run.get("commit"),
        busy_pct=None if facts.cpu.busy_mean is None else round(100 * facts.cpu.busy_mean, 1),
        started=float(facts.run["locust_started"]) if facts.run.get("locust_started") else None,
    )


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of K successes in N runs (95 % with z 1.96): unlike p +- z*sqrt(p(1-p)/n) it
    stays inside 0-1 and is not empty at 0 of n or n of n, which is what a few runs of a race give. Five lines
    of arithmetic; the statistics libraries that have it (statsmodels, scipy) would be the Locust image's
    largest dependency."""
    p, z2 = k / n, z * z
    centre, spread = p + z2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z2 / n)), min(1.0, (centre + spread) / (1 + z2 / n))


def race_won(lines: list[Line], race: list[str]) -> bool | None:
    """Whether a run's race predictions (RACE: "<variant> <key>" of its LINES) all held (True), one did not
    (False), or one decided nothing (None, as with none)."""
    states = [x.held for x in lines if f"{x.variant} {x.key}" in race]
    if False in states:
        return False
    return True if states and None not in states else None


@dataclass
class RaceResult:
    state: str  # HELD, NOT_HELD, CANNOT_TELL, or NOT_YET (fewer runs than the race's own number)
    text: str


NOT_YET = "not yet"


def judge_race(race, won: list[bool]) -> RaceResult:
    """A race's prediction, its BAND of runs (percent) in which its predictions all hold, judged on WON (per
    run, True when they did) once there are as many runs as it names: held when the share falls in the band,
    not held when even the share's 95 % interval (wilson) misses the band, cannot tell when only the
    interval reaches it; not yet with fewer runs. Its text: "race blocking restarted_pods: held in 9 of 10
    runs (60-98 % at 95 %), predicted 75-100 %: held"."""
    k, n = sum(won), len(won)
    lo, hi = race.band
    names = ", ".join(f"{v} {key}" for v, keys in race.predictions.items() for key in keys)
    text = f"race {names}: held in {k} of {n} run{'s' if n != 1 else ''}"
    if n:
        low, high = wilson(k, n)
        text += f" ({low * 100:.0f}-{high * 100:.0f} % at 95 %)"
    text += f", predicted {lo}-{hi} %"
    if n < race.runs:
        return RaceResult(NOT_YET, f"{text}: judged at {race.runs} runs")
    share = 100 * k / n
    if lo <= share <= hi:
        return RaceResult(HELD, f"{text}: held")
    if 100 * high < lo or 100 * low > hi:
        return RaceResult(NOT_HELD, f"{text}: NOT held")
    return RaceResult(CANNOT_TELL, f"{text}: cannot tell (the share is outside the band, its interval reaches it)")


def write(judgement: Judgement, folder) -> Path:
    path = Path(folder) / "lab.json"
    path.write_text(json.dumps(judgement.to_json(), indent=2) + "\n")
    return path


def read(folder) -> Judgement:
    return Judgement.from_json(json.loads((Path(folder) / "lab.json").read_text()))


def repeat_index(folder_name: str) -> int:
    """1 for `baseline`, i for `baseline-<i>` (lab.sh's --repeat folders)."""
    m = re.search(r"-(\d+)$", folder_name)
    return int(m.group(1)) if m else 1
