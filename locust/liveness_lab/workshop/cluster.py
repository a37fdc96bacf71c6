"""The release's own objects the workshop reads through the Kubernetes API: its variants' Deployments (get),
its Helm release's Secrets (list, by Helm's labels: workshop/helm.py reads the release's values and chart
from them) and its progress ConfigMap (get, update). What Skip and Reset change, they change through Helm
(workshop/helm.py), with the rights `helm upgrade` needs in the namespace (the chart's workshop Role,
``chart/templates/locust-workshop-role.yaml``); nothing outside the namespace.

The connection is the Pods tab's (``base.kube.Kube``: the master's service account in the cluster, the
kubeconfig on the host).
"""

from liveness_lab.base.kube import REQUEST_TIMEOUT_S, Kube, KubeUnavailable
from liveness_lab.base.variants import fullname


class ApiError(Exception):
    """An API call that failed: STATUS is the HTTP status when the API answered (403, 404, 409...)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def deployment_name(release: str, variant: str) -> str:
    return f"{fullname(release)}-{variant}"


def progress_name(release: str) -> str:
    return f"{fullname(release)}-workshop"


class WorkshopApi:
    """The variants' Deployments and the progress ConfigMap of RELEASE in the namespace of KUBE."""

    def __init__(self, release: str, kube: Kube | None = None):
        self.kube = kube or Kube()
        self.release = release
        self._apps = self._core = None

    @property
    def namespace(self) -> str:
        return self.kube.namespace

    def _clients(self):
        if self._apps is None:
            from kubernetes import client

            try:
                api_client = self.kube.api_client()
            except KubeUnavailable as e:
                raise ApiError(str(e)) from e
            self._apps, self._core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
        return self._apps, self._core

    def _call(self, what, fn, *args, **kwargs):
        try:
            return fn(*args, _request_timeout=REQUEST_TIMEOUT_S, **kwargs)
        except Exception as e:  # connection refused, timeout, 403, 404, 409...
            status = getattr(e, "status", None)
            reason = getattr(e, "reason", None) or (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ApiError(f"{what} in namespace {self.namespace}: {status or ''} {reason}".replace("  ", " "), status) from e

    def _json(self, obj) -> dict:
        return self._clients()[0].api_client.sanitize_for_serialization(obj)

    def deployments(self, variants: list[str]) -> dict:
        """The variants' Deployments (API JSON List), each read by name (the Role allows get, not list);
        a variant the release does not deploy is left out."""
        apps, _ = self._clients()
        items = []
        for v in variants:
            try:
                items.append(
                    self._json(
                        self._call(
                            f"reading Deployment {deployment_name(self.release, v)}",
                            apps.read_namespaced_deployment,
                            deployment_name(self.release, v),
                            self.namespace,
                        )
                    )
                )
            except ApiError as e:
                if e.status != 404:
                    raise
        return {"items": items}

    def release_secrets(self, release: str) -> list[dict]:
        """The Secrets in which Helm keeps RELEASE's revisions (labelled owner=helm, name=RELEASE), API JSON."""
        _, core = self._clients()
        selector = f"owner=helm,name={release}"
        what = f"listing Helm's Secrets of release {release}"
        found = self._call(what, core.list_namespaced_secret, self.namespace, label_selector=selector)
        return self._json(found).get("items", [])

    def read_progress(self) -> tuple[dict, str] | None:
        """The progress ConfigMap's data and resourceVersion; None when it does not exist."""
        _, core = self._clients()
        try:
            cm = self._call(
                f"reading ConfigMap {progress_name(self.release)}",
                core.read_namespaced_config_map,
                progress_name(self.release),
                self.namespace,
            )
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        return dict(cm.data or {}), cm.metadata.resource_version

    def write_progress(self, data: dict[str, str], resource_version: str | None) -> str:
        """Writes DATA into the ConfigMap at RESOURCE_VERSION (a 409 when someone wrote since); returns the
        new resourceVersion. Only the data changes: labels and owner stay the chart's."""
        _, core = self._clients()
        name = progress_name(self.release)
        body = {"metadata": {"resourceVersion": resource_version} if resource_version else {}, "data": data}
        cm = self._call(f"writing ConfigMap {name}", core.patch_namespaced_config_map, name, self.namespace, body)
        return cm.metadata.resource_version
