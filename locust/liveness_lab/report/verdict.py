"""The demo's verdict on its claim, from a scripted run's facts (``report.facts``).

The claim (issue 5; issue 38 on Tomcat) is the baseline scenario's prediction (lab/scenarios/baseline.yaml),
judged by the lab's judge (``report.predictions``): each variant of the run takes the prediction of the
baseline's variant on its side. A variant whose serving threads block (blocking: an event loop; servlet:
Tomcat's worker threads) takes blocking's (restarted, each restart a liveness kill of its own, the first
on time for the run's probe settings); a variant that never holds a serving thread while it waits
(reactive, servlet-async, servlet-virtual) takes reactive's (no restart, no `Unhealthy` event, no failed
request). Offloaded and virtual are reported as they fall; no verdict is invented for them.

The verdict is the judge's outcome under the demo's names (``predictions.VERDICT``): PASS (held), FAIL
(not held), INCONCLUSIVE (cannot tell: the run cannot tell by ``RunFacts.cannot_tell``, a prediction could
not be measured, or no variant of one side was in the run and the other's held). A spared variant's own
probe failures or restarts are never a reason for INCONCLUSIVE: they fail the claim.
"""

from dataclasses import dataclass
from functools import cache

from liveness_lab.base.scenario import BASELINE, catalogue_folder, load_scenario
from liveness_lab.base.variants import mode_of

from .facts import RunFacts, run_facts
from .predictions import CANNOT_TELL, EXIT, NOT_HELD, VERDICT, Line, decide, judge_predictions
from .recording import RunData
from .variant import BLOCKING_MODES, NON_BLOCKING_MODES

SIDES = {"killed": "blocking or servlet", "spared": "reactive, servlet-async or servlet-virtual"}
EXIT_CODES = {VERDICT[outcome]: code for outcome, code in EXIT.items()}


def side(variant: str) -> str | None:
    """'killed', 'spared' or None (not judged): the claim's side of VARIANT, by its mode."""
    mode = mode_of(variant)
    return "killed" if mode in BLOCKING_MODES else "spared" if mode in NON_BLOCKING_MODES else None


@cache
def baseline_by_side() -> dict[str, dict]:
    """The baseline scenario's prediction per side of the claim (one variant each)."""
    path = catalogue_folder() / BASELINE
    predict = load_scenario(path, known=None).predict
    by_side = {side(v): p for v, p in predict.items()}
    assert set(by_side) == set(SIDES) and len(predict) == 2, f"{path}: one variant per side of the claim, got {list(predict)}"
    return by_side


def claim(variants) -> dict[str, dict]:
    """The claim on a run of VARIANTS: per variant on a side, the baseline's prediction for that side."""
    return {v: baseline_by_side()[side(v)] for v in variants if side(v)}


@dataclass
class Verdict:
    """The verdict, the claim's lines, why it cannot tell, and the facts it was given."""

    verdict: str
    lines: list[Line]
    why_cannot_tell: list[str]
    notes: list[str]  # what was measured in part, and why
    facts: RunFacts

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict:
        """verdict.json: the verdict, the claim's lines and the figures (without the time series)."""
        f = self.facts
        return {
            "verdict": self.verdict,
            "lines": [x.to_json() for x in self.lines],
            "whyCannotTell": self.why_cannot_tell,
            "notes": self.notes,
            "disturbances": f.disturbances,
            "cannotTell": f.cannot_tell,
            "cpu": {
                "notes": f.cpu.notes,
                "signs": f.cpu.signs,
                "machineWarnings": f.cpu.machine_warnings,
                "starved": f.cpu.starved,
                "throttled": f.cpu.throttled,
            },
            "phases": vars(f.phases),
            "killWindows": {
                v: {"fromS": w.low, "toS": w.high, "earliestS": w.earliest_s, "latestS": w.latest_s} for v, w in f.kill_windows.items()
            },
            "variants": {v: a.to_json() for v, a in f.analyses.items()},
            "load": {"notes": f.load_notes, "variants": {v: x.to_json() for v, x in f.loads.items()}},
            "virtualThreads": {v: x.to_json() for v, x in f.schedulers.items()},
            "clock": f.clocks.to_json() if f.clocks else None,
            "actions": [vars(a) for a in f.actions],
        }


def judge(data: RunData) -> Verdict:
    """The run's facts, the claim's lines on them, and the verdict."""
    facts = run_facts(data)
    predict = claim(facts.analyses)
    lines, _ = judge_predictions(predict, facts)
    lacking = [
        f"no {who} variant was in the run (the claim's {name} side; run.json variants: {facts.run['variants']})"
        for name, who in SIDES.items()
        if name not in {side(v) for v in predict}
    ]
    outcome, why = decide(lines, facts.cannot_tell)
    if lacking and outcome != NOT_HELD:  # a side that ran and failed fails the claim; a PASS needs both
        outcome, why = CANNOT_TELL, why + lacking
    return Verdict(verdict=VERDICT[outcome], lines=lines, why_cannot_tell=why, notes=list(facts.notes), facts=facts)
