"""The scripted run's load shape: ramp up, hold, cool down, then a quiet period with no users.

Used by ``scripts/demo.sh``: headless on the host (the locustfile exposes it when
``LIVENESS_LAB_SHAPE=demo``, so the interactive web UI keeps its plain users/rate form), or, with
``--load cluster``, on the chart's Locust master, which offers it in its class picker
(``LIVENESS_LAB_SHAPE=offered``) and runs it when a /swarm request selects it. Every phase length and the
user count come from Locust's options when set (the hidden ``--demo-*`` options of the locustfile, which a
/swarm request sets: ``demo_users``, ``demo_ramp_s``, ...), else from the environment; they are read when
the shape starts, so each swarm of a long-lived master gets its own. ``phases()`` gives the same
timetable to the report builder:

    LIVENESS_LAB_USERS=40       users in total during the hold (split evenly over the chosen user classes)
    LIVENESS_LAB_RAMP_S=10      seconds to reach them
    LIVENESS_LAB_HOLD_S=180     seconds at full load
    LIVENESS_LAB_COOLDOWN_S=5   seconds to stop them
    LIVENESS_LAB_QUIET_S=90     seconds with no load, to watch the pods recover
"""

import os

from locust import LoadTestShape

from liveness_lab.base import DEFAULT_USERS_PER_VARIANT, DEMO_PHASES_S

# phase -> (Locust option, environment variable, default): the demo's timetable (DEMO_PHASES_S) and its
# users for blocking and reactive.
SOURCES = {
    "users": ("demo_users", "LIVENESS_LAB_USERS", 2 * DEFAULT_USERS_PER_VARIANT),
    **{phase: (f"demo_{phase}_s", f"LIVENESS_LAB_{phase.upper()}_S", seconds) for phase, seconds in DEMO_PHASES_S.items()},
}


def phases(environ=os.environ, options=None) -> dict:
    """Phase lengths in seconds (ramp, hold, cooldown, quiet) and the user count: OPTIONS (Locust's parsed
    options) where set, else ENVIRON, else the defaults."""
    out = {}
    for name, (option, env, default) in SOURCES.items():
        value = getattr(options, option, None) if options is not None else None
        if value in (None, ""):
            value = environ.get(env, default)
        out[name] = int(float(value)) if name == "users" else float(value)
    return out


def add_options(parser) -> None:
    """The hidden --demo-* options (not in the web UI's form): a /swarm request sets them by name."""
    for name, (option, env, _default) in SOURCES.items():
        parser.add_argument(
            "--" + option.replace("_", "-"), default=None, include_in_web_ui=False, help=f"DemoShape's {name} (default: ${env})"
        )


class DemoShape(LoadTestShape):
    """Ramp, hold, cool-down, quiet; then the run ends by itself."""

    def __init__(self):
        super().__init__()
        self.p = phases()

    def reset_time(self):
        # Called as a shape run starts: this run's phases (a /swarm request may have set them).
        super().reset_time()
        runner = getattr(self, "runner", None)
        self.p = phases(options=getattr(getattr(runner, "environment", None), "parsed_options", None))

    def tick(self):
        p, t = self.p, self.get_run_time()
        users = p["users"]
        if t < p["ramp"] + p["hold"]:
            # Spawn rate such that the ramp takes ramp seconds (at least one user a second).
            return users, max(1.0, users / max(p["ramp"], 1.0))
        if t < p["ramp"] + p["hold"] + p["cooldown"] + p["quiet"]:
            # Zero users through cool-down and quiet: Locust keeps writing (empty) stats history rows.
            return 0, max(1.0, users / max(p["cooldown"], 1.0))
        return None
