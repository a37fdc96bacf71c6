"""The release as it runs in the cluster: the defaults of a scripted run (which variants it deploys, the
latency its service answers with, the probes the kubelet runs) read from its Deployments, and whether it
has settled (every chosen variant rolled out, Ready for a while, no old pod still terminating).

The chart's values are the one place defaults are set; ``helm upgrade --set latencyMs=500`` reaches a
scripted run through the Deployments (DEMO_LATENCY_MS), as it reaches the service. Everything here but
``ClusterApi`` works on the API's JSON (as ``kubectl get -o json`` prints it), so recorded answers of a
real cluster drive the tests (tests/fixtures/release-*).
"""

import json
import os
import subprocess
import time
from dataclasses import dataclass, field

from liveness_lab.base import coordinates, ui_token
from liveness_lab.base.kube import parse_time  # noqa: F401  (named here for the tests)
from liveness_lab.base.probes import service_container
from liveness_lab.base.settle import settle_problems  # noqa: F401  (in base: the Locust master's workshop reads it too)
from liveness_lab.base.variants import COMPONENT_LABEL, VARIANTS
from liveness_lab.report.settings import settings_by_variant

LATENCY_ENV = "DEMO_LATENCY_MS"


@dataclass(frozen=True)
class ReleaseDefaults:
    """What the release runs: its variants (in the variant table's order), the latency each one's service
    answers with when a request names none, and each one's settings (report.settings: probes, replicas,
    resources, environment)."""

    variants: list[str]
    latency_ms: dict[str, int | None]
    settings: dict[str, dict] = field(default_factory=dict)

    def latency_of(self, variants: list[str]) -> int | None:
        """The one latency the chosen VARIANTS run with; None when none says; ValueError when they differ."""
        found = {v: self.latency_ms.get(v) for v in variants if self.latency_ms.get(v) is not None}
        values = set(found.values())
        if len(values) > 1:
            raise ValueError(", ".join(f"{v} {ms} ms" for v, ms in found.items()))
        return values.pop() if values else None


def _env_of(deployment: dict) -> dict:
    container = service_container(deployment) or {}
    return {e["name"]: e.get("value") for e in container.get("env") or [] if "value" in e}


def defaults_from_deployments(deployments: dict) -> ReleaseDefaults:
    """The release's Deployments (a List, API JSON) -> ReleaseDefaults; Deployments that are no variant
    of the table (the downstream, the in-cluster Locust) are left out."""
    latency = {}
    for d in deployments.get("items", []):
        variant = (d["metadata"].get("labels") or {}).get(COMPONENT_LABEL)
        if variant in VARIANTS:
            raw = _env_of(d).get(LATENCY_ENV)
            latency[variant] = int(raw) if raw not in (None, "") and str(raw).isdigit() else None
    settings = {v: s for v, s in settings_by_variant(deployments).items() if v in VARIANTS}
    return ReleaseDefaults([v for v in VARIANTS if v in latency], latency, settings)


def locust_workers(deployments: dict) -> int:
    """The release's Locust workers as its worker Deployment asks for them (locust.workers), at least 1."""
    for d in deployments.get("items", []):
        if (d["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == "locust-worker":
            return max(1, int(d["spec"].get("replicas") or 1))
    return 1


def restarted_pods(pods: dict, variants: list[str]) -> list[str]:
    """The variants' pods (not being deleted) whose containers restarted."""
    out = []
    for p in pods.get("items", []):
        if (p["metadata"].get("labels") or {}).get(COMPONENT_LABEL) not in variants or p["metadata"].get("deletionTimestamp"):
            continue
        if sum(int(c.get("restartCount") or 0) for c in (p.get("status") or {}).get("containerStatuses") or []) > 0:
            out.append(p["metadata"]["name"])
    return sorted(out)


class ClusterApi:
    """The release's namespace through the official client (kubeconfig context LIVENESS_LAB_KUBE_CONTEXT):
    its Deployments and pods as API JSON, the two changes a run makes to them, and what the lab's actions
    change (lab.actions: replicas, a container's environment, pods deleted with a given grace)."""

    def __init__(
        self, context_name: str | None = None, namespace_name: str | None = None, release: str | None = None, timeout_s: float = 10
    ):
        from kubernetes import client, config

        here = coordinates.read()
        self.context, self.namespace, self.release = context_name or here.context, namespace_name or here.namespace, release or here.release
        self.timeout = timeout_s
        try:
            # KUBECONFIG as it is now: the client reads it once, when it is first imported.
            api_client = config.new_client_from_config(config_file=os.environ.get("KUBECONFIG"), context=self.context)
        except Exception as e:  # no kubeconfig, no such context
            raise ApiUnavailable(f"no kubeconfig context {self.context}: {e}") from e
        api_client.configuration.retries = 1
        self.api_client = api_client
        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.selector = f"app.kubernetes.io/instance={self.release}"

    def _json(self, obj) -> dict:
        return self.api_client.sanitize_for_serialization(obj)

    def _call(self, what, fn, *args, **kwargs):
        try:
            return fn(*args, _request_timeout=self.timeout, **kwargs)
        except Exception as e:
            raise ApiUnavailable(
                f"{what} in namespace {self.namespace}: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
            ) from e

    def versions(self) -> dict | None:
        """{"server": the API server's gitVersion, "kubelets": each node's kubeletVersion}, what a run ran on
        (the lab's matrix tells releases apart by it); None when either is not readable."""
        from kubernetes import client

        try:
            server = self._call("reading the version", client.VersionApi(self.api_client).get_code).git_version
            nodes = self._call("listing nodes", self.core.list_node).items
        except ApiUnavailable:
            return None
        return {"server": server, "kubelets": sorted({n.status.node_info.kubelet_version for n in nodes})}

    def deployments(self, selector: str | None = None) -> dict:
        """The release's Deployments (SELECTOR: another label selector, "" every one of the namespace)."""
        selector = self.selector if selector is None else selector
        return self._json(self._call("listing Deployments", self.apps.list_namespaced_deployment, self.namespace, label_selector=selector))

    def services(self, selector: str | None = None) -> dict:
        """The release's Services (SELECTOR: another label selector, "" every one of the namespace)."""
        selector = self.selector if selector is None else selector
        return self._json(self._call("listing Services", self.core.list_namespaced_service, self.namespace, label_selector=selector))

    def ui_token(self) -> str | None:
        """The release's web UI token (base/ui_token.py: its Secret <release>-ui); None when the release has
        none (a release from before the chart made one: its UI is open). ApiUnavailable when it cannot be
        read (credentials that may not get Secrets)."""
        name = ui_token.secret_name(self.release)
        try:
            secret = self.core.read_namespaced_secret(name, self.namespace, _request_timeout=self.timeout)
        except Exception as e:
            if getattr(e, "status", None) == 404:
                return None
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ApiUnavailable(f"reading Secret {name} in namespace {self.namespace}: {first}") from e
        return ui_token.from_secret(self._json(secret))

    def namespace_status(self) -> int | None:
        """The HTTP status of reading the namespace: None when it exists (200), 404 when not, 403 when the
        credentials may not read namespaces (a participant's RBAC: no answer either way)."""
        try:
            self.core.read_namespace(self.namespace, _request_timeout=self.timeout)
            return None
        except Exception as e:
            status = getattr(e, "status", None)
            if status in (403, 404):
                return status
            raise ApiUnavailable(
                f"reading namespace {self.namespace}: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
            ) from e

    def pods(self, selector: str | None = None) -> dict:
        """The release's pods (SELECTOR: another label selector, "" every one of the namespace)."""
        selector = self.selector if selector is None else selector
        return self._json(self._call("listing pods", self.core.list_namespaced_pod, self.namespace, label_selector=selector))

    def delete_pods(self, names: list[str]) -> None:
        for name in names:
            self._call(f"deleting pod {name}", self.core.delete_namespaced_pod, name, self.namespace)

    def deployment(self, name: str) -> dict:
        return self._json(self._call(f"reading Deployment {name}", self.apps.read_namespaced_deployment, name, self.namespace))

    def scale_deployment(self, name: str, replicas: int) -> None:
        body = {"spec": {"replicas": replicas}}
        self._call(f"scaling Deployment {name}", self.apps.patch_namespaced_deployment_scale, name, self.namespace, body)

    def replace_env(self, name: str, env: list[dict]) -> None:
        """The Deployment's first container gets exactly ENV (a JSON patch: a rollout when it differs)."""
        body = [{"op": "replace", "path": "/spec/template/spec/containers/0/env", "value": env}]
        self._call(f"setting the environment of Deployment {name}", self.apps.patch_namespaced_deployment, name, self.namespace, body)

    def set_probe(self, name: str, kind: str, fields: dict, pod: bool = False, dry_run: bool = False) -> None:
        """The first container's KIND probe (liveness, readiness, startup) gets FIELDS: in Deployment NAME's
        template (a rollout), or with POD in the running pod NAME (in place: KEP-6318, a cluster with
        MutableContainerProbes; any other refuses it, 422). DRY_RUN: the API server validates, keeps nothing."""
        base = "/spec/containers/0" if pod else "/spec/template/spec/containers/0"
        # "add" of an object's member replaces it when present (RFC 6902), so a field the chart left to its
        # default is set as well.
        body = [{"op": "add", "path": f"{base}/{kind}Probe/{field}", "value": value} for field, value in fields.items()]
        extra = {"dry_run": "All"} if dry_run else {}
        if pod:
            self._call(f"changing the {kind} probe of pod {name}", self.core.patch_namespaced_pod, name, self.namespace, body, **extra)
        else:
            what = f"changing the {kind} probe of Deployment {name}"
            self._call(what, self.apps.patch_namespaced_deployment, name, self.namespace, body, **extra)

    def in_place_refusal(self) -> str | None:
        """Whether the API server takes a probe change in a running pod (KEP-6318): None when a dry run of one
        on a pod of the release with a liveness probe passes (its timeout one second longer, nothing kept),
        else the API server's reason (422 on a release without MutableContainerProbes)."""
        for pod in self.pods().get("items", []):
            probe = (service_container(pod) or {}).get("livenessProbe")
            if probe and pod["status"].get("phase") == "Running":
                break
        else:
            return "the release has no running pod with a liveness probe to try it on"
        name = pod["metadata"]["name"]
        fields = {"timeoutSeconds": int(probe.get("timeoutSeconds", 1)) + 1}
        try:
            self.set_probe(name, "liveness", fields, pod=True, dry_run=True)
        except ApiUnavailable as e:
            refused = e.__cause__
            if getattr(refused, "status", None) not in (400, 403, 422):
                raise
            try:
                message = (json.loads(refused.body).get("message") or "").splitlines()[0]  # the diff it adds is left out
            except (TypeError, ValueError, IndexError):
                message = None
            return f"the API server refused it (HTTP {refused.status}): {message or refused.reason}"
        return None

    def component_pods(self, component: str) -> list[dict]:
        selector = f"{self.selector},{COMPONENT_LABEL}={component}"
        found = self._call(f"listing the pods of {component}", self.core.list_namespaced_pod, self.namespace, label_selector=selector)
        return self._json(found).get("items", [])

    def delete_pod(self, name: str, grace_s: int | None = None) -> None:
        self._call(f"deleting pod {name}", self.core.delete_namespaced_pod, name, self.namespace, grace_period_seconds=grace_s)

    def restart_deployment(self, name: str) -> None:
        """What `kubectl rollout restart` does: a new template annotation, so a new ReplicaSet."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
        self._call(f"restarting Deployment {name}", self.apps.patch_namespaced_deployment, name, self.namespace, body)


class ApiUnavailable(Exception):
    """The API did not answer (no cluster, no context)."""


def check_target(api) -> ReleaseDefaults:
    """The release's defaults, when --context, --namespace and --release name what exists; else a set-up
    error (exit 3) saying which one does not, and how to list what there is."""
    from liveness_lab.base.exits import SetupError

    ctx = f"--context {api.context}"
    try:
        ns_status = api.namespace_status()
    except ApiUnavailable as e:
        raise SetupError(
            f"the cluster of context {api.context} does not answer ({e})",
            f"kubectl --context {api.context} get namespaces; check the context ({ctx})",
        ) from e
    if ns_status == 404:
        raise SetupError(
            f"namespace {api.namespace} not found (context {api.context})",
            f"kubectl --context {api.context} get namespaces, then --namespace NAME; or install the chart there: "
            f"helm install {api.release} chart -n {api.namespace} --create-namespace --kube-context {api.context}",
        )
    try:
        defaults = defaults_from_deployments(api.deployments())
    except ApiUnavailable as e:
        raise SetupError(
            f"could not list the Deployments of release {api.release} ({e})",
            f"kubectl --context {api.context} -n {api.namespace} get deployments",
        ) from e
    if not defaults.variants:
        raise SetupError(
            f"release {api.release} not found in namespace {api.namespace} (context {api.context}): no variant Deployment labelled "
            f"app.kubernetes.io/instance={api.release}",
            f"helm list -n {api.namespace} --kube-context {api.context}, then --release NAME; or helm install {api.release} chart "
            f"-n {api.namespace}",
        )
    return defaults


class Helm:
    """The helm command line for the release (Helm has no API of its own): what the lab changes."""

    def __init__(self, release: str, namespace_name: str, context_name: str, helm: str = "helm"):
        self.release, self.helm = release, helm
        self.flags = ["--namespace", namespace_name, "--kube-context", context_name]

    def run(self, *args, log=None, timeout=None, own_session=False) -> str:
        """helm ARGS; with OWN_SESSION in a session of its own, out of reach of the terminal's Ctrl-C."""
        cmd = [self.helm, *args, *self.flags]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, start_new_session=own_session)
        if log is not None:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"$ {' '.join(cmd)}\n{out.stdout}{out.stderr}")
        if out.returncode != 0:
            raise HelmFailed(" ".join(cmd[:3]), out.returncode, (out.stderr or out.stdout).strip())
        return out.stdout

    def revision(self) -> int:
        """The release's current revision (helm status)."""
        return int(json.loads(self.run("status", self.release, "-o", "json"))["version"])

    def values_yaml(self) -> str:
        """The values the release was installed with (helm get values), '{}' when none were set."""
        text = self.run("get", "values", self.release, "-o", "yaml").strip()
        return "{}" if text in ("", "null") else text


class HelmFailed(Exception):
    def __init__(self, what, code, text):
        super().__init__(f"{what} failed (exit {code}): {text[-800:]}")
