"""locust/locustfile.py with its Kubernetes reader replaced by a replay of the recorded passing run
(fixtures/pods.json, events.json), for the Live tab's browser test on a machine without a cluster: the
recorded swarm start (12:13:50 UTC) is moved to when this Locust starts its first swarm plus
LIVENESS_LAB_REPLAY_OFFSET_S (default 2), and each event and restart shows up when its moved time comes.
The load is real (the service jar); only the pods and events are recorded. Never used against a cluster
(tests/e2e/test_6_live_tab.py checks the real one).

Usage (from locust/): locust -f tests/replay_locustfile.py ...   (tests/test_live_view.py starts it)
"""

import copy
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from locust import events  # noqa: E402

from liveness_lab.base.kube import parse_time  # noqa: E402
from liveness_lab.locust_ext import pods_tab  # noqa: E402
from locustfile import *  # noqa: E402,F401,F403  (the user classes and the tabs, as Locust loads them)

RECORDED_START = parse_time("2026-11-22T12:13:50Z")
OFFSET_S = float(os.environ.get("LIVENESS_LAB_REPLAY_OFFSET_S", "2"))


def _stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class ReplayKube:
    """Kube's interface (namespace, pods(), events()) over the recorded JSON, on the replay's clock."""

    namespace = "liveness-lab"

    def __init__(self):
        self.pods_json = json.loads((HERE / "fixtures/pods.json").read_text())["items"]
        self.events_json = json.loads((HERE / "fixtures/events.json").read_text())["items"]
        self.shift = None  # seconds added to recorded times, set when the swarm starts

    def start(self):
        self.shift = time.time() + OFFSET_S - RECORDED_START

    def _moved(self, value):
        return _stamp(parse_time(value) + self.shift) if value else value

    def pods(self):
        now = time.time()
        pods = copy.deepcopy(self.pods_json)
        for p in pods:
            for c in p["status"]["containerStatuses"]:
                ended = ((c.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
                if self.shift is None or (ended and parse_time(ended) + self.shift > now):
                    c["restartCount"], c["lastState"] = 0, {}
                elif ended:
                    c["lastState"]["terminated"]["finishedAt"] = self._moved(ended)
        return pods

    def events(self):
        if self.shift is None:
            return []
        now, shown = time.time(), []
        for e in copy.deepcopy(self.events_json):
            first, last = parse_time(e["firstTimestamp"]) + self.shift, parse_time(e["lastTimestamp"]) + self.shift
            if first > now:
                continue
            if last > now:  # not repeated yet: the event as it stood at its first time
                e["count"], e["lastTimestamp"] = 1, e["firstTimestamp"]
            e["firstTimestamp"], e["lastTimestamp"] = self._moved(e["firstTimestamp"]), self._moved(e["lastTimestamp"])
            shown.append(e)
        return shown


REPLAY = ReplayKube()
pods_tab.Kube = lambda: REPLAY  # the Pods tab's poller (and through it the Live tab) reads the replay


@events.test_start.add_listener
def _replay_from_now(**_kwargs):
    REPLAY.start()
