"""A scenario file: its format and its reader, for the lab (which runs the catalogue of them in
locust/liveness_lab/lab/scenarios/, lab.catalogue) and the workshop (whose steps are checked by their
scenario's prediction, in the Locust image, which ships the files but not the lab's code).

A scenario file holds data only (adding one needs no code):

    title: One line for the matrix.
    order: 10                      # place in the matrix (then the file name)
    quick: true                    # one of the short scenarios `scripts/lab.sh --quick` runs (CI)
    storm: true                    # one of the restart storms (`scripts/lab.sh --group storms`)
    setting: What is changed, in a few words.
    lesson: >                      # what it teaches, with the claim it tests
      ...
    sources: [kubernetes#103632, ...]
    values: {...}                  # chart values laid over the release's own (helm upgrade -f)
    variants: [blocking, reactive] # swarmed by scripts/demo.sh, from chart/values.yaml `variants:`
    load: {users: 20, rate: 1, latency_ms: 1000, ramp: 10, hold: 60, quiet: 60}   # and timeout_s (Locust's, 10)
                                   # and where: cluster (a load this machine cannot open, see LOAD_WHERE)
    actions:                       # what the lab does while the load runs (lab.actions), in order of `at`
      - {at: 30, target: downstream, replicas: 0, grace: 0, note: the downstream goes away}
      - {at: 60, target: downstream, env: {DEMO_API_DELAY: 3s}}   # null removes a variable
    kubelet: {maxContainerRestartPeriod: 60}   # what the cluster's kubelets must run with (see KUBELET)
    race:                          # predictions that hold in some runs, not in every one (see RACE_KEYS)
      predictions: {blocking: [restarted_pods]}
      runs: 10
      band: 60..100                # percent of runs in which they all hold, predicted before the runs
      why: >
        ...
    predict:                       # per swarmed variant, in the vocabulary of PREDICTIONS below
      blocking: {restarts: ">=1", kill_reason: liveness, kill_timing: from-settings}
      reactive: {restarts: 0, failures: 0}

What a run measured is not the file's: every judged run is a record in the lab's ledger (locust/ledger/).

Every mistake stops the load with a ScenarioError naming the file and the field.

Usage (from locust/): python -m liveness_lab.lab --help
"""

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml  # PyYAML comes with the kubernetes client (requirements.lock)

from . import DEFAULT_LATENCY_MS, DEFAULT_RATE, DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_USERS_PER_VARIANT, DEMO_PHASES_S, LOAD_WHERE
from .variants import VARIANTS

NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
# A count prediction: a number, a comparison with one ("0", ">=1", ">0", "<=2"), or a band whose both ends
# hold ("5700..10500": from 5,700 to 10,500).
COUNT = re.compile(r"^(>=|<=|>|<|==)?\s*(\d+)$")
BAND = re.compile(r"^(\d+)\s*\.\.\s*(\d+)$")

# What scripts/demo.sh runs when a scenario's load leaves a key out (its own defaults, but a shorter hold).
LOAD_DEFAULTS = {
    "users": DEFAULT_USERS_PER_VARIANT,
    "rate": DEFAULT_RATE,
    "latency_ms": DEFAULT_LATENCY_MS,
    "ramp": DEMO_PHASES_S["ramp"],
    "hold": 60,
    "quiet": 60,
    "timeout_s": DEFAULT_REQUEST_TIMEOUT_S,  # a request waiting longer counts as failed (Locust's timeout)
}
# load.where (LOAD_WHERE): "auto" follows the lab's --load; "cluster" is for a load of more connections than
# this machine's port mappings carry (kind's docker-proxy holds two descriptors per connection, so about
# 10,000 under a 20,000 open-file limit): the release's own workers open them inside the cluster.
LOAD_KEYS = set(LOAD_DEFAULTS) | {"where"}

# The prediction vocabulary, per variant: key -> what its value may be (checked by the loader, judged by
# report.predictions, for the lab and the workshop). A count is a number, a comparison (COUNT) or a band (BAND).
PREDICTIONS = {
    "restarts": "a count: container restarts of the variant's pods during the run (a kill whose restart has not come yet counts as one)",
    "restarted_pods": "'all' or a count: how many of its pods restarted at least once",
    "kill_reason": "'liveness': every restart a liveness kill of its own (not a startup-probe kill, OOMKilled, an exit of its own; "
    "none evicted): base/causes.py; 'liveness-or-exit': every restart a liveness kill of its own or an exit of the application's own "
    "(a JVM out of heap), none of the others",
    "first_restart": "'liveness' or 'exit': what ended the variant's first container to end, a liveness kill of its own or the "
    "application's own exit (base/causes.py)",
    "kill_timing": "'from-settings': the first liveness kill within (F-1)P+T .. FP+T (+ slack) of the load start, from the recorded "
    "probe; 'from-action': the same window after the scenario's first action",
    "failures": "a count: failed requests",
    "shed": "a count: requests answered 429 Too Many Requests (load shedding)",
    "failures_not_shed": "a count: failed requests other than 429: timeouts, resets, other statuses",
    "liveness_failures": "a count: failed liveness probes: the kubelet's probe counter where it was read, else its events with the "
    "failures each kill implies",
    "unhealthy": "a count: Unhealthy events of any probe",
    "ready": "'throughout' (every pod Ready in every snapshot) or 'not-throughout' (some pod NotReady during the load)",
    "recovers": "true: every pod Ready again within the quiet period (and stays so)",
    "throughput": "'offered': median requests/s during the hold at least THROUGHPUT_SHARE (90 %) of users x rate",
    "recovery_after_actions": "a count of seconds: from the last action's end (its rollout done) until every pod of the variant is Ready "
    "and stays so",
    "kills_after_actions": "a count: liveness kills of the variant's pods after the last action was done (its rollout, or its "
    "change in the running pods taken)",
    "added_restarts": "a count: container restarts of the pods an action added (a scale-out's new pods)",
    "added_liveness_failures": "a count: 'Liveness probe failed' events of the pods an action added",
    "throttled_pct": "a count: percent of CFS periods throttled over the run, the variant's most throttled pod (the kernel's cpu.stat "
    "every second on a kind node, report/cgroups.py; else cAdvisor's counters)",
    "throttled_peak_pct": "a count: the same in the pod's most throttled 15 s in which it ran at least 50 periods "
    "(cpu.PEAK_MIN_PERIODS; a window sliding by the second on the kernel's counters, else between two of cAdvisor's reads): a JVM "
    "starved while it warms up, whatever the rest of the run",
    "ready_share_pct": "a count: percent of the variant's pod-seconds Ready from the load start to the load stop",
    "longest_not_ready_s": "a count: the longest stretch in seconds, load start to load stop, with no Ready pod of the variant",
    "longest_restart_wait_s": "a count: the longest of the variant's restarts' waits, in seconds from a container's exit (finishedAt) to "
    "the next one's start (startedAt): the restart back-off's (CrashLoopBackOff) wait, 0-1 s for a restart at once",
    "first_kills_spread_s": "a count: seconds from the variant's first liveness kill to the first liveness kill of the last of its "
    "pods to be killed (how close together its pods went: 0 with one pod killed)",
    "gc_paused_before_kills_pct": "a count: the percent of time the pod's JVM was stopped for garbage collection in the liveness "
    "probe's period x threshold before each of its liveness kills (from the killed container's GC log where the JVM logs its "
    "pauses, -Xlog:gc; else as far as its scrapes answered), the lowest over the kills: report/gc.py",
    "gc_paused_before_first_restart_pct": "a count: the same for the variant's first container to end, killed or exited "
    "(its kill's time, else its end): report/gc.py",
    "in_flight_before_first_restart": "a count: the most requests in flight (demo_requests_in_flight) the variant's first "
    "container to end reported in its answered scrapes before its end, killed or exited; where its JVM logs its collections' CPU "
    "(-Xlog:gc+cpu), the collector's share of a CPU and its typical full collection reported beside it: report/gc.py",
    "vthreads_queued": "a count: the most virtual threads waiting for a carrier in one reading of Boot's /actuator/info "
    "(process.virtualThreads.queued) during the load: report/scheduler.py",
    "killed_before_started": "a count: liveness kills of containers started during the run whose startup probe had not passed by "
    "the kill (the kubelet's counter: no startup success between the container's start and its kill); a kubelet that gates "
    "liveness on the startup probe makes none, 1.35-1.37's do after a liveness kill (kubernetes#141155)",
    "inherited_started": "a count: containers started during the run that the kubelet reported started (containerStatuses[].started) "
    "in their first snapshot and not started in a later one: the flag inherited from the container before, until the startup "
    "probe's worker looked (kubernetes#141155; a kubelet with the fix reports a new container not started until its startup "
    "probe passes)",
}
# throughput: offered: the share of users x rate the median must reach (the lab's judge and the workshop's
# live check).
THROUGHPUT_SHARE = 0.9
CHOICES = {
    "kill_reason": {"liveness", "liveness-or-exit"},
    "first_restart": {"liveness", "exit"},
    "kill_timing": {"from-settings", "from-action"},
    "ready": {"throughout", "not-throughout"},
    "recovers": {True},
    "throughput": {"offered"},
}
# The predictions that read the scenario's actions, and what they need of them.
NEED_ACTIONS = {
    "recovery_after_actions": "actions",
    "kills_after_actions": "actions",
    "added_restarts": "scale-up",
    "added_liveness_failures": "scale-up",
}
TOP_KEYS = {
    "title",
    "order",
    "quick",
    "storm",
    "setting",
    "lesson",
    "sources",
    "values",
    "variants",
    "load",
    "actions",
    "kubelet",
    "predict",
    "race",
}
# Keys a scenario file once had, and where what they held is now.
GONE_KEYS = {"measured": "a run's results are kept in the lab's ledger (locust/ledger/), not in the scenario file"}
# An action (lab.actions): `at` seconds after the load start, what it changes on `target`'s Deployment: its
# `replicas` (with `grace`, the pods a scale to 0 removes are deleted with that grace period in seconds: 0 is
# a force deletion, the pods gone from the API and their Service at once, while the kubelet still stops each
# container with its spec's grace, preStop included: kubernetes#110507, kubernetes#115819) or its
# container's `env` (NAME: text sets it, NAME: null removes it: a rollout) or its container's `probe`
# settings (liveness, readiness or startup: the PROBE_SETTINGS given; in the Deployment's template, a rollout,
# or with `in_place: true` in its running pods, which only a cluster with in-place probe updates accepts:
# KEP-6318, feature gate MutableContainerProbes, alpha in Kubernetes 1.38); `note` says what it stands for.
# The target is a swarmed variant, or `downstream` when the scenario's values enable it.
ACTION_KEYS = {"at", "target", "replicas", "grace", "env", "probe", "in_place", "note"}
PROBE_KINDS = ("liveness", "readiness", "startup")
# The probe settings an action may change, and their least value (the API's validation: a threshold of
# at least 1, a delay of 0 or more); a liveness or startup probe's successThreshold must stay 1.
PROBE_SETTINGS = {"timeoutSeconds": 1, "periodSeconds": 1, "failureThreshold": 1, "successThreshold": 1, "initialDelaySeconds": 0}
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
MAX_REPLICAS = 10
# kubelet: what the cluster's kubelets must run with for the scenario to mean anything, read from each
# node's /configz before the lab starts (lab.runner); a cluster without it is refused (or the scenario
# skipped when it was not asked for by name). maxContainerRestartPeriod: the CrashLoopBackOff cap in
# seconds, 1-300 (KEP-5593; 300 when the kubelet sets none): scripts/cluster-up.sh --max-restart-period.
KUBELET_KEYS = {"maxContainerRestartPeriod": (1, 300)}
# race: predictions of a lesson that is truly probabilistic (a cold JVM's warm-up against the liveness
# countdown, which event loops a blocked pod's users' connections landed on): `predictions` names them per
# variant, `why` gives the mechanism that makes them a race, `runs` how many runs judge its chance, and
# `band` ("5..45") the share of runs, in percent, in which they all hold: the race's own prediction, written
# before its runs. A run is judged by its other predictions only (a scenario keeps at least one); the race
# is judged over its runs (lab.judge.judge_race): held when the share is in the band, not held when even
# its 95 % interval misses the band, cannot tell between, and not yet before `runs` runs.
RACE_KEYS = {"predictions", "runs", "why", "band"}
RACE_MIN_RUNS = 3
REQUIRED = {"title", "lesson", "sources", "variants", "predict"}


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with the file and the field in the message."""

    def __init__(self, path, field_name, problem):
        super().__init__(f"{path}: {field_name}: {problem}")


@dataclass(frozen=True)
class Action:
    """One step of a scenario's `actions` (see ACTION_KEYS)."""

    at: int
    target: str
    replicas: int | None = None
    env: dict | None = None
    grace: int | None = None
    note: str = ""
    probe: dict | None = None  # kind -> {field: value}
    in_place: bool = False  # the probe changed in the running pods, not in the Deployment's template

    def describe(self) -> str:
        """ "downstream: replicas 0 (its pods deleted with 0 s grace)", "downstream: DEMO_API_DELAY=3s",
        "servlet: liveness timeoutSeconds=10 (in its running pods)"..."""
        if self.replicas is not None:
            grace = f" (its pods deleted with {self.grace} s grace)" if self.grace is not None else ""
            return f"{self.target}: replicas {self.replicas}{grace}"
        if self.probe is not None:
            changes = "; ".join(f"{kind} " + ", ".join(f"{k}={v}" for k, v in fields.items()) for kind, fields in self.probe.items())
            return f"{self.target}: {changes} ({'in its running pods' if self.in_place else 'a rollout'})"
        return f"{self.target}: " + ", ".join(f"{k}={v}" if v is not None else f"{k} removed" for k, v in self.env.items())

    def to_json(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None and v != "" and v is not False}


# What a prediction's digest covers (Scenario.digest): the experiment and its judgement, not the prose. The
# race's `why` is prose; its predictions and runs are not.
DIGEST_FIELDS = ("values", "variants", "load", "actions", "kubelet", "predict", "race")
# The catalogue's folder: beside the lab's code; the Locust image copies the files alone (data, not the
# lab's code, which it does not ship) and names their folder with CATALOGUE_ENV (locust/Dockerfile).
CATALOGUE = Path(__file__).resolve().parent.parent / "lab" / "scenarios"
CATALOGUE_ENV = "LIVENESS_LAB_SCENARIOS"
# The scenario whose prediction is the demo's claim (report.verdict).
BASELINE = "baseline.yaml"


def catalogue_folder(environ=os.environ) -> Path:
    return Path(environ.get(CATALOGUE_ENV) or CATALOGUE)


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
    order: int = 100
    quick: bool = False
    storm: bool = False
    actions: list[Action] = field(default_factory=list)
    kubelet: dict = field(default_factory=dict)
    race: "Race | None" = None

    def in_race(self, variant: str, key: str) -> bool:
        """The prediction KEY of VARIANT is one of the scenario's race (not required of a run)."""
        return self.race is not None and key in self.race.predictions.get(variant, ())

    @property
    def digest(self) -> str:
        """The prediction's version: 12 hex digits of a SHA-256 over everything in the file that decides a run
        and its judgement, as canonical JSON (DIGEST_FIELDS; not the prose: title, lesson, setting, sources,
        order). Any edit to them is a new version, counted from 0 of 0 (lab.ledger)."""
        decided = {name: getattr(self, name) for name in DIGEST_FIELDS}
        decided["actions"] = [a.to_json() for a in self.actions]
        decided["race"] = (
            None if self.race is None else {"predictions": self.race.predictions, "runs": self.race.runs, "band": self.race.band}
        )
        text = json.dumps(decided, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def minutes(self) -> float:
        """The load's own duration (ramp, hold, demo.sh's cool-down, quiet) in minutes."""
        return (self.load["ramp"] + self.load["hold"] + DEMO_PHASES_S["cooldown"] + self.load["quiet"]) / 60


@dataclass(frozen=True)
class Race:
    """A scenario's `race` (see RACE_KEYS)."""

    predictions: dict[str, list[str]]
    runs: int
    why: str
    band: tuple[int, int] = (0, 100)  # the share of runs, in percent, in which all its predictions hold


def check_race(path, data: dict, predict: dict) -> Race | None:
    given = known_keys(path, "race", data.get("race"), RACE_KEYS)
    if not given:
        return None
    missing = sorted(RACE_KEYS - set(given))
    if missing:
        raise ScenarioError(
            path,
            f"race.{missing[0]}",
            "missing: a race names its predictions, the runs that judge it, the band of runs it predicts they hold in, and why",
        )
    predictions = given["predictions"]
    if not (isinstance(predictions, dict) and predictions):
        raise ScenarioError(path, "race.predictions", "must map a predicted variant to a list of its prediction keys")
    for variant, keys in predictions.items():
        where = f"race.predictions.{variant}"
        if variant not in predict:
            raise ScenarioError(path, where, f"{variant!r} has no predictions (predict: {', '.join(predict)})")
        if not (isinstance(keys, list) and keys and all(k in predict[variant] for k in keys)):
            raise ScenarioError(path, where, f"must list keys of predict.{variant}: {', '.join(predict[variant])}")
    if sum(len(p) for p in predict.values()) == len({(v, k) for v, keys in predictions.items() for k in keys}):
        raise ScenarioError(path, "race.predictions", "every prediction is a race, so no run could fail: keep one a run must hold")
    runs = given["runs"]
    if not (isinstance(runs, int) and not isinstance(runs, bool) and runs >= RACE_MIN_RUNS):
        raise ScenarioError(path, "race.runs", f"{runs!r} is not a whole number of runs, at least {RACE_MIN_RUNS}")
    why = given["why"]
    if not (isinstance(why, str) and why.strip()):
        raise ScenarioError(path, "race.why", "must be a non-empty text: the mechanism that makes it a race")
    band = BAND.match(str(given["band"]).strip())
    if not (band and int(band.group(1)) <= int(band.group(2)) <= 100):
        raise ScenarioError(path, "race.band", f"{given['band']!r} is not a share of runs in percent, LOW..HIGH within 0..100 (e.g. 5..45)")
    return Race({v: list(k) for v, k in predictions.items()}, runs, " ".join(why.split()), (int(band.group(1)), int(band.group(2))))


def check_count(value) -> bool:
    if isinstance(value, str) and (band := BAND.match(value.strip())):
        return int(band.group(1)) <= int(band.group(2))
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


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_actions(path, data: dict, variants: list[str], values: dict, load: dict) -> list[Action]:
    """The scenario's `actions`, checked (ACTION_KEYS), in order of `at`."""
    given = data.get("actions") or []
    if not isinstance(given, list):
        raise ScenarioError(path, "actions", "must be a list of actions, e.g. [{at: 30, target: downstream, replicas: 0}]")
    downstream = isinstance(values.get("downstream"), dict) and values["downstream"].get("enabled") is True
    window = load["ramp"] + load["hold"]
    out = []
    for i, a in enumerate(given):
        where = f"actions[{i}]"
        if not isinstance(a, dict):
            raise ScenarioError(path, where, "must be a map of " + ", ".join(sorted(ACTION_KEYS)))
        for key in a:
            if key not in ACTION_KEYS:
                raise ScenarioError(path, f"{where}.{key}", f"unknown key; known: {', '.join(sorted(ACTION_KEYS))}")
        for key in ("at", "target"):
            if key not in a:
                raise ScenarioError(path, f"{where}.{key}", "missing")
        at, target = a["at"], a["target"]
        if not whole(at) or not 0 <= at < window:
            raise ScenarioError(
                path, f"{where}.at", f"{at!r} is not a whole number of seconds within the load (0 to ramp + hold, {window} s)"
            )
        if target == "downstream":
            if not downstream:
                raise ScenarioError(
                    path, f"{where}.target", "downstream: the scenario's values must enable it (downstream: {enabled: true})"
                )
        elif target not in variants:
            raise ScenarioError(path, f"{where}.target", f"{target!r} is neither a swarmed variant ({', '.join(variants)}) nor downstream")
        if sum(k in a for k in ("replicas", "env", "probe")) != 1:
            raise ScenarioError(
                path,
                where,
                "needs one of replicas (scale the Deployment), env (set its container's environment) or probe (change its probes)",
            )
        replicas, env, grace = a.get("replicas"), a.get("env"), a.get("grace")
        if "replicas" in a and not (whole(replicas) and 0 <= replicas <= MAX_REPLICAS):
            raise ScenarioError(path, f"{where}.replicas", f"{replicas!r} is not a whole number from 0 to {MAX_REPLICAS}")
        if "grace" in a and not (replicas == 0 and whole(grace) and grace >= 0):
            raise ScenarioError(path, f"{where}.grace", "goes with replicas: 0 only, a whole number of seconds >= 0 (0: a force deletion)")
        if "env" in a:
            if not (isinstance(env, dict) and env):
                raise ScenarioError(path, f"{where}.env", "must map variable names to a text (set) or null (remove)")
            for name, value in env.items():
                if not (isinstance(name, str) and ENV_NAME.match(name)):
                    raise ScenarioError(path, f"{where}.env", f"{name!r} is not an environment variable name")
                if not (value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool)):
                    raise ScenarioError(path, f"{where}.env.{name}", f"{value!r} is not a text or null")
            env = {k: None if v is None else str(v) for k, v in env.items()}
        probe, in_place = check_probe_change(path, where, a)
        note = a.get("note", "")
        if not isinstance(note, str):
            raise ScenarioError(path, f"{where}.note", "must be a text")
        out.append(Action(at, target, replicas, env, grace, note.strip(), probe, in_place))
    return sorted(out, key=lambda x: x.at)


def check_probe_change(path, where: str, a: dict) -> tuple[dict | None, bool]:
    """An action's `probe` (PROBE_KINDS -> PROBE_SETTINGS -> a whole number) and `in_place` (with probe only)."""
    in_place = a.get("in_place", False)
    if "in_place" in a and not ("probe" in a and isinstance(in_place, bool)):
        raise ScenarioError(path, f"{where}.in_place", "goes with probe only: true (the running pods) or false (a rollout)")
    if "probe" not in a:
        return None, False
    probe = a["probe"]
    if not (isinstance(probe, dict) and probe):
        raise ScenarioError(path, f"{where}.probe", f"must map a probe ({', '.join(PROBE_KINDS)}) to the settings it changes")
    for kind, fields in probe.items():
        if kind not in PROBE_KINDS:
            raise ScenarioError(path, f"{where}.probe.{kind}", f"unknown probe; known: {', '.join(PROBE_KINDS)}")
        if not (isinstance(fields, dict) and fields):
            raise ScenarioError(path, f"{where}.probe.{kind}", f"must map settings ({', '.join(PROBE_SETTINGS)}) to whole numbers")
        for name, value in fields.items():
            if name not in PROBE_SETTINGS:
                raise ScenarioError(path, f"{where}.probe.{kind}.{name}", f"unknown setting; known: {', '.join(PROBE_SETTINGS)}")
            if not (whole(value) and value >= PROBE_SETTINGS[name]):
                raise ScenarioError(path, f"{where}.probe.{kind}.{name}", f"{value!r} is not a whole number from {PROBE_SETTINGS[name]}")
            if name == "successThreshold" and kind != "readiness" and value != 1:
                raise ScenarioError(path, f"{where}.probe.{kind}.{name}", f"must be 1 for a {kind} probe (the API refuses any other)")
    return {kind: dict(fields) for kind, fields in probe.items()}, in_place


def check_kubelet(path, data: dict) -> dict:
    given = known_keys(path, "kubelet", data.get("kubelet"), KUBELET_KEYS)
    for key, value in given.items():
        low, high = KUBELET_KEYS[key]
        if not (whole(value) and low <= value <= high):
            raise ScenarioError(path, f"kubelet.{key}", f"{value!r} is not a whole number of seconds from {low} to {high}")
    return dict(given)


def check_needs(path, where: str, key: str, value, actions: list[Action], variant: str) -> None:
    """A prediction that reads the actions needs them: any for from-action and recovery, a scale-up of its variant for added_*."""
    need = NEED_ACTIONS.get(key) or ("actions" if (key, value) == ("kill_timing", "from-action") else None)
    if need == "actions" and not actions:
        raise ScenarioError(path, f"{where}.{key}", "needs the scenario's actions (it is timed from them)")
    if need == "scale-up" and not any(a.target == variant and a.replicas for a in actions):
        raise ScenarioError(path, f"{where}.{key}", f"needs an action that raises {variant}'s replicas (its new pods are what it counts)")


def read_map(path: Path, top_keys: set, required, error=ScenarioError, gone: dict | None = None) -> dict:
    """A YAML file of the lab's kind (a scenario, a workshop step): named in lowercase letters, digits and
    dashes, a map of TOP_KEYS with the REQUIRED ones; a mistake is ERROR (ScenarioError) naming the field,
    a key of GONE's saying where what it held is now."""
    if not NAME.match(path.stem):
        raise error(path, "file name", "must be lowercase letters, digits and dashes, e.g. tcp-probe.yaml")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise error(path, "YAML", str(e).replace("\n", " ")) from e
    if not isinstance(data, dict):
        raise error(path, "top level", "must be a map of the keys " + ", ".join(sorted(top_keys)))
    for key in data:
        if key in (gone or {}):
            raise error(path, key, f"no longer a key of this file: {gone[key]}")
        if key not in top_keys:
            raise error(path, key, f"unknown key; known: {', '.join(sorted(top_keys))}")
    for key in sorted(set(required) - set(data)):
        raise error(path, key, "missing")
    return data


def known_keys(path, where: str, given, keys) -> dict:
    """A map under WHERE whose keys are KEYS' (None or absent: empty)."""
    given = given or {}
    if not isinstance(given, dict):
        raise ScenarioError(path, where, f"must be a map of {', '.join(sorted(keys))}")
    for key in given:
        if key not in keys:
            raise ScenarioError(path, f"{where}.{key}", f"unknown key; known: {', '.join(sorted(keys))}")
    return given


def load_scenario(path, known: dict | None = VARIANTS) -> Scenario:
    """One scenario file, checked; the name is the file name without .yaml. KNOWN: the variants it may
    swarm (the chart's table; None in the Locust pod, whose table lists only what its release deploys:
    there a scenario about another variant still loads, and the workshop's check says so)."""
    path = Path(path)
    name = path.stem
    data = read_map(path, TOP_KEYS, REQUIRED, gone=GONE_KEYS)
    for key in ("title", "lesson", "setting"):
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
        if not isinstance(v, str) or known is not None and v not in known:
            raise ScenarioError(path, "variants", f"unknown variant {v!r}; chart/values.yaml has {', '.join(known or VARIANTS)}")
    load = dict(LOAD_DEFAULTS, where="auto")
    for key, value in known_keys(path, "load", data.get("load"), LOAD_KEYS).items():
        if key == "where":
            if value not in LOAD_WHERE:
                raise ScenarioError(path, "load.where", f"{value!r} is not one of {', '.join(LOAD_WHERE)}")
            load[key] = value
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if (
            not number
            or value < 0
            or (key != "rate" and not isinstance(value, int))
            or (key in ("users", "hold", "rate", "timeout_s") and value == 0)
        ):
            raise ScenarioError(
                path,
                f"load.{key}",
                f"{value!r} is not a {'positive number' if key == 'rate' else 'whole number'}"
                + (" above 0" if key in ("users", "hold", "timeout_s") else ""),
            )
        load[key] = value
    load["rate"] = float(load["rate"])
    actions = check_actions(path, data, variants, values, load)
    kubelet = check_kubelet(path, data)
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
            check_needs(path, where, key, value, actions, variant)
    order, quick, storm = data.get("order", 100), data.get("quick", False), data.get("storm", False)
    if not isinstance(order, int) or isinstance(order, bool):
        raise ScenarioError(path, "order", f"{order!r} is not a whole number")
    for key, flag in (("quick", quick), ("storm", storm)):
        if not isinstance(flag, bool):
            raise ScenarioError(path, key, f"{flag!r} is not true or false")
    race = check_race(path, data, predict)
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
        order=order,
        quick=quick,
        storm=storm,
        actions=actions,
        kubelet=kubelet,
        race=race,
    )
