"""A pod on every node, each serving HTTP on its pod address, and a Service per pod: what the multinode
suite reaches across nodes (pod to pod, pod to a Service by its DNS name). The pods run the Locust image
(its Python's http.server), which cluster-up loaded into every node: nothing is pulled."""

from __future__ import annotations

import json
import subprocess

from e2e import kind

NAMESPACE = "ll-netcheck"
PORT = 8000
IMAGE = f"{kind.VERSIONS['LOCUST_IMAGE']}:{kind.VERSIONS['LOCUST_IMAGE_TAG']}"


def manifests(nodes: list[str]) -> dict:
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    for i, node in enumerate(nodes):
        labels = {"app": "netcheck", "netcheck": str(i)}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"netcheck-{i}", "namespace": NAMESPACE, "labels": labels},
                "spec": {
                    "nodeName": node,  # past the scheduler: the control plane's taint does not keep it away
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [
                        {
                            "name": "http",
                            "image": IMAGE,
                            "imagePullPolicy": "Never",
                            "command": ["python3", "-m", "http.server", str(PORT)],
                            "ports": [{"containerPort": PORT}],
                            "readinessProbe": {"tcpSocket": {"port": PORT}, "periodSeconds": 2},
                        }
                    ],
                    "terminationGracePeriodSeconds": 1,
                },
            }
        )
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"netcheck-{i}", "namespace": NAMESPACE},
                "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": PORT}]},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def apply(nodes: list[str]) -> None:
    proc = subprocess.run(
        [kind.tool("kubectl"), "--context", kind.CONTEXT, "apply", "-f", "-"],
        input=json.dumps(manifests(nodes)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"kubectl apply of the netcheck pods failed: {proc.stderr}"
    kind.kubectl("-n", NAMESPACE, "wait", "--for=condition=Ready", "pod", "-l", "app=netcheck", "--timeout=180s", timeout=240)


def delete() -> None:
    kind.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false", check=False)


FETCH = """
import sys, urllib.request
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            print(url, r.status)
    except Exception as e:
        print(url, "ERROR", type(e).__name__, e)
"""


def fetch_from(pod: str, urls: list[str]) -> dict[str, str]:
    """URL -> "200" or the error, as pod POD sees it."""
    out = kind.kubectl("-n", NAMESPACE, "exec", pod, "--", "python3", "-c", FETCH, *urls, timeout=120, check=False)
    answers = {}
    for line in out.stdout.splitlines():
        url, _, rest = line.partition(" ")
        answers[url] = rest
    return {url: answers.get(url, f"no answer (exec: {out.stderr.strip()})") for url in urls}
