"""The workshop's view of a release, from what the kind cluster recorded: for the checks' unit tests
(tests/test_workshop.py) and the Workshop tab's browser test on a machine without a cluster
(replay_locustfile.py).

- ``release_deployments()``: the blocking and reactive Deployments as the API returned them
  (fixtures/orchestration/deployments-after-upgrade.json, API defaults and status included);
- ``window_of(run, step)``: a recorded scripted run (fixtures/<run>: run.json, the stats history, the
  recorder's timeline of pods and events) as the window a step's check judges: the same swarm, on the
  same Deployments with the step's change in place (what the lab's runs ran);
- ``RecordedApi``: ``workshop.cluster.WorkshopApi``'s interface over those Deployments, a ConfigMap and
  Helm's record of the release (its revisions' Secrets, encoded as Helm encodes them, with the repository's
  chart in them) held in memory;
- ``RecordedHelm``: ``workshop.helm.HelmRelease`` over a RecordedApi: the real helm renders (`helm template`
  of the chart the recorded release holds, written back to a folder as on the cluster), and an upgrade sets
  the Deployments to what it rendered and records the next revision, as Helm's patches, the API server and
  Helm's storage would; no cluster is asked.
"""

import base64
import copy
import csv
import gzip
import json
from pathlib import Path

import yaml

from liveness_lab.workshop.change import container_of, containers
from liveness_lab.workshop.check import Window
from liveness_lab.workshop.cluster import ApiError
from liveness_lab.workshop.helm import HelmRelease

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHART = Path(__file__).resolve().parents[2] / "chart"
COMPONENT = "app.kubernetes.io/component"


def recorded_deployments(variants=("blocking", "reactive")) -> dict:
    """The Deployments as the API returned them on 2026-11-24, the chart of that day's containers in them."""
    found = json.loads((FIXTURES / "orchestration/deployments-after-upgrade.json").read_text())
    return {"items": [d for d in found["items"] if d["metadata"]["labels"][COMPONENT] in variants]}


_INSTALLED = {}


def release_deployments(variants=("blocking", "reactive")) -> dict:
    """The recorded Deployments running what the repository's chart renders with its defaults (its
    containers, from the real helm): the release as cluster-up installs it today."""
    key = tuple(variants)
    if key not in _INSTALLED:
        api = RecordedApi(recorded_deployments(variants))
        rendered = containers(RecordedHelm(api).render({}, api.revisions[-1]))
        _INSTALLED[key] = applied(recorded_deployments(variants), rendered)
    return copy.deepcopy(_INSTALLED[key])


def chart_json(folder: Path = CHART) -> dict:
    """The chart in FOLDER as Helm keeps it in a release (pkg/chart.Chart's JSON): metadata, templates,
    values, schema and the other files, each file's bytes in base64."""

    def entry(path: Path) -> dict:
        return {"name": path.relative_to(folder).as_posix(), "data": base64.b64encode(path.read_bytes()).decode()}

    files = sorted(p for p in folder.rglob("*") if p.is_file() and "tests" not in p.relative_to(folder).parts)
    special = {"Chart.yaml", "values.yaml", "values.schema.json"}
    return {
        "metadata": yaml.safe_load((folder / "Chart.yaml").read_text()),
        "templates": [entry(p) for p in files if p.relative_to(folder).parts[0] == "templates"],
        "values": yaml.safe_load((folder / "values.yaml").read_text()),
        "schema": base64.b64encode((folder / "values.schema.json").read_bytes()).decode(),
        "files": [entry(p) for p in files if p.relative_to(folder).parts[0] != "templates" and p.name not in special],
    }


def release_secret(release: dict) -> dict:
    """RELEASE as the API gives Helm's Secret of it: data.release is base64 of Helm's base64 of gzip of JSON."""
    encoded = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    return {
        "metadata": {"name": f"sh.helm.release.v1.{release['name']}.v{release['version']}", "labels": {"version": str(release["version"])}},
        "data": {"release": base64.b64encode(encoded.encode()).decode()},
    }


def applied(deployments: dict, rendered: dict[str, dict]) -> dict:
    """DEPLOYMENTS with each variant's service container as RENDERED has it, its generation counted up where
    it changed, as the API server does after Helm's patch."""
    out = copy.deepcopy(deployments)
    for d in out["items"]:
        variant = d["metadata"]["labels"][COMPONENT]
        if variant in rendered and container_of(d) != rendered[variant]:
            d["spec"]["template"]["spec"]["containers"][0] = copy.deepcopy(rendered[variant])
            d["metadata"]["generation"] += 1
            d["status"]["observedGeneration"] = d["metadata"]["generation"]
    return out


def with_change(deployments: dict, step) -> dict:
    """DEPLOYMENTS running STEP's values, as Helm and the API would have them after it: the chart rendered
    with them (the real helm)."""
    api = RecordedApi(deployments)
    RecordedHelm(api).upgrade(step.values)
    return {"items": list(api.deps.values())}


def starting_containers(deployments: dict | None = None) -> dict:
    return {d["metadata"]["labels"][COMPONENT]: container_of(d) for d in (deployments or release_deployments())["items"]}


def window_of(run: str, step, deployments: dict | None = None) -> Window:
    """The recorded run RUN as the window STEP's check judges (the swarm's users, rate, latency and ramp
    from run.json; its records as the recorder kept them)."""
    folder = run if isinstance(run, Path) else FIXTURES / run
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
        # Helm's revisions of the release: the first as cluster-up installs it (the repository's chart).
        self.revisions = [
            {"name": release, "namespace": namespace, "version": 1, "config": {}, "chart": chart_json(), "info": {"status": "deployed"}}
        ]
        self.calls: list[tuple] = []
        self.fail: ApiError | None = None  # raised by the next call, once

    def _maybe_fail(self):
        if self.fail is not None:
            e, self.fail = self.fail, None
            raise e

    def deployments(self, variants) -> dict:
        self._maybe_fail()
        return {"items": [copy.deepcopy(self.deps[v]) for v in variants if v in self.deps]}

    def release_secrets(self, release) -> list[dict]:
        self._maybe_fail()
        return [release_secret(r) for r in self.revisions if r["name"] == release]

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


class RecordedHelm(HelmRelease):
    """HelmRelease over a RecordedApi (see the module docstring); UPGRADES lists the values upgraded to."""

    def __init__(self, api: RecordedApi):
        super().__init__(api)
        self.upgrades: list[dict] = []

    def upgrade(self, values: dict, release: dict | None = None, why: str = "") -> int:
        release = release or self.latest()
        rendered = containers(self.render(values, release))
        self.api.deps = {d["metadata"]["labels"][COMPONENT]: d for d in applied({"items": list(self.api.deps.values())}, rendered)["items"]}
        version = int(release["version"]) + 1
        self.api.revisions.append(release | {"version": version, "config": copy.deepcopy(values)})
        self.api.calls.append(("helm upgrade", json.dumps(values, sort_keys=True)))
        self.upgrades.append(values)
        return version
