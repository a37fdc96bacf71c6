"""The workshop's steps: one YAML file per step in ``workshop/steps/``, read and checked here. Adding a step
is adding a file; every mistake is a StepError naming the file and the field.

A step is the lab's scenario seen by a participant. Its check is the scenario's prediction (``predict`` of
``lab/scenarios/<scenario>.yaml``, measured three times by the lab), so the prediction has one home and a
step only adds what a person at the tab needs:

    title: One line.
    order: 20                          # place in the list (then the file name)
    scenario: tcp-probe                # the lab's scenario: its prediction is the check, its lesson the lesson
    goal: >                            # what to do and to see, in a sentence or two
      ...
    predict:                           # optional: asked before the change; the lab's answer shown once checked
      question: What happens to the blocking pod under the same load?
      choices: [killed anyway, ...]
      answer: not killed, but not serving     # one of the choices
    change:                            # optional: what Skip applies for the participant, per variant of the
      blocking:                        # release: a strategic merge patch of its Deployment's service container
        livenessProbe: {httpGet: null, tcpSocket: {port: http}}
    values: {...}                      # optional: the chart values of the same change (the helm route); default:
                                       # the scenario's values
    judge: {blocking: virtual}         # optional: the release's variant -> the scenario's variant whose
                                       # prediction it is judged by (default: the scenario's own variants)
    hints: [first, then, ...]          # shown one at a time
    solution: >                        # what to type, shown on request
      helm upgrade ...

``change`` is what the chart renders for ``values`` (chart/tests/test_chart.py renders both and compares), so
Skip and the participant's own ``helm upgrade`` run the same Deployment. A step without ``change`` runs the
release as it started (step 1: the demo itself).

Usage (from locust/): python -m liveness_lab.workshop.course   # checks every step, lists them
"""

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from liveness_lab.base.scenario import NAME, Scenario, ScenarioError, read_map
from liveness_lab.base.scenario import load_scenario as load_scenario_file
from liveness_lab.base.variants import VARIANTS

STEPS = Path(__file__).resolve().parent / "steps"
# The lab's scenario files: beside the lab's code on the host; the image copies the files alone (data, not
# the lab's code, which the Locust image does not ship) and names them with LIVENESS_LAB_SCENARIOS.
SCENARIOS = Path(__file__).resolve().parents[1] / "lab" / "scenarios"
SCENARIOS_ENV = "LIVENESS_LAB_SCENARIOS"
# The predictions a live check can judge while the swarm runs (workshop/check.py); the lab's `recovers`
# needs the load stopped and a quiet period, which a participant's swarm does not have.
LIVE_PREDICTIONS = (
    "restarts",
    "restarted_pods",
    "kill_reason",
    "kill_timing",
    "failures",
    "shed",
    "failures_not_shed",
    "liveness_failures",
    "unhealthy",
    "ready",
    "throughput",
)
# The load a scenario's prediction is for, which the swarm must offer (the lab's load, its defaults filled in).
LOAD_KEYS = ("users", "rate", "latency_ms")
TOP_KEYS = {"title", "order", "scenario", "goal", "predict", "change", "values", "judge", "hints", "solution"}
REQUIRED = ("title", "scenario", "goal", "hints", "solution")
# The container a step's change patches: the chart's variants run one, named so (templates/deployment.yaml).
CONTAINER = "service"


class StepError(ScenarioError):
    """A step file that cannot be used, with the file and the field in the message."""


@dataclass(frozen=True)
class Question:
    question: str
    choices: list[str]
    answer: str


@dataclass(frozen=True)
class Step:
    name: str
    path: Path
    title: str
    order: int
    scenario: Scenario
    goal: str
    hints: list[str]
    solution: str
    predict: Question | None = None
    change: dict[str, dict] = field(default_factory=dict)  # release variant -> container patch
    values: dict = field(default_factory=dict)  # the chart values of the change
    judge: dict[str, str] = field(default_factory=dict)  # release variant -> scenario variant

    def predictions(self) -> dict[str, dict]:
        """The check: per release variant, the scenario's prediction it is judged by."""
        return {mine: self.scenario.predict[theirs] for mine, theirs in self.judge.items()}

    def to_json(self) -> dict:
        """What the tab shows of the step whatever the participant has done (hints and the solution are
        handed out one by one by the tab)."""
        return {
            "name": self.name,
            "title": self.title,
            "goal": self.goal,
            "scenario": self.scenario.name,
            "scenarioTitle": self.scenario.title,
            "hints": len(self.hints),
            "question": None if self.predict is None else {"question": self.predict.question, "choices": self.predict.choices},
            "change": sorted(self.change),
            "judged": {mine: theirs for mine, theirs in self.judge.items()},
            "load": {k: self.scenario.load[k] for k in LOAD_KEYS},
        }


def scenarios_folder(environ=os.environ) -> Path:
    return Path(environ.get(SCENARIOS_ENV) or SCENARIOS)


def _text(path, data, key, required=True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not (isinstance(value, str) and value.strip()):
        raise StepError(path, key, "must be a non-empty text")
    return " ".join(value.split()) if key != "solution" else value.strip()


def known_variants(environ=os.environ) -> dict | None:
    """The variants a step may name: the chart's whole table on the host (chart/values.yaml), where the
    tests and `check` hold every step file to it; None in the Locust pod, whose LIVENESS_LAB_VARIANTS lists
    only the variants its release deploys. There a step about another variant still loads, and its check
    says the release does not deploy it (check.py), instead of every step failing to load."""
    return None if environ.get("LIVENESS_LAB_VARIANTS") else VARIANTS


def _check_variant(path, field_name: str, name, known: dict | None) -> None:
    if not isinstance(name, str) or (known is not None and name not in known):
        raise StepError(path, field_name, f"unknown variant; chart/values.yaml has {', '.join(known or VARIANTS)}")


def load_scenario(folder: Path, name: str, step_path: Path) -> Scenario:
    """The lab's scenario NAME, read by the lab's own reader (base.scenario); a mistake names the step and
    the scenario file's field."""
    path = folder / f"{name}.yaml"
    if not path.is_file():
        there = sorted(p.stem for p in folder.glob("*.yaml"))
        raise StepError(step_path, "scenario", f"no scenario {name!r} in {folder}; there are {', '.join(there) or 'none'}")
    try:
        return load_scenario_file(path, known_variants())
    except ScenarioError as e:
        raise StepError(step_path, "scenario", str(e)) from e


def check_live_prediction(path, where: str, key: str, value) -> None:
    """A prediction of the scenario (checked by the lab's reader) that a live check can judge: one of
    LIVE_PREDICTIONS, and a kill timed from the load's start, not from an action the lab takes."""
    if key not in LIVE_PREDICTIONS:
        raise StepError(
            path,
            where,
            f"the scenario predicts {key!r}, which a live check cannot judge while the swarm runs ({', '.join(LIVE_PREDICTIONS)})",
        )
    if (key, value) == ("kill_timing", "from-action"):
        raise StepError(path, f"{where}.{key}", "a kill timed from the lab's action: a live check has no action to time it from")


def _check_patch(path, where: str, patch) -> None:
    """A container patch: a map whose keys are a container's fields; never its name."""
    if not (isinstance(patch, dict) and patch):
        raise StepError(path, where, "must be a non-empty map: a strategic merge patch of the service container")
    if "name" in patch:
        raise StepError(path, f"{where}.name", "the container's name is not changed (the patch is of the service container)")
    for key in ("env", "ports"):
        items = patch.get(key)
        if items is not None and not (isinstance(items, list) and all(isinstance(i, dict) and i.get("name") for i in items)):
            raise StepError(path, f"{where}.{key}", "must be a list of maps, each with a name (merged by name)")


def load_step(path, scenarios: Path | None = None) -> Step:
    """One step file, checked, with its scenario; the name is the file name without .yaml."""
    path = Path(path)
    name = path.stem
    data = read_map(path, TOP_KEYS, REQUIRED, StepError)
    order = data.get("order", 100)
    if not isinstance(order, int) or isinstance(order, bool):
        raise StepError(path, "order", f"{order!r} is not a whole number")
    if not (isinstance(data["scenario"], str) and NAME.match(data["scenario"])):
        raise StepError(path, "scenario", "must name a scenario of the lab (its file name without .yaml)")
    scenario = load_scenario(scenarios or scenarios_folder(), data["scenario"], path)
    hints = data["hints"]
    if not (isinstance(hints, list) and hints and all(isinstance(h, str) and h.strip() for h in hints)):
        raise StepError(path, "hints", "must be a non-empty list of texts, shown one at a time")
    question = None
    if data.get("predict") is not None:
        q = data["predict"]
        if not (isinstance(q, dict) and set(q) == {"question", "choices", "answer"}):
            raise StepError(path, "predict", "must be a map of question, choices and answer")
        if not (isinstance(q["choices"], list) and len(q["choices"]) >= 2 and all(isinstance(c, str) and c.strip() for c in q["choices"])):
            raise StepError(path, "predict.choices", "must list two or more texts")
        if q["answer"] not in q["choices"]:
            raise StepError(path, "predict.answer", f"{q['answer']!r} is not one of the choices")
        if not (isinstance(q["question"], str) and q["question"].strip()):
            raise StepError(path, "predict.question", "must be a non-empty text")
        question = Question(" ".join(q["question"].split()), list(q["choices"]), q["answer"])
    change = data.get("change") or {}
    if not isinstance(change, dict):
        raise StepError(path, "change", "must map variants of the release to a patch of their service container")
    for variant, patch in change.items():
        _check_variant(path, f"change.{variant}", variant, known_variants())
        _check_patch(path, f"change.{variant}", patch)
    values = data.get("values")
    if values is None:
        values = scenario.values
    elif not isinstance(values, dict):
        raise StepError(path, "values", "must be a map of chart values (chart/values.yaml)")
    if change and not values:
        raise StepError(path, "values", f"the change needs the chart values that make it (the scenario {scenario.name} has none)")
    judge = data.get("judge") or {v: v for v in scenario.predict}
    if not isinstance(judge, dict) or not judge:
        raise StepError(path, "judge", "must map variants of the release to variants the scenario predicts")
    for mine, theirs in judge.items():
        _check_variant(path, f"judge.{mine}", mine, known_variants())
        if theirs not in scenario.predict:
            raise StepError(
                path, f"judge.{mine}", f"the scenario {scenario.name} predicts nothing for {theirs!r} ({', '.join(scenario.predict)})"
            )
        for key, value in scenario.predict[theirs].items():
            check_live_prediction(scenario.path, f"predict.{theirs}", key, value)
    return Step(
        name=name,
        path=path,
        title=_text(path, data, "title"),
        order=order,
        scenario=scenario,
        goal=_text(path, data, "goal"),
        hints=[" ".join(h.split()) for h in hints],
        solution=_text(path, data, "solution"),
        predict=question,
        change=change,
        values=values,
        judge=dict(judge),
    )


def load_steps(folder=STEPS, scenarios: Path | None = None) -> list[Step]:
    """Every step in FOLDER, by order then name; an empty folder is an error."""
    folder = Path(folder)
    found = sorted((load_step(p, scenarios) for p in folder.glob("*.yaml")), key=lambda s: (s.order, s.name))
    if not found:
        raise StepError(folder, "steps", "no step file (*.yaml)")
    return found


def main(argv=None) -> int:
    try:
        steps = load_steps()
    except StepError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for i, s in enumerate(steps, 1):
        judged = ", ".join(f"{m} as {t}" if m != t else m for m, t in s.judge.items())
        print(f"{i}. {s.name}: {s.title} (scenario {s.scenario.name}; judged: {judged}; change: {', '.join(s.change) or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
