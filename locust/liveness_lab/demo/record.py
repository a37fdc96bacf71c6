"""What the scripted run writes as it goes: run.json (RunRecord: the run's parameters, the settings it ran
with, the machine's CPUs and the commit; report.verdict reads it back) and the timeline of the pods and
their events (LiveRecorder: report.recorder's Recorder in a thread, counting the restarts so far for the
progress display). run.py starts and stops them.
"""

import json
import subprocess
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from liveness_lab.base import DEFAULT_REQUEST_TIMEOUT_S, ROOT
from liveness_lab.base.kube import Kube

from .load_source import HOST_TARGET


@dataclass
class RunRecord:
    """run.json: the run's parameters and the settings it ran with (report.verdict reads it)."""

    variants: str
    users_per_variant: int
    rate_per_user: float
    latency_ms: int
    phases: dict
    locust_started: float
    namespace: str
    settings: dict | None
    latency_source: str = "release"
    target: str = HOST_TARGET
    cpus: int | None = None
    commit: str = "unknown"
    release_latency_ms: dict = field(default_factory=dict)
    kubernetes: dict | None = None  # ClusterApi.versions(): the API server's and the kubelets' releases
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S  # Locust's, a request waiting longer failed

    def write(self, folder: Path) -> Path:
        path = Path(folder) / "run.json"
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path


def cpus() -> int | None:
    """The CPUs the Docker engine (and so kind's node) has, when docker answers."""
    try:
        out = subprocess.run(["docker", "info", "--format", "{{.NCPU}}"], capture_output=True, text=True, timeout=15)
        return int(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


class LiveRecorder:
    """report.recorder's Recorder in a thread of this process, which also keeps the restarts so far per
    variant (each pod's restart count over the first one seen) for the progress display."""

    def __init__(self, path: Path, duration: float):
        from liveness_lab.report.recorder import Recorder

        recorder_self = self

        class Watching(Recorder):
            def write(self, kind, **fields):
                super().write(kind, **fields)
                if kind == "pods":
                    recorder_self.saw(fields.get("pods") or [])

        self.first: dict[str, int] = {}
        self.restarts: dict[str, int] = {}
        # A run's own timeline: a folder run into again must not add this run to the last one's recording.
        self.file = open(path, "w", encoding="utf-8")
        self.recorder = Watching(self.file, Kube(), metrics_kube=Kube())
        self.thread = threading.Thread(target=self.recorder.run, args=(duration,), name="recorder", daemon=True)

    def saw(self, pods: list[dict]) -> None:
        counts: dict[str, int] = {}
        for p in pods:
            if not p.get("variant"):
                continue
            self.first.setdefault(p["name"], p["restarts"])
            counts[p["variant"]] = counts.get(p["variant"], 0) + p["restarts"] - self.first[p["name"]]
        self.restarts = counts

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.recorder.stopped = True
        self.thread.join(timeout=30)
        self.file.close()
