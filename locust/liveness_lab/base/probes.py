"""A container's probes as the kubelet runs them: the kind (httpGet, tcpSocket ...), where it asks, and
the timing that decides a restart. One reading of the pod spec, used by the Pods tab (what is on screen)
and by report.settings (what run.json records and the verdict times kills against)."""

# What the kubelet uses when a probe leaves a field out (the API server fills these in anyway).
PROBE_DEFAULTS = {"periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
PROBE_KINDS = ("httpGet", "tcpSocket", "grpc", "exec")


def probe_settings(probe: dict | None) -> dict | None:
    """periodSeconds, timeoutSeconds, failureThreshold, its kind (httpGet, tcpSocket ...) and where it asks
    (path, port) of one probe (API JSON)."""
    if not probe:
        return None
    out = {key: int(probe.get(key, default)) for key, default in PROBE_DEFAULTS.items()}
    kind = next((k for k in PROBE_KINDS if k in probe), None)
    target = probe.get(kind) or {} if kind != "exec" else {}
    out["type"] = kind
    out["path"] = target.get("path")
    out["port"] = target.get("port")
    return out


def describe(settings: dict | None, ports: dict | None = None) -> str:
    """One line a workshop reads: "httpGet http (8080) /livez, every 5 s, timeout 1 s, 3 failures".
    PORTS maps the container's port names to numbers, to show both."""
    if not settings:
        return "none"
    port = settings.get("port")
    if isinstance(port, str) and ports and port in ports:
        port = f"{port} ({ports[port]})"
    where = " ".join(str(x) for x in (port, settings.get("path")) if x is not None)
    return (
        f"{settings['type']} {where}".rstrip() + f", every {settings['periodSeconds']} s, "
        f"timeout {settings['timeoutSeconds']} s, {settings['failureThreshold']} failures"
    )


def _service_container(pod: dict) -> dict | None:
    containers = (pod.get("spec") or {}).get("containers") or []
    return containers[0] if containers else None


def container_ports(pod: dict) -> dict:
    """The named ports of a pod's first container (API JSON): {"http": 8080, "management": 8081}."""
    container = _service_container(pod) or {}
    return {p["name"]: p.get("containerPort") for p in container.get("ports") or [] if p.get("name")}


def container_liveness_settings(pod: dict) -> dict | None:
    """probe_settings of a pod's first container's liveness probe (API JSON), None without one."""
    return probe_settings((_service_container(pod) or {}).get("livenessProbe"))


def container_liveness(pod: dict) -> str | None:
    """The described liveness probe of a pod's first container (API JSON), None when the spec has none."""
    container = _service_container(pod)
    if container is None:
        return None
    return describe(probe_settings(container.get("livenessProbe")), container_ports(pod))
