"""The instructor's view of a workshop: one line per participant's release, read from every namespace that
holds the workshop's ConfigMap (labels ``app.kubernetes.io/part-of=liveness-lab`` and
``app.kubernetes.io/component=workshop``, rendered by the chart, written by each release's Locust master:
``progress.py``), with the instructor's own kubeconfig.

    python -m liveness_lab workshop [--context NAME] [--json]     (scripts/workshop.sh is the command users type)

Each line: the namespace, the Helm release, the step on screen, done/total, the last check's state and
reason in words, and how long ago the master wrote it (a master that is down stops writing; its age grows).
A ConfigMap is anyone's to write who may edit its namespace, so nothing in it is trusted: every text has
its control characters taken out (no terminal escape reaches the instructor's screen), and a progress that
is not JSON, names a step this workshop does not have, or counts more steps done than there are is one
line marked ``bad`` saying what is wrong; every other line is printed as it is.
The master writes a new reason at most every 15 s (a new state, a step met or an action at once), so the
table is that fresh. It needs ``list`` on ConfigMaps in every namespace (a cluster admin has it; the
participants' ``admin`` binding of docs/workshop.md does not, so they cannot see each other's).
"""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from dataclasses import asdict, dataclass

from .course import StepError, load_steps
from .progress import PROGRESS_KEY

SELECTOR = "app.kubernetes.io/part-of=liveness-lab,app.kubernetes.io/component=workshop"
INSTANCE = "app.kubernetes.io/instance"
HEADERS = ("NAMESPACE", "RELEASE", "STEP", "DONE", "WRITTEN", "LAST CHECK")
BAD = "bad"
# What a ConfigMap's text may show of itself on a line (a forged one could be megabytes).
MAX_TEXT = 400
# Unicode categories never printed: control, format, surrogate, private use, unassigned.
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
BREAKS = frozenset("\t\n\r\v\f\x85\u2028\u2029")
# A terminal escape sequence whole (CSI such as colours and cursor moves, OSC such as a window title, and
# the two-character ones), so that none of its text is left behind either.
ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[0-~])|\x9b[0-?]*[ -/]*[@-~]")


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
    problem: str | None = None  # why the line is marked bad (its state is then BAD), else None


class Bad(Exception):
    """A progress the table cannot show: what is wrong with it."""


def clean(value, limit: int = MAX_TEXT) -> str:
    """VALUE as text fit for a terminal, at most LIMIT characters: control, format and unassigned characters
    (ESC and so every terminal escape, BEL, backspace, bidi overrides, zero-width ones) taken out, line
    breaks and tabs made spaces."""
    text = ESCAPE.sub("", value if isinstance(value, str) else str(value))
    kept = "".join(" " if c in BREAKS else c for c in text if c in BREAKS or unicodedata.category(c) not in HIDDEN)
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def step_names() -> list[str] | None:
    """The workshop's step names, from its step files (what the masters of this repository show); None when
    they do not load (then no line is judged by its step's name)."""
    try:
        return [s.name for s in load_steps()]
    except StepError:
        return None


def _count(progress: dict, key: str) -> int:
    value = progress.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Bad(f"{key} is {clean(json.dumps(value), 40)}, not a count")
    return value


def _time(value) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def _row(namespace: str, release: str, text: str | None, steps: list[str] | None) -> Row:
    """One line of a ConfigMap whose progress.json is TEXT (None: not written yet). Bad when it is wrong."""
    if text is None:
        silent = "no progress yet: the master has not written (is the Locust master running?)"
        return Row(namespace, release, "-", None, None, None, silent, None)
    try:
        progress = json.loads(text)
    except (TypeError, ValueError) as e:
        raise Bad(f"{PROGRESS_KEY} is not JSON ({clean(e, 80)})") from e
    if not isinstance(progress, dict):
        raise Bad(f"{PROGRESS_KEY} is not a JSON object")
    current = progress.get("current")
    if not isinstance(current, str) or not current:
        raise Bad("it names no current step")
    if steps is not None and current not in steps:
        raise Bad(f"its step {clean(current, 60)!r} is none of this workshop's ({', '.join(steps)})")
    done, total = _count(progress, "done"), _count(progress, "total")
    if done > total:
        raise Bad(f"it counts {done} steps done of {total}")
    if steps is not None and total != len(steps):
        raise Bad(f"it counts {total} steps, this workshop has {len(steps)}")
    last = progress.get("last") or {}
    if not isinstance(last, dict):
        raise Bad("its last check is not a JSON object")
    title = progress.get("currentTitle")
    shown = clean(current, 80)
    step = f"{shown} ({clean(title, 80)})" if isinstance(title, str) and title and title != current else shown
    if last.get("step") not in (None, current):
        reason = f"(step {clean(last.get('step'), 60)}) {clean(last.get('reason') or '')}".strip()
    else:
        reason = clean(last.get("reason") or "not checked yet")
    state = clean(last["state"], 20) if last.get("state") else None
    return Row(namespace, release, step, done, total, state, reason, _time(last.get("t")) or _time(progress.get("updated")))


def rows_of(configmaps: dict, steps: list[str] | None | bool = True) -> list[Row]:
    """CONFIGMAPS (the API's ConfigMapList JSON, as ``kubectl get configmaps -A -l SELECTOR -o json``
    prints it) as the table's rows, by namespace then release: every ConfigMap a line, a bad one marked
    (its state BAD, its problem said). STEPS: the step names a progress may name (True: this workshop's,
    step_names(); None: any)."""
    steps = step_names() if steps is True else steps
    rows = []
    for cm in (configmaps.get("items") or []) if isinstance(configmaps, dict) else []:
        meta = (cm.get("metadata") if isinstance(cm, dict) else None) or {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        namespace, release = clean(meta.get("namespace", "?"), 80), clean(labels.get(INSTANCE, "?"), 80)
        data = cm.get("data") if isinstance(cm, dict) and isinstance(cm.get("data"), dict) else {}
        try:
            rows.append(_row(namespace, release, data.get(PROGRESS_KEY), steps))
        except Bad as e:
            rows.append(Row(namespace, release, "-", None, None, BAD, f"unreadable progress: {e}", None, str(e)))
        except Exception as e:  # noqa: BLE001 - whatever else a forged ConfigMap holds: its line says so, the others print
            problem = f"{type(e).__name__}: {clean(e, 120)}"
            rows.append(Row(namespace, release, "-", None, None, BAD, f"unreadable progress: {problem}", None, problem))
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
    bad = sum(1 for r in rows if r.problem)
    lines.append(
        f"{len(rows)} release{'s' if len(rows) != 1 else ''}, {done} with every step done" + (f", {bad} marked {BAD}" if bad else "")
    )
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
        # KUBECONFIG as it is now: the client reads it once, when it is first imported.
        config.load_kube_config(config_file=os.environ.get("KUBECONFIG"), context=context)
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
