"""Where the release is: the kubeconfig context, the namespace and the Helm release name.

One source for every runtime: ``scripts/lib/common.sh`` defines them for bash (kind's cluster,
namespace and release, or the user's ``LIVENESS_LAB_KUBE_CONTEXT``, ``LIVENESS_LAB_NAMESPACE`` and
``LIVENESS_LAB_RELEASE``) and hands all three to Python in those variables (``exec_liveness_lab``);
``--context``, ``--namespace`` and ``--release`` put theirs in the same variables
(``liveness_lab/__main__.py``); the chart sets the release and namespace on the in-cluster Locust. Each
is read when it is used, never as a module is imported. The defaults here are kind's, for Python started
without the scripts (``python -m``, the tests), and are the same as bash's.
"""

import os
from dataclasses import dataclass

CONTEXT_ENV = "LIVENESS_LAB_KUBE_CONTEXT"
NAMESPACE_ENV = "LIVENESS_LAB_NAMESPACE"
RELEASE_ENV = "LIVENESS_LAB_RELEASE"
DEFAULT_CONTEXT = "kind-liveness-lab"
DEFAULT_NAMESPACE = "liveness-lab"
DEFAULT_RELEASE = "liveness-lab"
# In a pod, the namespace its service account lives in: the in-cluster Locust's own.
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


@dataclass(frozen=True)
class Coordinates:
    context: str
    namespace: str
    release: str

    def is_kind_default(self) -> bool:
        """kind's own cluster, namespace and release: what scripts/cluster-up.sh makes."""
        return (self.context, self.namespace, self.release) == (DEFAULT_CONTEXT, DEFAULT_NAMESPACE, DEFAULT_RELEASE)


def named_context(environ=os.environ) -> str | None:
    """The context a user or script named, else None: the kubeconfig's current one (Locust on the host)."""
    return environ.get(CONTEXT_ENV) or None


def context(environ=os.environ) -> str:
    """The context a scripted run works in: the one named, else kind's."""
    return named_context(environ) or DEFAULT_CONTEXT


def namespace(environ=os.environ) -> str:
    """The namespace named, else (in a pod) the service account's, else kind's release's."""
    if environ.get(NAMESPACE_ENV):
        return environ[NAMESPACE_ENV]
    try:
        with open(SERVICE_ACCOUNT_NAMESPACE, encoding="utf-8") as f:
            return f.read().strip() or DEFAULT_NAMESPACE
    except OSError:
        return DEFAULT_NAMESPACE


def release(environ=os.environ) -> str:
    return environ.get(RELEASE_ENV) or DEFAULT_RELEASE


def read(environ=os.environ) -> Coordinates:
    return Coordinates(context(environ), namespace(environ), release(environ))


def hand_on(environ, context_name: str | None = None, namespace_name: str | None = None, release_name: str | None = None) -> Coordinates:
    """Puts the coordinates a command line named in ENVIRON, the variables every client of the run reads
    (the recorder's, the lock's, Locust's subprocess), the defaults where neither names one; returns them."""
    for name, value in ((CONTEXT_ENV, context_name), (NAMESPACE_ENV, namespace_name), (RELEASE_ENV, release_name)):
        if value:
            environ[name] = value
    found = read(environ)
    environ[CONTEXT_ENV], environ[NAMESPACE_ENV], environ[RELEASE_ENV] = found.context, found.namespace, found.release
    return found
