"""The scripted run's load shape: ramp up, hold, cool down, then a quiet period with no users.

Used by ``scripts/demo.sh`` (headless); the locustfile exposes it only when ``LIVENESS_LAB_SHAPE=demo``,
so the interactive web UI keeps its plain users/rate form. Every phase length and the user count come
from the environment, and ``phases()`` gives the same timetable to the report builder:

    LIVENESS_LAB_USERS=40       users in total during the hold (split evenly over the chosen user classes)
    LIVENESS_LAB_RAMP_S=10      seconds to reach them
    LIVENESS_LAB_HOLD_S=180     seconds at full load
    LIVENESS_LAB_COOLDOWN_S=5   seconds to stop them
    LIVENESS_LAB_QUIET_S=90     seconds with no load, to watch the pods recover
"""

import os

from locust import LoadTestShape


def phases(environ=os.environ) -> dict:
    """Phase lengths in seconds (ramp, hold, cooldown, quiet) and the user count."""
    return {
        "users": int(environ.get("LIVENESS_LAB_USERS", "40")),
        "ramp": float(environ.get("LIVENESS_LAB_RAMP_S", "10")),
        "hold": float(environ.get("LIVENESS_LAB_HOLD_S", "180")),
        "cooldown": float(environ.get("LIVENESS_LAB_COOLDOWN_S", "5")),
        "quiet": float(environ.get("LIVENESS_LAB_QUIET_S", "90")),
    }


class DemoShape(LoadTestShape):
    """Ramp, hold, cool-down, quiet; then the run ends by itself."""

    def __init__(self):
        super().__init__()
        self.p = phases()

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
