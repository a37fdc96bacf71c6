"""A step's change to a Deployment's service container, and whether the release runs it.

A step's ``change`` is a strategic merge patch of the container (what ``kubectl patch`` sends): maps merge
key by key, ``null`` removes a key, the lists Kubernetes merges by a key (env by ``name``, ports by
``containerPort``) merge item by item, other lists are replaced. Skip sends it to the API server, which
merges it; here the same merge computes what the container should be after it (from the container the
workshop started with), so a step can tell whether the release runs its change, whoever made it (Skip,
or the participant's ``helm upgrade``), and say in words what differs.

What is compared is what decides the lesson: the mode and every environment variable, the ports, the three
probes as the kubelet runs them (``base.probes.Probe``: kind, port, path, period, timeout,
threshold). Fields the API server fills in with defaults are left out, so a container read from the API
compares equal to one rendered by the chart.
"""

import copy

from liveness_lab.base.probes import Probe, describe

# Kubernetes' patch merge keys of the container lists a step may change (core/v1 Container).
MERGE_KEYS = {"env": "name", "ports": "containerPort", "volumeMounts": "mountPath", "containers": "name"}
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def merge(target, patch, key: str | None = None):
    """TARGET with the strategic merge PATCH applied (neither is changed). KEY: the field being merged, for
    its list merge key."""
    if isinstance(patch, dict) and isinstance(target, dict):
        out = copy.deepcopy(target)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = merge(out[k], v, k)
            else:
                out[k] = copy.deepcopy(v)
        return out
    if isinstance(patch, list) and isinstance(target, list) and key in MERGE_KEYS:
        by = MERGE_KEYS[key]
        out = copy.deepcopy(target)
        for item in patch:
            i = next((j for j, x in enumerate(out) if isinstance(x, dict) and x.get(by) == item.get(by)), None)
            if item.get("$patch") == "delete":
                if i is not None:
                    del out[i]
            elif i is None:
                out.append(copy.deepcopy(item))
            else:
                out[i] = merge(out[i], item)
        return out
    return copy.deepcopy(patch)


def normalize(container: dict) -> dict:
    """What a container runs that a step may change, comparable whether read from the API or rendered."""
    return {
        "env": {e["name"]: e.get("value") for e in container.get("env") or [] if "name" in e},
        "ports": {p.get("name") or str(p["containerPort"]): p["containerPort"] for p in container.get("ports") or []},
        **{probe: Probe.from_spec(container.get(probe)) for probe in PROBES},
        "image": container.get("image"),
    }


def differences(expected: dict, live: dict) -> list[str]:
    """In words, how the LIVE container differs from the EXPECTED one (both API JSON or rendered), the
    expected value last: "livenessProbe is httpGet http /livez, ... (this step's: tcpSocket http, ...)"."""
    want, have = normalize(expected), normalize(live)
    out = []
    for name in sorted(set(want["env"]) | set(have["env"])):
        if want["env"].get(name) != have["env"].get(name):
            now = "not set" if name not in have["env"] else repr(have["env"][name])
            then = "not set" if name not in want["env"] else repr(want["env"][name])
            out.append(f"env {name} is {now} (this step's: {then})")
    if want["ports"] != have["ports"]:
        out.append(f"ports are {have['ports']} (this step's: {want['ports']})")
    for probe in PROBES:
        if want[probe] != have[probe]:
            out.append(f"{probe} is {describe(have[probe])} (this step's: {describe(want[probe])})")
    if want["image"] != have["image"]:
        out.append(f"image is {have['image']} (this step's: {want['image']})")
    return out


def container_of(deployment: dict) -> dict:
    """The service container of a Deployment (API JSON): its first, as the chart renders one."""
    return (deployment["spec"]["template"]["spec"].get("containers") or [{}])[0]
