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
    values:                            # optional: the step's change, as chart values (default: the scenario's)
      variants: {blocking: {probes: {liveness: {type: tcpSocket}}}}
    judge: {blocking: virtual}         # optional: the release's variant -> the scenario's variant whose
                                       # prediction it is judged by (default: the scenario's own variants)
    hints: [first, then, ...]          # shown one at a time
    solution: >                        # shown on request: {command} is the helm upgrade that applies the
      {command} (or Skip), then ...    # step to the release as it is now (Skip runs the same values)

One truth for a step's change: its ``values``. Every value any step sets is a **workshop key**; a step runs
the release's values with each workshop key as the step sets it, else as the release had it when the workshop
started, else unset (the chart's default), and every other value as the release has it now (a participant's
own ``--set latencyMs=500`` stays). Skip upgrades the release to exactly those values with Helm
(workshop/helm.py); the shown command is the ``helm upgrade --reset-values --set ...`` that sets exactly the
same (``set_flags``: every value, not only the step's, because --reuse-values cannot unset a value another
step set), so after any order of Skips, Resets, shown commands and own upgrades the Deployments are what
Helm renders from its stored values. Reset is the same with no step: the workshop keys as they started.
A step without values runs the release as it started (step 1: the demo itself).

Usage (from locust/): python -m liveness_lab.workshop.course   # checks every step, lists them
"""

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from liveness_lab.base.scenario import NAME, Scenario, ScenarioError, catalogue_folder, read_map
from liveness_lab.base.scenario import load_scenario as load_scenario_file
from liveness_lab.base.variants import VARIANTS

STEPS = Path(__file__).resolve().parent / "steps"
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
TOP_KEYS = {"title", "order", "scenario", "goal", "predict", "values", "judge", "hints", "solution"}
REQUIRED = ("title", "scenario", "goal", "hints", "solution")


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
    values: dict = field(default_factory=dict)  # the step's change, as chart values
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
            "values": {".".join(path): value for path, value in leaves(self.values).items()},
            "judged": {mine: theirs for mine, theirs in self.judge.items()},
            "load": {k: self.scenario.load[k] for k in LOAD_KEYS},
        }


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
    scenario = load_scenario(scenarios or catalogue_folder(), data["scenario"], path)
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
    values = data.get("values")
    if values is None:
        values = scenario.values
    elif not (isinstance(values, dict) and values):
        raise StepError(path, "values", "must be a non-empty map of chart values (chart/values.yaml)")
    if "{command}" not in (data.get("solution") or "") and values:
        raise StepError(path, "solution", "must show the step's command as {command} (the helm upgrade that applies its values)")
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
        values=values,
        judge=dict(judge),
    )


# --- the values of a step, and the command that applies them ---


def leaves(values: dict, prefix: tuple = ()) -> dict[tuple, object]:
    """VALUES flattened to its leaves: {("variants", "blocking", "mode"): "virtual"}."""
    out = {}
    for key, value in (values or {}).items():
        if isinstance(value, dict) and value:
            out |= leaves(value, (*prefix, key))
        else:
            out[(*prefix, key)] = value
    return out


_UNSET = object()


def lookup(values: dict, path: tuple):
    """The value at PATH in VALUES, or _UNSET."""
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return _UNSET
        values = values[key]
    return values


def _put(values: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        values = values.setdefault(key, {})
    values[path[-1]] = value


def _drop(values: dict, path: tuple) -> None:
    """PATH removed from VALUES, and the maps it leaves empty."""
    if len(path) == 1:
        values.pop(path[0], None)
        return
    inner = values.get(path[0])
    if isinstance(inner, dict):
        _drop(inner, path[1:])
        if not inner:
            values.pop(path[0])


def workshop_keys(steps: list[Step]) -> list[tuple]:
    """Every value any step sets, in the steps' order."""
    found = {}
    for s in steps:
        found |= dict.fromkeys(leaves(s.values))
    return list(found)


def target_values(current: dict, start: dict, step: Step | None, keys: list[tuple]) -> dict:
    """The release's values for STEP (None: Reset): CURRENT, the release's own values now, with every
    workshop key as STEP sets it, else as START (the values the workshop found) had it, else unset."""
    out = json.loads(json.dumps(current or {}))
    mine = leaves(step.values) if step else {}
    for path in keys:
        value = mine[path] if path in mine else lookup(start or {}, path)
        if value is _UNSET:
            _drop(out, path)
        else:
            _put(out, path, value)
    return out


# A text that --set would read as another type (a number, true, false, null) or split (commas): --set-string
# keeps a text a text; commas are escaped as Helm's strvals reads them.
_NOT_TEXT = re.compile(r"^(-?[0-9.]+([eE][-+]?[0-9]+)?|true|false|null|~)$", re.I)


def set_flags(values: dict) -> list[str]:
    """VALUES as `helm upgrade --reset-values` arguments, one per leaf: --set for numbers, true and false,
    --set-string for a text (commas escaped), --set-json for a list, an empty map or null. With
    --reset-values they are the release's values exactly, whatever it had before: the shown command of a
    step is complete, and equals what Skip applies (helm.HelmRelease.upgrade with the same values)."""
    flags = []
    for path, value in leaves(values).items():
        key = ".".join(path)
        if isinstance(value, bool):
            flags.append(f"--set {key}={str(value).lower()}")
        elif isinstance(value, (int, float)):
            flags.append(f"--set {key}={value}")
        elif isinstance(value, str) and not _NOT_TEXT.match(value):
            flags.append(f"--set {key}={value.replace(',', chr(92) + ',')}")
        elif isinstance(value, str):
            flags.append(f"--set-string {key}={value}")
        else:
            flags.append(f"--set-json {key}={json.dumps(value, separators=(',', ':'))}")
    return flags


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
        change = " ".join(f"{'.'.join(k)}={v}" for k, v in leaves(s.values).items()) or "none"
        print(f"{i}. {s.name}: {s.title} (scenario {s.scenario.name}; judged: {judged}; values: {change})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
