"""The service variants Locust can swarm, and where each one answers.

The names and NodePorts mirror ``chart/values.yaml`` (``variants.<name>.nodePort``), the one place they
are defined; ``test_variant_table_matches_the_chart_values`` in ``locust/tests/test_locustfile.py`` fails
when the two drift apart.

Where a variant answers, first match wins:

- ``LIVENESS_LAB_<VARIANT>_HOST`` (e.g. ``LIVENESS_LAB_BLOCKING_HOST=http://127.0.0.1:18080``): one variant;
- ``LIVENESS_LAB_TARGET=host``: the kind NodePorts on the host, ``http://127.0.0.1:3008x``;
- ``LIVENESS_LAB_TARGET=cluster`` (default): the variant's Service, ``http://liveness-lab-<variant>:8080``,
  for Locust running inside the cluster in the release's namespace.
"""

import os

# variant name -> NodePort (chart/values.yaml), in the order reports list them.
VARIANTS = {
    "blocking": 30080,
    "reactive": 30081,
    "offloaded": 30082,
    "virtual": 30083,
}

# The chart's object names are `<release>-<variant>`; the release is called liveness-lab.
RELEASE = os.environ.get("LIVENESS_LAB_RELEASE", "liveness-lab")
SERVICE_PORT = 8080
# Every pod of the chart carries this label; the variant is in app.kubernetes.io/component.
POD_SELECTOR = "app.kubernetes.io/name=liveness-lab"
COMPONENT_LABEL = "app.kubernetes.io/component"


def target_host(variant: str, environ=os.environ) -> str:
    """Base URL of VARIANT's service, following the overrides in the module docstring."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    explicit = environ.get(f"LIVENESS_LAB_{variant.upper()}_HOST")
    if explicit:
        return explicit.rstrip("/")
    target = environ.get("LIVENESS_LAB_TARGET", "cluster")
    if target == "host":
        # The network rule: host runs only ever reach the loopback NodePorts kind maps.
        return f"http://127.0.0.1:{VARIANTS[variant]}"
    if target == "cluster":
        return f"http://{RELEASE}-{variant}:{SERVICE_PORT}"
    raise ValueError(f"LIVENESS_LAB_TARGET={target!r}: use 'cluster' or 'host'")


def variant_of_pod(name: str, labels: dict | None = None) -> str | None:
    """The variant a pod belongs to: its component label, else its name `<release>-<variant>-...`."""
    component = (labels or {}).get(COMPONENT_LABEL)
    if component in VARIANTS:
        return component
    for variant in VARIANTS:
        if name.startswith(f"{RELEASE}-{variant}-"):
            return variant
    return None


def request_name(variant: str) -> str:
    """The Locust stats name of a variant's requests, so each variant gets its own row and CSV series."""
    return f"{variant} /api/work"


def variant_of_request_name(name: str) -> str | None:
    for variant in VARIANTS:
        if name == request_name(variant):
            return variant
    return None
