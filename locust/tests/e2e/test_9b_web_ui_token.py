"""Only the holder of the release's token acts on it (issue 51): a pod in another namespace (ll-stranger,
the Locust image, as any other participant's pod would be) asks the release's web UI Service by its
cluster DNS name, as the pod of the issue's report did.

- Without the token, and with a wrong one, every request answers 401: the UI page, Locust's own routes
  (the stats, the report, /swarm, /stop, /stats/reset) and the tabs' (Pods, Live, the stats history, the
  workshop's state and window, a hint, Skip, Reset). And nothing changed: the blocking Deployment (its
  generation and pod template), the progress ConfigMap, the runner's state and users, the Helm revision.
- With the token (read here from the release's Secret) the same pod reads the stats and the workshop: 200.
- The master's worker port, 5557: refused from that namespace where the cluster's network plugin enforces
  NetworkPolicy (kind's kindnetd, when its DaemonSet runs), reached where none does (the static pod network
  of the locally built node image); the test says which it found and holds the enforcing one to it.

Runs after the workshop's test (the modules run in file-name order); about a minute. The namespace is
deleted at the end.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from conftest import web_read

from liveness_lab.base import ui_token

from . import kind

NAMESPACE = "ll-stranger"
IMAGE = f"{kind.VERSIONS['LOCUST_IMAGE']}:{kind.VERSIONS['LOCUST_IMAGE_TAG']}"
UI = f"http://{kind.RELEASE}-locust-ui.{kind.NAMESPACE}.svc:8089"
WORKER_PORT = (f"{kind.RELEASE}-locust.{kind.NAMESPACE}.svc", 5557)
BLOCKING = f"{kind.RELEASE}-blocking"
PROGRESS = f"{kind.RELEASE}-workshop"
# Every kind of route: the page, Locust's reads and writes, each tab's reads, the workshop's actions.
REQUESTS = [
    ("GET", "/"),
    ("GET", "/stats/requests"),
    ("GET", "/stats/report"),
    ("GET", "/stats/requests/csv"),
    ("GET", "/logs"),
    ("GET", "/liveness-lab/pods"),
    ("GET", "/liveness-lab/live"),
    ("GET", "/liveness-lab/stats-history?after=0"),
    ("GET", "/liveness-lab/workshop"),
    ("GET", "/liveness-lab/workshop/window"),
    ("POST", "/swarm"),
    ("POST", "/stop"),
    ("POST", "/stats/reset"),
    ("POST", "/liveness-lab/workshop/steps/tcp-probe/hint"),
    ("POST", "/liveness-lab/workshop/steps/tcp-probe/skip"),
    ("POST", "/liveness-lab/workshop/reset"),
]
SWARM_FORM = "user_count=40&spawn_rate=40&user_classes=BlockingUser&user_classes=ReactiveUser&shape_class=Default"

# Run in the stranger's pod: each request of argv[2] (JSON) to the UI at argv[1] with the headers given,
# its status; then whether the worker port of argv[3]:argv[4] takes a connection.
ASK = """
import json, socket, sys, urllib.error, urllib.request
base, asked, host, port = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
out = []
for method, path, headers, body in asked:
    req = urllib.request.Request(base + path, data=body.encode() if body is not None else None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            out.append([method, path, r.status])
    except urllib.error.HTTPError as e:
        out.append([method, path, e.code])
    except Exception as e:
        out.append([method, path, f"{type(e).__name__}: {e}"])
try:
    socket.create_connection((host, port), timeout=5).close()
    worker = "open"
except Exception as e:
    worker = type(e).__name__
print(json.dumps({"answers": out, "worker_port": worker}))
"""


def stranger_pod() -> dict:
    container = {
        "name": "stranger",
        "image": IMAGE,
        "imagePullPolicy": "Never",  # cluster-up loaded it into the node
        "command": ["python3", "-c", "import time; time.sleep(900)"],
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "stranger", "namespace": NAMESPACE},
                "spec": {"containers": [container], "terminationGracePeriodSeconds": 1},
            },
        ],
    }


@pytest.fixture(scope="module")
def stranger(cluster):
    applied = subprocess.run(
        [kind.tool("kubectl"), "--context", kind.CONTEXT, "apply", "-f", "-"],
        input=json.dumps(stranger_pod()),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert applied.returncode == 0, f"kubectl apply of the stranger's pod failed: {applied.stderr}"
    try:
        kind.kubectl("-n", NAMESPACE, "wait", "--for=condition=Ready", "pod/stranger", "--timeout=180s", timeout=240)
        yield "stranger"
    finally:
        kind.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false", check=False)


def ask(headers: dict, requests=REQUESTS) -> dict:
    asked = [[m, p, headers, (SWARM_FORM if p == "/swarm" else "") if m == "POST" else None] for m, p in requests]
    out = kind.kubectl(
        "-n", NAMESPACE, "exec", "stranger", "--", "python3", "-c", ASK, UI, json.dumps(asked), *map(str, WORKER_PORT), timeout=180
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def release_state(web_ui) -> dict:
    """What a request could have changed, read with the cluster admin's kubeconfig and the token from the host."""
    blocking = kind.kubectl_json("get", "deployment", BLOCKING, "-n", kind.NAMESPACE)
    data = kind.kubectl_json("get", "configmap", PROGRESS, "-n", kind.NAMESPACE).get("data") or {}
    progress = json.loads(data.get("progress.json") or "{}")
    stats = web_read(web_ui, "/stats/requests")
    return {
        "generation": blocking["metadata"]["generation"],
        "template": blocking["spec"]["template"],
        # What an action writes; the last check's reason and time move by themselves (every 15 s at most).
        "progress": {k: progress.get(k) for k in ("current", "done", "steps", "resets", "skips")},
        "start": data.get("start.json"),
        "runner": (stats["state"], stats["user_count"]),
        "revision": json.loads(kind.helm("status", kind.RELEASE, "-o", "json").stdout)["version"],
    }


def enforcing_network_policy() -> bool:
    """kindnetd enforces NetworkPolicy (kind >= v0.24.0); the static pod network of the local node image does not."""
    found = kind.kubectl("-n", "kube-system", "get", "daemonset", "kindnet", "-o", "name", check=False)
    return found.returncode == 0 and bool(found.stdout.strip())


def test_a_pod_of_another_namespace_without_the_token_is_refused_everywhere_and_changes_nothing(stranger, web_ui, web_ui_token):
    if web_read(web_ui, "/stats/requests")["state"] in ("spawning", "running"):
        pytest.fail("a swarm runs: the test would see its stats move (the earlier tests stop theirs)")
    before = release_state(web_ui)
    refused = {}
    for name, headers in {
        "no token": {},
        "a wrong token": ui_token.bearer("not-the-token"),
        "a wrong token in the proxy's header": ui_token.proxied("not-the-token"),
    }.items():
        found = ask(headers)
        refused[name] = found["worker_port"]
        wrong = [a for a in found["answers"] if a[2] != 401]
        assert wrong == [], f"with {name}, these answered otherwise than 401: {wrong}"
    time.sleep(2)  # a swarm or an action would have shown by now (the master checks every 3 s)
    after = release_state(web_ui)
    assert after == before, {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    print(
        f"{len(REQUESTS)} routes x 3: 401 each, nothing changed (revision {after['revision']}, Deployment generation {after['generation']})"
    )

    worker = refused["no token"]
    if enforcing_network_policy():
        assert worker != "open", "the master's worker port took a connection from another namespace, under an enforced NetworkPolicy"
        print(f"worker port 5557 from {NAMESPACE}: {worker} (kindnetd enforces the chart's NetworkPolicy)")
    else:
        print(f"worker port 5557 from {NAMESPACE}: {worker} (no kindnetd: this cluster's pod network enforces no NetworkPolicy)")


def test_the_same_pod_with_the_token_reads_the_stats_and_the_workshop(stranger, web_ui_token):
    reads = [("GET", "/stats/requests"), ("GET", "/liveness-lab/workshop"), ("GET", "/liveness-lab/live")]
    for headers in (ui_token.bearer(web_ui_token), ui_token.proxied(web_ui_token)):
        answers = ask(headers, reads)["answers"]
        assert [a[2] for a in answers] == [200, 200, 200], answers
