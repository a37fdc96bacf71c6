"""The instructor's view of a workshop: one line per participant's release, read from every namespace that
holds the workshop's ConfigMap (labels ``app.kubernetes.io/part-of=liveness-lab`` and
``app.kubernetes.io/component=workshop``, rendered by the chart, written by each release's Locust master:
``progress.py``), with the instructor's own kubeconfig.

    python -m liveness_lab workshop [--context NAME] [--json]     (scripts/workshop.sh is the command users type)

Each line: the namespace, the Helm release, the step on screen, done/total, the last check's state and
reason in words, and how long ago the master wrote it (a master that is down stops writing; its age grows).
The master writes a new reason at most every 15 s (a new state, a step met or an action at once), so the
table is that fresh. It needs ``list`` on ConfigMaps in every namespace (a cluster admin has it; the
participants' ``admin`` binding of docs/workshop.md does not, so they cannot see each other's).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from .progress import decode

SELECTOR = "app.kubernetes.io/part-of=liveness-lab,app.kubernetes.io/component=workshop"
INSTANCE = "app.kubernetes.io/instance"
HEADERS = ("NAMESPACE", "RELEASE", "STEP", "DONE", "WRITTEN", "LAST CHECK")


@dataclass(frozen=True)
class Row:
    namespace: str
    release: str
    step: str  # "tcp-probe (Try a TCP liveness probe)", or what is missing
    done: int | None
    total: int | None
    state: str | None  # the last check's state (met, checking, change, settling, waiting, ...)
    reason: str  # the last check's reason, in words
    written: float | None  # epoch s the master last wrote (the last check's time, else the progress's)


def rows_of(configmaps: dict) -> list[Row]:
    """CONFIGMAPS (the API's ConfigMapList JSON, as ``kubectl get configmaps -A -l SELECTOR -o json``
    prints it) as the table's rows, by namespace then release."""
    rows = []
    for cm in configmaps.get("items") or []:
        meta = cm.get("metadata") or {}
        namespace, release = meta.get("namespace", "?"), (meta.get("labels") or {}).get(INSTANCE, "?")
        progress, _ = decode(cm.get("data"))
        if progress is None:
            silent = "no progress yet: the master has not written (is the Locust master running?)"
            rows.append(Row(namespace, release, "-", None, None, None, silent, None))
            continue
        last = progress.get("last") or {}
        current = progress.get("current") or "?"
        title = progress.get("currentTitle")
        step = f"{current} ({title})" if title and title != current else current
        if last and last.get("step") not in (None, current):
            reason = f"(step {last.get('step')}) {last.get('reason') or ''}".strip()
        else:
            reason = last.get("reason") or "not checked yet"
        rows.append(
            Row(
                namespace,
                release,
                step,
                progress.get("done"),
                progress.get("total"),
                last.get("state"),
                reason,
                last.get("t") or progress.get("updated"),
            )
        )
    return sorted(rows, key=lambda r: (r.namespace, r.release))


def ago(written: float | None, now: float) -> str:
    if written is None:
        return "-"
    s = max(0, round(now - written))
    if s < 120:
        return f"{s} s ago"
    if s < 7200:
        return f"{s // 60} min ago"
    return f"{s // 3600} h ago"


def render(rows: list[Row], now: float | None = None) -> str:
    """ROWS as a plain text table (aligned columns; the last, the reason, as long as it is)."""
    now = time.time() if now is None else now
    cells = [
        (
            r.namespace,
            r.release,
            r.step,
            "-" if r.done is None else f"{r.done}/{r.total}",
            ago(r.written, now),
            f"{r.state}: {r.reason}" if r.state else r.reason,
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in [HEADERS, *cells]) for i in range(len(HEADERS) - 1)]
    lines = ["  ".join([*(c[i].ljust(widths[i]) for i in range(len(widths))), c[-1]]).rstrip() for c in [HEADERS, *cells]]
    done = sum(1 for r in rows if r.done is not None and r.total and r.done == r.total)
    lines.append(f"{len(rows)} release{'s' if len(rows) != 1 else ''}, {done} with every step done")
    return "\n".join(lines)


def to_json(rows: list[Row]) -> str:
    return json.dumps([asdict(r) for r in rows], indent=2)


class RoomError(Exception):
    """The room cannot be read: what went wrong and how to fix it."""

    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.message, self.fix = message, fix


def read_room(context: str | None) -> dict:
    """Every workshop ConfigMap of the cluster of CONTEXT (None: the kubeconfig's current context), as
    the API's ConfigMapList JSON."""
    from kubernetes import client, config

    try:
        config.load_kube_config(context=context)
    except Exception as e:  # no file, no such context
        raise RoomError(
            f"no kubeconfig context {context or '(current)'}: {e}",
            "name one that `kubectl config get-contexts` lists with --context",
        ) from e
    cfg = client.Configuration.get_default_copy()
    cfg.retries = 1
    api = client.CoreV1Api(client.ApiClient(cfg))
    try:
        found = api.list_config_map_for_all_namespaces(label_selector=SELECTOR, _request_timeout=10)
    except Exception as e:
        status = getattr(e, "status", None)
        if status == 403:
            raise RoomError(
                f"the API refused to list ConfigMaps in every namespace (context {context or '(current)'}): 403",
                "run it with the organiser's kubeconfig (a cluster admin, or a ClusterRole with list on configmaps)",
            ) from e
        raise RoomError(
            f"the Kubernetes API of context {context or '(current)'} did not answer: {getattr(e, 'reason', None) or e}",
            "check `kubectl --context CONTEXT get namespaces`",
        ) from e
    return api.api_client.sanitize_for_serialization(found)
