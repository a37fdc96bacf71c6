"""locust/locustfile.py with its Kubernetes reader replaced by a replay of the recorded passing run, for
the Live and Workshop tabs' browser tests on a machine without a cluster: the events and pods as the recorder listed
them (fixtures/run-pass/timeline.jsonl: every new count of an aggregated event when it was seen, a pod
snapshot a second; the pods' spec from fixtures/pods.json), through recorded_events.py. The recorded
swarm start (12:13:50 UTC) is moved to when this Locust starts its first swarm plus
LIVENESS_LAB_REPLAY_OFFSET_S (default 2), and each list answers what the recorded list answered at the
moved time: the liveness failures 5 s apart, the first kill, then the kills whose failures the kubelet's
event spam filter dropped. The load is real (the service jar); only the pods and events are recorded.
The Workshop tab's release (its Deployments and progress ConfigMap) is recorded_release.RecordedApi: the
recorded Deployments in memory, changed by Skip and Reset as the API server would (no pod rolls out).
Never used against a cluster (tests/e2e/test_6_live_tab.py and test_9_workshop.py check the real one).

Usage (from locust/): locust -f tests/replay_locustfile.py ...   (tests/test_live_view.py starts it)
"""

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from locust import events  # noqa: E402
from recorded_events import events_listed, pods_listed, timeline  # noqa: E402
from recorded_release import RecordedApi, RecordedHelm  # noqa: E402

from liveness_lab.base.kube import parse_time  # noqa: E402
from liveness_lab.locust_ext import pods_tab  # noqa: E402
from liveness_lab.workshop import tab as workshop_tab  # noqa: E402
from locustfile import *  # noqa: E402,F401,F403  (the user classes and the tabs, as Locust loads them)

RECORDED_START = parse_time("2026-11-22T12:13:50Z")
OFFSET_S = float(os.environ.get("LIVENESS_LAB_REPLAY_OFFSET_S", "2"))


class ReplayKube:
    """Kube's interface (namespace, pods(), events()) over the recorded run, on the replay's clock."""

    namespace = "liveness-lab"

    def __init__(self):
        self.pods_json = json.loads((HERE / "fixtures/pods.json").read_text())["items"]
        self.records = timeline("run-pass")
        self.shift = None  # seconds added to recorded times, set when the swarm starts

    def start(self):
        self.shift = time.time() + OFFSET_S - RECORDED_START

    def pods(self):
        if self.shift is None:
            return pods_listed(self.pods_json, self.records, RECORDED_START)
        return pods_listed(self.pods_json, self.records, time.time() - self.shift, self.shift)

    def events(self):
        if self.shift is None:
            return []
        return events_listed(self.records, time.time() - self.shift, self.shift)


REPLAY = ReplayKube()
pods_tab.Kube = lambda: REPLAY  # the Pods tab's poller (and through it the Live and Workshop tabs) reads the replay
RELEASE = RecordedApi()
workshop_tab.Api = lambda release, kube: RELEASE  # the Workshop tab's Deployments and ConfigMap, in memory
workshop_tab.Helm = RecordedHelm  # Skip and Reset through the real helm's rendering, applied in memory


@events.test_start.add_listener
def _replay_from_now(**_kwargs):
    REPLAY.start()
