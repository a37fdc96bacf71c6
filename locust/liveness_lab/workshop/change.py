"""Whether a Deployment's service container runs what the chart renders for a step's values, and how it
differs, in words.

What is compared is what decides the lesson: the mode and every environment variable, the ports, the three
probes as the kubelet runs them (``base.probes.Probe``: kind, port, path, period, timeout, threshold), the
image. Fields the API server fills in with defaults are left out, so a container read from the API compares
equal to one rendered by the chart.
"""

from liveness_lab.base.probes import Probe, describe, service_container

PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


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
    """The service container of a Deployment (API JSON), {} where it has none (base.probes.service_container)."""
    return service_container(deployment) or {}


def containers(objects: list[dict], component_label: str = "app.kubernetes.io/component") -> dict[str, dict]:
    """The service container of each variant Deployment among rendered OBJECTS, by the variant."""
    return {
        (d["metadata"].get("labels") or {}).get(component_label): container_of(d)
        for d in objects
        if d.get("kind") == "Deployment" and (d["metadata"].get("labels") or {}).get("app.kubernetes.io/name") == "liveness-lab"
    }
