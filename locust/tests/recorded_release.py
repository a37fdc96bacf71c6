"""The workshop's view of a release, from what the kind cluster recorded: for the checks' unit tests
(tests/test_workshop.py) and the Workshop tab's browser test on a machine without a cluster
(replay_locustfile.py).

- ``release_deployments()``: the blocking and reactive Deployments as the API returned them
  (fixtures/orchestration/deployments-after-upgrade.json, API defaults and status included);
- ``window_of(run, step)``: a recorded scripted run (fixtures/<run>: run.json, the stats history, the
  recorder's timeline of pods and events) as the window a step's check judges: the same swarm, on the
  same Deployments with the step's change in place (what the lab's runs ran);
- ``RecordedApi``: ``workshop.cluster.WorkshopApi``'s interface over those Deployments and a ConfigMap
  held in memory; patches change the Deployment (its container, its generation), as the API server would.
"""

import copy
import csv
import json
from pathlib import Path

from liveness_lab.workshop.change import container_of, merge
from liveness_lab.workshop.check import Window
from liveness_lab.workshop.cluster import ApiError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
COMPONENT = "app.kubernetes.io/component"


def release_deployments(variants=("blocking", "reactive")) -> dict:
    found = json.loads((FIXTURES / "orchestration/deployments-after-upgrade.json").read_text())
    return {"items": [d for d in found["items"] if d["metadata"]["labels"][COMPONENT] in variants]}


def with_change(deployments: dict, step) -> dict:
    """DEPLOYMENTS with STEP's change made, as the API would have them after it."""
    out = copy.deepcopy(deployments)
    for d in out["items"]:
        variant = d["metadata"]["labels"][COMPONENT]
        if variant in step.change:
            d["spec"]["template"]["spec"]["containers"][0] = merge(container_of(d), step.change[variant])
            d["metadata"]["generation"] += 1
            d["status"]["observedGeneration"] = d["metadata"]["generation"]
    return out


def starting_containers(deployments: dict | None = None) -> dict:
    return {d["metadata"]["labels"][COMPONENT]: container_of(d) for d in (deployments or release_deployments())["items"]}


def window_of(run: str, step, deployments: dict | None = None) -> Window:
    """The recorded run RUN as the window STEP's check judges (the swarm's users, rate, latency and ramp
    from run.json; its records as the recorder kept them)."""
    folder = FIXTURES / run
    r = json.loads((folder / "run.json").read_text())
    variants = r["variants"].split(",")
    users = int(r["users_per_variant"])
    return Window(
        started=float(r["locust_started"]),
        users={v: users for v in variants},
        spawn_rate=len(variants) * users / max(1, r["phases"]["ramp"]),
        rate=float(r["rate_per_user"]),
        latency_ms=int(r.get("latency_ms", 1000)),
        deployments=deployments if deployments is not None else with_change(release_deployments(), step),
        unsettled=[],
        timeline=[json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines() if line.strip()],
        history=list(csv.DictReader((folder / "locust_stats_history.csv").open(newline=""))),
        failures=list(csv.DictReader((folder / "locust_failures.csv").open(newline="")))
        if (folder / "locust_failures.csv").exists()
        else [],
    )


class RecordedApi:
    """WorkshopApi's interface in memory: the recorded Deployments, changed by patches as the API server
    would, and the progress ConfigMap (None: it does not exist). CALLS lists what was asked."""

    def __init__(
        self, deployments: dict | None = None, configmap: bool = True, namespace: str = "liveness-lab", release: str = "liveness-lab"
    ):
        self.namespace, self.release = namespace, release
        self.deps = {d["metadata"]["labels"][COMPONENT]: d for d in copy.deepcopy(deployments or release_deployments())["items"]}
        self.cm = {"data": {}, "rv": 1} if configmap else None
        self.calls: list[tuple] = []
        self.fail: ApiError | None = None  # raised by the next call, once

    def _maybe_fail(self):
        if self.fail is not None:
            e, self.fail = self.fail, None
            raise e

    def deployments(self, variants) -> dict:
        self._maybe_fail()
        return {"items": [copy.deepcopy(self.deps[v]) for v in variants if v in self.deps]}

    def set_container(self, variant, container) -> None:
        self._maybe_fail()
        self.calls.append(("set_container", variant))
        d = self.deps[variant]
        d["spec"]["template"]["spec"]["containers"][0] = copy.deepcopy(container)
        d["metadata"]["generation"] += 1
        d["status"]["observedGeneration"] = d["metadata"]["generation"]

    def read_progress(self):
        self._maybe_fail()
        if self.cm is None:
            return None
        return dict(self.cm["data"]), str(self.cm["rv"])

    def write_progress(self, data, resource_version) -> str:
        self._maybe_fail()
        if self.cm is None:
            raise ApiError("ConfigMap not found", 404)
        if resource_version is not None and str(resource_version) != str(self.cm["rv"]):
            raise ApiError("the object has been modified", 409)
        self.calls.append(("write_progress",))
        self.cm["data"].update(data)
        self.cm["rv"] += 1
        return str(self.cm["rv"])
