"""The lab's scenario catalogue: one YAML file per scenario in locust/liveness_lab/lab/scenarios/, read and checked here.

A scenario file holds data only (adding one needs no code):

    title: One line for the matrix.
    order: 10                      # place in the matrix (then the file name)
    quick: true                    # one of the short scenarios `scripts/lab.sh --quick` runs (CI)
    setting: What is changed, in a few words.
    lesson: >                      # what it teaches, with the claim it tests
      ...
    sources: [kubernetes#103632, ...]
    values: {...}                  # chart values laid over the release's own (helm upgrade -f)
    variants: [blocking, reactive] # swarmed by scripts/demo.sh, from chart/values.yaml `variants:`
    load: {users: 20, rate: 1, latency_ms: 1000, ramp: 10, hold: 60, quiet: 60}
    predict:                       # per swarmed variant, in the vocabulary of PREDICTIONS below
      blocking: {restarts: ">=1", kill_reason: liveness, kill_timing: from-settings}
      reactive: {restarts: 0, failures: 0}
    measured: >                    # what the cluster did where it differed from the first prediction,
      ...                          # and why, with the evidence (the measurement wins)

Every mistake stops the load with a ScenarioError naming the file and the field.

Usage (from locust/): python -m liveness_lab.lab --help
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml  # PyYAML comes with the kubernetes client (requirements.lock)

from liveness_lab.base import DEFAULT_LATENCY_MS
from liveness_lab.base.variants import VARIANTS

CATALOGUE = Path(__file__).resolve().parent / "scenarios"
NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
# A count prediction: a number, or a comparison with one ("0", ">=1", ">0", "<=2").
COUNT = re.compile(r"^(>=|<=|>|<|==)?\s*(\d+)$")

# What scripts/demo.sh runs when a scenario's load leaves a key out (its own defaults, but a shorter hold).
LOAD_DEFAULTS = {"users": 20, "rate": 1.0, "latency_ms": DEFAULT_LATENCY_MS, "ramp": 10, "hold": 60, "quiet": 60}
LOAD_KEYS = set(LOAD_DEFAULTS)

# The prediction vocabulary, per variant: key -> what its value may be (checked by the loader, judged by
# lab.judge). A count is a number or a comparison (COUNT).
PREDICTIONS = {
    "restarts": "a count: container restarts of the variant's pods during the run",
    "restarted_pods": "'all' or a count: how many of its pods restarted at least once",
    "kill_reason": "'liveness': every restart followed liveness failures (not OOMKilled, not evicted)",
    "kill_timing": "'from-settings': the first liveness kill within (F-1)P+T .. FP+T (+ slack) of the load start, from the recorded probe",
    "failures": "a count: failed requests",
    "shed": "a count: requests answered 429 Too Many Requests (load shedding)",
    "failures_not_shed": "a count: failed requests other than 429: timeouts, resets, other statuses",
    "liveness_failures": "a count: 'Liveness probe failed' events",
    "unhealthy": "a count: Unhealthy events of any probe",
    "ready": "'throughout' (every pod Ready in every snapshot) or 'not-throughout' (some pod NotReady during the load)",
    "recovers": "true: every pod Ready again within the quiet period (and stays so)",
    "throughput": "'offered': median requests/s during the hold at least 90 % of users x rate",
}
CHOICES = {
    "kill_reason": {"liveness"},
    "kill_timing": {"from-settings"},
    "ready": {"throughout", "not-throughout"},
    "recovers": {True},
    "throughput": {"offered"},
}
TOP_KEYS = {"title", "order", "quick", "setting", "lesson", "sources", "values", "variants", "load", "predict", "measured"}
REQUIRED = {"title", "lesson", "sources", "variants", "predict"}


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the file and the field in the message."""

    def __init__(self, path, field_name, problem):
        super().__init__(f"{path}: {field_name}: {problem}")


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    title: str
    lesson: str
    sources: list[str]
    variants: list[str]
    load: dict
    predict: dict[str, dict]
    values: dict = field(default_factory=dict)
    setting: str = ""
    measured: str = ""
    order: int = 100
    quick: bool = False

    def minutes(self) -> float:
        """The load's own duration (ramp, hold, demo.sh's 5 s cool-down, quiet) in minutes."""
        return (self.load["ramp"] + self.load["hold"] + 5 + self.load["quiet"]) / 60


def check_count(value) -> bool:
    return (
        isinstance(value, int) and not isinstance(value, bool) and value >= 0 or isinstance(value, str) and bool(COUNT.match(value.strip()))
    )


def check_prediction(path, where, key, value) -> None:
    if key not in PREDICTIONS:
        raise ScenarioError(path, where, f"unknown prediction '{key}'; known: {', '.join(PREDICTIONS)}")
    field_name = f"{where}.{key}"
    if PREDICTIONS[key].startswith("a count"):
        ok = check_count(value)
    elif key == "restarted_pods":
        ok = value == "all" or check_count(value)
    else:
        ok = value in CHOICES[key] and not (key != "recovers" and isinstance(value, bool))
    if not ok:
        raise ScenarioError(path, field_name, f"{value!r} is not {PREDICTIONS[key]}")


def load_scenario(path) -> Scenario:
    """One scenario file, checked; the name is the file name without .yaml."""
    path = Path(path)
    name = path.stem
    if not NAME.match(name):
        raise ScenarioError(path, "file name", "must be lowercase letters, digits and dashes, e.g. tcp-probe.yaml")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ScenarioError(path, "YAML", str(e).replace("\n", " ")) from e
    if not isinstance(data, dict):
        raise ScenarioError(path, "top level", "must be a map of the keys " + ", ".join(sorted(TOP_KEYS)))
    for key in data:
        if key not in TOP_KEYS:
            raise ScenarioError(path, key, f"unknown key; known: {', '.join(sorted(TOP_KEYS))}")
    for key in sorted(REQUIRED - set(data)):
        raise ScenarioError(path, key, "missing")
    for key in ("title", "lesson", "setting", "measured"):
        if key in data and not (isinstance(data[key], str) and data[key].strip()):
            raise ScenarioError(path, key, "must be a non-empty text")
    sources = data["sources"]
    if not (isinstance(sources, list) and sources and all(isinstance(s, str) and s for s in sources)):
        raise ScenarioError(path, "sources", "must be a non-empty list of texts (issue threads, docs, pages)")
    values = data.get("values") or {}
    if not isinstance(values, dict):
        raise ScenarioError(path, "values", "must be a map of chart values (chart/values.yaml)")
    variants = data["variants"]
    if not (isinstance(variants, list) and variants):
        raise ScenarioError(path, "variants", "must be a non-empty list of variant names")
    for v in variants:
        if v not in VARIANTS:
            raise ScenarioError(path, "variants", f"unknown variant {v!r}; chart/values.yaml has {', '.join(VARIANTS)}")
    load = dict(LOAD_DEFAULTS)
    given = data.get("load") or {}
    if not isinstance(given, dict):
        raise ScenarioError(path, "load", f"must be a map of {', '.join(sorted(LOAD_KEYS))}")
    for key, value in given.items():
        if key not in LOAD_KEYS:
            raise ScenarioError(path, f"load.{key}", f"unknown key; known: {', '.join(sorted(LOAD_KEYS))}")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or value < 0 or (key != "rate" and not isinstance(value, int)) or (key in ("users", "hold", "rate") and value == 0):
            raise ScenarioError(
                path,
                f"load.{key}",
                f"{value!r} is not a {'positive number' if key == 'rate' else 'whole number'}"
                + (" above 0" if key in ("users", "hold") else ""),
            )
        load[key] = value
    load["rate"] = float(load["rate"])
    predict = data["predict"]
    if not (isinstance(predict, dict) and predict):
        raise ScenarioError(path, "predict", "must map each swarmed variant to its predictions")
    for variant, expected in predict.items():
        where = f"predict.{variant}"
        if variant not in variants:
            raise ScenarioError(path, where, f"{variant!r} is not swarmed by this scenario (variants: {', '.join(variants)})")
        if not (isinstance(expected, dict) and expected):
            raise ScenarioError(path, where, "must be a map of predictions: " + ", ".join(PREDICTIONS))
        for key, value in expected.items():
            check_prediction(path, where, key, value)
    order, quick = data.get("order", 100), data.get("quick", False)
    if not isinstance(order, int) or isinstance(order, bool):
        raise ScenarioError(path, "order", f"{order!r} is not a whole number")
    if not isinstance(quick, bool):
        raise ScenarioError(path, "quick", f"{quick!r} is not true or false")
    return Scenario(
        name=name,
        path=path,
        title=data["title"].strip(),
        lesson=" ".join(data["lesson"].split()),
        sources=sources,
        variants=variants,
        load=load,
        predict=predict,
        values=values,
        setting=data.get("setting", "").strip(),
        measured=" ".join(data.get("measured", "").split()),
        order=order,
        quick=quick,
    )


def load_catalogue(folder=CATALOGUE, only: list[str] | None = None, quick: bool = False) -> list[Scenario]:
    """Every scenario in FOLDER (or those named in ONLY, in catalogue order; or the quick ones), by order
    then name. A name in ONLY without a file is an error listing the names there are."""
    folder = Path(folder)
    scenarios = sorted((load_scenario(p) for p in folder.glob("*.yaml")), key=lambda s: (s.order, s.name))
    if only:
        names = {s.name for s in scenarios}
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ScenarioError(folder, "--only", f"no scenario {', '.join(unknown)}; there are {', '.join(s.name for s in scenarios)}")
        scenarios = [s for s in scenarios if s.name in only]
    if quick:
        scenarios = [s for s in scenarios if s.quick]
    return scenarios
