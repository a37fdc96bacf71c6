"""The shared base: the variant table (``variants``), the cluster's coordinates (``coordinates``), the
Kubernetes reader (``kube``), a container's probes (``probes``), a scenario file of the lab and the
workshop (``scenario``), which failure of its threshold each liveness failure is (``countdown``), how a
variant is drawn (``style``), the settle default (``settle``), and what a command says and how it exits
(``console``, ``exits``), and why a container restarted (``causes``). Imports nothing else of liveness_lab's.
"""

from pathlib import Path

# The latency each request asks for when nobody says (ms): the default of the locustfile's --latency-ms,
# of scripts/demo.sh, and what the report assumes for an old run.json without latency_ms. The same
# number as the service's own default (DemoProperties) and the chart's latencyMs; each runtime has one.
DEFAULT_LATENCY_MS = 1000
# The demo's load per variant when nobody says: the default of scripts/demo.sh's --users, and what the web
# UI's start form proposes (that many users of each variant's class, started at once: 40 users, ramp 40,
# for blocking and reactive). 20 requests of 1 s in flight hold a blocking pod's 4 event loops for good.
DEFAULT_USERS_PER_VARIANT = 20
# The rate each user aims for when nobody says (requests/s): the locustfile's --rate-per-user, scripts/demo.sh's
# --rate, the lab's scenarios.
DEFAULT_RATE = 1.0
# How long a request may wait before Locust counts it failed, when nobody says (s): the locustfile's
# --request-timeout-s (LIVENESS_LAB_REQUEST_TIMEOUT_S), scripts/demo.sh's, a lab scenario's load.timeout_s.
# Longer than the service's usual latency, far shorter than Locust's 60 s, so a blocked pod shows up as
# failures within the run instead of as requests that never end.
DEFAULT_REQUEST_TIMEOUT_S = 10
# The scripted run's timetable when nobody says (s): scripts/demo.sh's --ramp, --hold and --quiet, the
# cool-down between the hold and the quiet period (no option), and DemoShape's LIVENESS_LAB_*_S.
DEMO_PHASES_S = {"ramp": 10, "hold": 180, "cooldown": 5, "quiet": 90}

# Where a scripted run's Locust runs (scripts/demo.sh and scripts/lab.sh --load, a scenario's load.where):
# this machine against kind's NodePorts, the release's own master and workers, or the first when it can
# (demo/load_source.py).
LOAD_WHERE = ("auto", "host", "cluster")

# The lab's groups (scripts/lab.sh --group; lab.catalogue picks them): the restart storms (`storm: true`),
# the remedies (the others), and the scenarios of one stack (every variant they swarm on it).
LAB_GROUPS = ("storms", "remedies", "webflux", "servlet")

# locust/ and the repository around it, on the host (the Locust image has locust/'s files only).
LOCUST_DIR = Path(__file__).resolve().parents[2]
ROOT = LOCUST_DIR.parent
