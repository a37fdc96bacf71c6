"""What the lab does to the release while a scenario's load runs: the scenario's `actions` (base.scenario,
ACTION_KEYS), each at its second after the load start. An action scales its target's Deployment (and, with
`grace`, deletes the pods a scale to 0 removes with that grace period: 0 is a force deletion, which takes
them out of the API and their Service at once while the kubelet still stops each container with its spec's
grace, preStop included: kubernetes#110507, kubernetes#115819), sets and removes environment variables
of its container (a rollout, as `kubectl set env` does) or changes its container's probe settings: in the
Deployment's template (a rollout, as `helm upgrade` does) or in its running pods (in place: KEP-6318, on a
cluster with MutableContainerProbes; the lab asks the API server first, lab.runner).

Each action is written to the run's timeline as it is done (`action`: when, what, on which target) and
again once its Deployment has rolled out (`action-done`: every replica updated and Ready, or none left
after a scale to 0), so the judge times kills and the recovery from the action itself, not from the
timetable. An action the API refused is written too (`action` with `error`), and the run goes on.

Afterwards ``undo`` puts back what the actions changed (the replicas, the environment and the probes each
Deployment had before the first action on it, and the probes of the pods changed in place that still run):
`helm rollback` alone would not, because Helm's three-way merge keeps an environment variable that no
revision of the release ever set, and never looks at a pod.
"""

import threading
import time
from dataclasses import dataclass, field

from liveness_lab.base.console import LOG
from liveness_lab.base.probes import service_container
from liveness_lab.base.scenario import Action
from liveness_lab.base.variants import fullname
from liveness_lab.demo.release import ApiUnavailable

# How often the runner looks at the clock and at the rollouts it waits for.
TICK_S = 0.5


@dataclass
class Pending:
    """An action done, whose Deployment has not yet rolled out."""

    index: int
    action: Action
    t: float


@dataclass
class Touched:
    """A Deployment as it was before the first action on it."""

    replicas: int
    env: list[dict]
    probes: dict = field(default_factory=dict)  # kind -> its template's probe


def container_env(deployment: dict) -> list[dict]:
    return list((service_container(deployment) or {}).get("env") or [])


def probes_of(obj: dict) -> dict:
    """The service container's probes of a pod or a Deployment, by kind (liveness, readiness, startup)."""
    container = service_container(obj) or {}
    return {kind: dict(container[f"{kind}Probe"]) for kind in ("liveness", "readiness", "startup") if container.get(f"{kind}Probe")}


def put_back(before: dict, now: dict, changes: dict) -> dict:
    """Per kind of CHANGES, the fields whose value NOW differs from BEFORE's, with BEFORE's value."""
    out = {}
    for kind, fields in changes.items():
        back = {k: before.get(kind, {}).get(k) for k in fields if now.get(kind, {}).get(k) != before.get(kind, {}).get(k)}
        back = {k: v for k, v in back.items() if v is not None}
        if back:
            out[kind] = back
    return out


def with_env(env: list[dict], changes: dict) -> list[dict]:
    """ENV with CHANGES applied: a name set to a text is replaced in place or added at the end, one set to
    None is removed."""
    out = [dict(e) for e in env if changes.get(e["name"], "") is not None]
    for name, value in changes.items():
        if value is None:
            continue
        found = next((e for e in out if e["name"] == name), None)
        if found is not None:
            found.clear()
            found.update({"name": name, "value": value})
        else:
            out.append({"name": name, "value": value})
    return out


def rolled_out(deployment: dict) -> bool:
    """The Deployment runs its newest spec: every wanted replica updated, Ready and available, no other
    left (a scale to 0: no pod at all)."""
    want = deployment["spec"].get("replicas", 1)
    st = deployment.get("status") or {}
    if st.get("observedGeneration", 0) < deployment["metadata"].get("generation", 0):
        return False
    counts = [st.get(k, 0) or 0 for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")]
    return counts == [want] * 4 and not (st.get("terminatingReplicas") or 0)


@dataclass
class ActionRunner:
    """The scenario's ACTIONS on the release API (demo.release.ClusterApi), from a thread of its own: the
    scripted demo starts it with the load (Demo's during_load) and stops it when the load is over."""

    api: object
    actions: list[Action]
    clock: object = time.time
    sleep: object = time.sleep
    done: list[dict] = field(default_factory=list)
    touched: dict[str, Touched] = field(default_factory=dict)
    pods_changed: dict[str, dict] = field(default_factory=dict)  # pod -> its probes before an action changed them in place

    def __post_init__(self):
        self.stopped = threading.Event()
        self.thread = None
        self.record = lambda kind, **fields: None

    def deployment_name(self, target: str) -> str:
        return f"{fullname(self.api.release)}-{target}"

    # --- the demo's hook -----------------------------------------------------------------------------

    def start(self, started: float, record) -> None:
        """Runs the actions at STARTED + at, writing each with RECORD(kind, **fields) (the run's timeline)."""
        self.record = record
        self.thread = threading.Thread(target=self.run, args=(started,), name="lab-actions", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=30)
            self.thread = None

    # --- the work ------------------------------------------------------------------------------------

    def run(self, started: float) -> None:
        todo = list(enumerate(self.actions))
        pending: list[Pending] = []
        while not self.stopped.is_set() and (todo or pending):
            now = self.clock()
            while todo and now >= started + todo[0][1].at:
                index, action = todo.pop(0)
                if self.perform(index, action, started):
                    pending.append(Pending(index, action, self.clock()))
            for p in list(pending):
                if self.check_done(p, started):
                    pending.remove(p)
            self.sleep(TICK_S)
        for p in pending:
            LOG.info("action %s (%s): not rolled out when the load ended", p.index, p.action.describe())

    def remember(self, target: str) -> dict:
        name = self.deployment_name(target)
        deployment = self.api.deployment(name)
        if target not in self.touched:
            spec = deployment["spec"]
            self.touched[target] = Touched(spec.get("replicas", 1), container_env(deployment), probes_of(deployment))
        return deployment

    def perform(self, index: int, action: Action, started: float) -> bool:
        name = self.deployment_name(action.target)
        fields = {"index": index, "at": action.at, "target": action.target, "what": action.describe(), "note": action.note}
        try:
            deployment = self.remember(action.target)
            if action.replicas is not None:
                self.api.scale_deployment(name, action.replicas)
                if action.grace is not None:
                    for pod in self.api.component_pods(action.target):
                        self.api.delete_pod(pod["metadata"]["name"], action.grace)
                fields["replicas"] = action.replicas
            elif action.probe is not None:
                fields["probe"], fields["inPlace"] = action.probe, action.in_place
                if action.in_place:
                    pods = [p for p in self.api.component_pods(action.target) if not p["metadata"].get("deletionTimestamp")]
                    for pod in pods:
                        pod_name = pod["metadata"]["name"]
                        self.pods_changed.setdefault(pod_name, probes_of(pod))
                        for kind, changes in action.probe.items():
                            self.api.set_probe(pod_name, kind, changes, pod=True)
                    fields["pods"] = sorted(p["metadata"]["name"] for p in pods)
                else:
                    for kind, changes in action.probe.items():
                        self.api.set_probe(name, kind, changes)
            else:
                self.api.replace_env(name, with_env(container_env(deployment), action.env))
                fields["env"] = action.env
        except ApiUnavailable as e:
            LOG.warning("action %s (%s) failed: %s", index, action.describe(), e)
            self.record("action", **fields, error=str(e))
            return False
        t = self.clock()
        LOG.info("action at +%.0f s: %s%s", t - started, action.describe(), f" ({action.note})" if action.note else "")
        self.record("action", **fields)
        self.done.append(fields | {"t": t})
        return True

    def check_done(self, p: Pending, started: float) -> bool:
        try:
            deployment = self.api.deployment(self.deployment_name(p.action.target))
        except ApiUnavailable:
            return False
        if not rolled_out(deployment):
            return False
        t = self.clock()
        LOG.info("action %s rolled out at +%.0f s (%.0f s after it): %s", p.index, t - started, t - p.t, p.action.describe())
        self.record(
            "action-done", index=p.index, at=p.action.at, target=p.action.target, what=p.action.describe(), seconds=round(t - p.t, 1)
        )
        return True

    def undo(self) -> list[str]:
        """Each Deployment an action touched, back to its replicas and environment from before; what was
        put back, one line each (nothing when the actions had put it back themselves)."""
        said = []
        for target, before in self.touched.items():
            name = self.deployment_name(target)
            now = self.api.deployment(name)
            if container_env(now) != before.env:
                self.api.replace_env(name, before.env)
                said.append(f"{name}: environment put back")
            if now["spec"].get("replicas", 1) != before.replicas:
                self.api.scale_deployment(name, before.replicas)
                said.append(f"{name}: replicas put back to {before.replicas}")
            for kind, back in put_back(before.probes, probes_of(now), before.probes).items():
                self.api.set_probe(name, kind, back)
                said.append(f"{name}: {kind} probe put back")
        self.touched = {}
        running = {}
        for target in {a.target for a in self.actions if a.in_place}:
            running |= {p["metadata"]["name"]: p for p in self.api.component_pods(target)}
        for pod_name, before in self.pods_changed.items():
            if pod_name not in running:
                continue  # replaced since: its Deployment's template made the new one
            for kind, back in put_back(before, probes_of(running[pod_name]), before).items():
                self.api.set_probe(pod_name, kind, back, pod=True)
                said.append(f"pod {pod_name}: {kind} probe put back in place")
        self.pods_changed = {}
        for line in said:
            LOG.info("after the actions: %s", line)
        return said
