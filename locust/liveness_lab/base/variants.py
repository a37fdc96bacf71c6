"""The service variants Locust can swarm, and where each one answers.

The variant table is ``chart/values.yaml`` (``variants.<name>``: ``enabled``, ``mode``, ``nodePort``; the
stack each mode runs on, ``serviceModes``); this module reads it and nothing else defines a variant.
``load()`` finds the list in one of two places:

- ``LIVENESS_LAB_VARIANTS``: JSON, ``[{"name", "mode", "stack", "nodePort", "url"}, ...]``, the variants the
  chart deployed; the chart sets it on the in-cluster Locust (master and workers), which has no chart folder;
- else ``chart/values.yaml`` of this repository (``LIVENESS_LAB_VALUES`` names another file): every
  variant in it, deployed by default or not (``helm --set stack=servlet`` or ``variants.<name>.enabled``
  may have turned one on), for demo.sh, the tests and Locust run on the host. PyYAML comes with the
  ``kubernetes`` client.

Both are ordered by nodePort (the chart ranges over its map by name): blocking, reactive, offloaded,
virtual, the order reports list them.

Where a variant answers, first match wins:

- ``LIVENESS_LAB_<VARIANT>_HOST`` (e.g. ``LIVENESS_LAB_BLOCKING_HOST=http://127.0.0.1:18080``): one variant;
- ``LIVENESS_LAB_TARGET=host``: the kind NodePorts on the host, ``http://127.0.0.1:<nodePort>``;
- ``LIVENESS_LAB_TARGET=cluster`` (default): the variant's Service, ``http://liveness-lab-<variant>:8080``,
  for Locust running inside the cluster in the release's namespace.

Command line (demo.sh asks here rather than restating the list), from locust/:
    python -m liveness_lab.base.variants --names [--enabled]   # one name a line
    python -m liveness_lab.base.variants --classes NAME...     # the locustfile's user class of each, or exit 2
"""

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from . import ROOT, coordinates

VALUES = ROOT / "chart" / "values.yaml"

# The chart's object names are `<fullname>-<variant>` (the release's name: coordinates.release()).
CHART = "liveness-lab"


def fullname(release: str) -> str:
    """The prefix of the chart's object names for RELEASE (chart/templates/_helpers.tpl's fullname, without
    its nameOverride and fullnameOverride): the release's name when it contains the chart's, else
    `<release>-liveness-lab` (release bob: bob-liveness-lab-blocking-...)."""
    return release if CHART in release else f"{release}-{CHART}"


SERVICE_PORT = 8080
# Every pod of the chart carries this label; the variant is in app.kubernetes.io/component.
POD_SELECTOR = "app.kubernetes.io/name=liveness-lab"
COMPONENT_LABEL = "app.kubernetes.io/component"


@dataclass(frozen=True)
class Variant:
    name: str
    mode: str
    node_port: int
    # Deployed by the chart's defaults: enabled, and its mode on the default `stack`.
    enabled: bool = True
    # The in-cluster base URL when the chart gave it; else it follows from the release and SERVICE_PORT.
    url: str = ""
    # The web stack its mode runs on: webflux (Reactor Netty) or servlet (Spring MVC on Tomcat).
    stack: str = "webflux"


def load(environ=os.environ) -> list[Variant]:
    """The variants, from LIVENESS_LAB_VARIANTS or chart/values.yaml (see the module docstring)."""
    deployed = environ.get("LIVENESS_LAB_VARIANTS")
    if deployed:
        found = [
            Variant(v["name"], v["mode"], int(v["nodePort"]), True, v.get("url", ""), v.get("stack", "webflux"))
            for v in json.loads(deployed)
        ]
    else:
        import yaml  # only on the host, where the chart folder is

        path = Path(environ.get("LIVENESS_LAB_VALUES") or VALUES)
        if not path.is_file():
            raise RuntimeError(f"no variant list: LIVENESS_LAB_VARIANTS is unset and {path} does not exist")
        values = yaml.safe_load(path.read_text())
        stacks = values.get("serviceModes") or {}
        chosen = values.get("stack", "webflux")
        found = []
        for name, v in values["variants"].items():
            stack = stacks.get(v["mode"], "webflux")
            on = bool(v.get("enabled")) and chosen in (stack, "both")
            found.append(Variant(name, v["mode"], int(v["nodePort"]), on, stack=stack))
    return sorted(found, key=lambda v: v.node_port)


# The variants, read once, in the order reports list them.
TABLE = load()
_BY_NAME = {v.name: v for v in TABLE}
# variant name -> NodePort.
VARIANTS = {v.name: v.node_port for v in TABLE}


def user_class(variant: str) -> str:
    """The locustfile's user class of VARIANT, the name Locust shows: blocking -> BlockingUser."""
    return "".join(part.capitalize() for part in variant.split("-")) + "User"


def target_host(variant: str, environ=os.environ) -> str:
    """Base URL of VARIANT's service, following the overrides in the module docstring."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    explicit = environ.get(f"LIVENESS_LAB_{variant.upper().replace('-', '_')}_HOST")
    if explicit:
        return explicit.rstrip("/")
    target = environ.get("LIVENESS_LAB_TARGET", "cluster")
    if target == "host":
        # The network rule: host runs only ever reach the loopback NodePorts kind maps.
        return f"http://127.0.0.1:{VARIANTS[variant]}"
    if target == "cluster":
        return _BY_NAME[variant].url or f"http://{fullname(coordinates.release(environ))}-{variant}:{SERVICE_PORT}"
    raise ValueError(f"LIVENESS_LAB_TARGET={target!r}: use 'cluster' or 'host'")


def variant_of_pod(name: str, labels: dict | None = None) -> str | None:
    """The variant a pod belongs to: its component label, else (an event names only the pod) its name
    `<fullname>-<variant>-...`."""
    component = (labels or {}).get(COMPONENT_LABEL)
    if component in VARIANTS:
        return component
    # The longest name first: servlet-async's pods also start with `<fullname>-servlet-`.
    for variant in sorted(VARIANTS, key=len, reverse=True):
        if name.startswith(f"{fullname(coordinates.release())}-{variant}-"):
            return variant
    return None


def mode_of(variant: str) -> str | None:
    """The mode VARIANT runs (its APP_MODE), or None for a name outside the table (an old recording)."""
    found = _BY_NAME.get(variant)
    return found.mode if found else None


def stack_of(variant: str) -> str | None:
    """The web stack VARIANT's mode runs on (webflux or servlet), or None for a name outside the table."""
    found = _BY_NAME.get(variant)
    return found.stack if found else None


def request_name(variant: str) -> str:
    """The Locust stats name of a variant's requests, so each variant gets its own row and CSV series."""
    return f"{variant} /api/work"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m liveness_lab.base.variants", description=__doc__.split("\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--names", action="store_true", help="print the variant names, one a line")
    what.add_argument("--classes", nargs="+", metavar="NAME", help="print the user class of each NAME")
    what.add_argument("--modes", action="store_true", help="print the modes the variants run, one a line, each once")
    parser.add_argument("--enabled", action="store_true", help="with --names: only those the chart deploys by default")
    args = parser.parse_args(argv)
    if args.names:
        print("\n".join(v.name for v in TABLE if v.enabled or not args.enabled))
        return 0
    if args.modes:
        print("\n".join(dict.fromkeys(v.mode for v in TABLE)))
        return 0
    unknown = [n for n in args.classes if n not in VARIANTS]
    if unknown:
        print(f"unknown variant {', '.join(map(repr, unknown))}: choose from {','.join(VARIANTS)}", file=sys.stderr)
        return 2
    print("\n".join(user_class(n) for n in args.classes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
