"""The scripted run's options and where each default comes from: DemoOptions (the command line of one
run, its timetable), the Plan they resolve to once the release was read (the variants; the latency from
--latency-ms, else LIVENESS_LAB_LATENCY_MS, else the release, else Locust's default; the request timeout
from --request-timeout-s, else LIVENESS_LAB_REQUEST_TIMEOUT_S, else the default) and the duration settings
read from the environment (env_seconds). run.py runs the plan; the lab builds its runs' options here.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

from liveness_lab.base import (
    DEFAULT_LATENCY_MS,
    DEFAULT_RATE,
    DEFAULT_REQUEST_TIMEOUT_S,
    DEFAULT_USERS_PER_VARIANT,
    DEMO_PHASES_S,
    ROOT,
    coordinates,
)
from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError
from liveness_lab.base.variants import VARIANTS, stack_of, user_class

from . import release as rel

COOLDOWN_S = DEMO_PHASES_S["cooldown"]


@dataclass
class DemoOptions:
    """The command line of one scripted run; None: from the release (or the default named)."""

    hold: int = DEMO_PHASES_S["hold"]
    ramp: int = DEMO_PHASES_S["ramp"]
    quiet: int = DEMO_PHASES_S["quiet"]
    users: int = DEFAULT_USERS_PER_VARIANT
    rate: float = DEFAULT_RATE
    latency_ms: int | None = None
    request_timeout_s: int | None = None
    variants: list[str] | None = None
    out: Path | None = None
    keep_pods: bool = False
    stop_swarm: bool = True
    load: str = "auto"  # host|cluster|auto (load_source.py)
    load_why: str | None = None  # who chose LOAD when it is not the user's --load (a lab scenario's load.where)
    cooldown: int = COOLDOWN_S
    command: str = "scripts/demo.sh"  # recorded in the cluster lock, so a refused run can say who holds it

    @property
    def total_s(self) -> int:
        return self.ramp + self.hold + self.cooldown + self.quiet


@dataclass
class Plan:
    """What the run will do, once the release was read."""

    variants: list[str]
    latency_ms: int
    latency_source: str  # "--latency-ms", "LIVENESS_LAB_LATENCY_MS", "release" or "default"
    out: Path
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S  # --request-timeout-s, else LIVENESS_LAB_REQUEST_TIMEOUT_S

    @property
    def user_classes(self) -> list[str]:
        return [user_class(v) for v in self.variants]


def env_seconds(name: str, default: int, environ=os.environ) -> int:
    """A duration setting in kubectl's forms a person writes: 300, 300s, 5m."""
    raw = (environ.get(name) or "").strip()
    if not raw:
        return default
    try:
        if raw.endswith("m"):
            return int(raw[:-1]) * 60
        return int(raw.rstrip("s"))
    except ValueError as e:
        raise SetupError(f"{name}={raw!r} is not a duration", f"e.g. {name}={default}s") from e


def max_run_seconds(opts: DemoOptions, variants: int, ready_wait: int) -> int:
    """The longest this run can hold the cluster: its timetable, the recorder's margin, the wait for a
    settled release, and 5 minutes for the rest (replacing pods, the report). A lock older than that is a
    left-over."""
    return opts.total_s + 120 + variants * ready_wait + 300


def resolve_plan(opts: DemoOptions, defaults: rel.ReleaseDefaults, environ=os.environ) -> Plan:
    """The variants (--variants, else what the release deploys) and the latency (--latency-ms, else
    LIVENESS_LAB_LATENCY_MS, else the release's DEMO_LATENCY_MS, else Locust's default)."""
    variants = opts.variants or defaults.variants
    if not variants:
        raise SetupError(
            "the release deploys no variant", "scripts/cluster-up.sh, or helm upgrade ... --set variants.blocking.enabled=true"
        )
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SetupError(
            f"--variants {','.join(variants)} names a variant chart/values.yaml does not have", f"choose from {','.join(VARIANTS)}"
        )
    missing = [v for v in variants if v not in defaults.variants]
    if missing:
        v = missing[0]
        # A servlet variant deploys only on a release whose `stack` is servlet or both (chart/values.yaml).
        stack = ",stack=both" if stack_of(v) == "servlet" else ""
        raise SetupError(
            f"variant '{v}' is not deployed",
            f"enable it: helm upgrade {coordinates.release(environ)} chart --reuse-values -n {coordinates.namespace(environ)} --set "
            f"variants.{v}.enabled=true{stack} (or leave it out of --variants)",
        )
    if opts.latency_ms is not None:
        latency, source = opts.latency_ms, "--latency-ms"
    elif (environ.get("LIVENESS_LAB_LATENCY_MS") or "").strip():
        raw = environ["LIVENESS_LAB_LATENCY_MS"].strip()
        if not raw.isdigit():
            raise SetupError(f"LIVENESS_LAB_LATENCY_MS={raw!r} is not a whole number of ms", "e.g. LIVENESS_LAB_LATENCY_MS=1000")
        latency, source = int(raw), "LIVENESS_LAB_LATENCY_MS"
    else:
        try:
            latency = defaults.latency_of(variants)
        except ValueError as e:
            raise SetupError(
                f"the variants run with different latencies ({e}): which one should the requests ask for?", "say it: --latency-ms MS"
            ) from e
        source = "release"
        if latency is None:
            latency, source = DEFAULT_LATENCY_MS, "default"
            LOG.warning("the Deployments set no %s: asking for Locust's default, %s ms", rel.LATENCY_ENV, latency)
    out = Path(opts.out) if opts.out else ROOT / "reports" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Plan(list(variants), int(latency), source, out.resolve(), request_timeout(opts, environ))


def request_timeout(opts: DemoOptions, environ=os.environ) -> float:
    """How long Locust lets a request wait: --request-timeout-s, else LIVENESS_LAB_REQUEST_TIMEOUT_S, else
    the default; the same for Locust on the host and the release's workers."""
    if opts.request_timeout_s is not None:
        return float(opts.request_timeout_s)
    raw = (environ.get("LIVENESS_LAB_REQUEST_TIMEOUT_S") or "").strip()
    if not raw:
        return float(DEFAULT_REQUEST_TIMEOUT_S)
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise SetupError(
            f"LIVENESS_LAB_REQUEST_TIMEOUT_S={raw!r} is not a number of seconds above 0", "e.g. LIVENESS_LAB_REQUEST_TIMEOUT_S=10"
        )
    return seconds


def phase_at(opts: DemoOptions, elapsed: float) -> str:
    edges = [("ramp", opts.ramp), ("hold", opts.hold), ("cool-down", opts.cooldown), ("quiet", opts.quiet)]
    for name, length in edges:
        if elapsed < length:
            return name
        elapsed -= length
    return "ending"
