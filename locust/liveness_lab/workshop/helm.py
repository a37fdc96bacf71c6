"""The release through Helm itself: the workshop's Skip and Reset change the release's values with `helm
upgrade`, as a participant's own command does, so Helm's stored values, its stored manifest and the
Deployments always agree, whoever changed the release last and in whatever order (Helm's three-way merge
only deletes what its own stored manifest held: a field set beside Helm, a TCP probe's handler say, would
stay beside the chart's next one; docs/workshop.md, "Skip, Reset and the shown commands").

The chart is the release's own: Helm keeps it in each revision's Secret (``sh.helm.release.v1.<release>.v<N>``,
labelled ``owner=helm``, ``name=<release>``; its ``release`` data is base64 of gzip of the release's JSON in
Helm 3 and 4 alike), so the master writes it back to a folder and upgrades with it, never with a copy of the
chart of its own. The same chart renders what a step's values run (``render``, ``helm template``), which
the step's check compares with the Deployments as they run.

Runs ``helm`` (HELM_VERSION, in the Locust image; on the host the tree's or the user's); the master's service
account needs what `helm upgrade` does in its namespace (the chart's workshop Role).
"""

import base64
import gzip
import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from liveness_lab.base import coordinates

# How long an upgrade may take: Helm applies the objects and returns; it does not wait for the rollout,
# which the check shows as "settling".
UPGRADE_TIMEOUT_S = 120
RENDER_TIMEOUT_S = 60


class HelmError(Exception):
    """Helm or the API refused: STATUS is the HTTP status the tab answers with."""

    def __init__(self, message: str, status: int = 502):
        super().__init__(message)
        self.status = status


def decode_release(data: str) -> dict:
    """A Helm release from its Secret's ``release`` data as the API gives it (base64 of Helm's own base64 of
    gzip of JSON; pkg/storage/driver/util.go's encodeRelease)."""
    raw = base64.b64decode(base64.b64decode(data))
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def write_chart(chart: dict, folder: Path) -> Path:
    """The chart of a release (its JSON: metadata, templates, values, schema, files) as a chart folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Chart.yaml").write_text(yaml.safe_dump(chart["metadata"], sort_keys=False))
    (folder / "values.yaml").write_text(yaml.safe_dump(chart.get("values") or {}, sort_keys=False))
    if chart.get("schema"):
        (folder / "values.schema.json").write_bytes(base64.b64decode(chart["schema"]))
    for f in (chart.get("templates") or []) + (chart.get("files") or []):
        path = folder / f["name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(f["data"] or ""))
    return folder


class HelmRelease:
    """RELEASE in the namespace of API (workshop.cluster.WorkshopApi), through its Secrets and `helm`."""

    def __init__(self, api, helm: str = "helm", workdir: Path | None = None):
        self.api, self.release, self.helm = api, api.release, helm
        self.workdir = workdir or Path(tempfile.gettempdir()) / "liveness-lab-helm"
        self._charts: dict[str, Path] = {}

    def latest(self) -> dict:
        """The release's latest revision (Helm's JSON), whatever its status."""
        secrets = self.api.release_secrets(self.release)
        if not secrets:
            raise HelmError(f"no Helm release {self.release} in namespace {self.api.namespace}", 409)
        newest = max(secrets, key=lambda s: int((s["metadata"].get("labels") or {}).get("version") or 0))
        return decode_release(newest["data"]["release"])

    def chart_dir(self, release: dict) -> Path:
        """RELEASE's chart, written once per chart content into the work folder."""
        digest = hashlib.sha256(json.dumps(release["chart"], sort_keys=True).encode()).hexdigest()[:16]
        if digest not in self._charts:
            self._charts[digest] = write_chart(release["chart"], self.workdir / f"chart-{digest}")
        return self._charts[digest]

    def _env(self) -> dict:
        # Helm writes its cache and config under HOME by default, which a read-only root file system has not.
        base = self.workdir / "home"
        return os.environ | {f"HELM_{k}_HOME": str(base / k.lower()) for k in ("CACHE", "CONFIG", "DATA")}

    def _context(self) -> list[str]:
        context = coordinates.named_context()
        return ["--kube-context", context] if context else []

    def _run(self, args: list[str], timeout: float, what: str) -> str:
        try:
            done = subprocess.run([self.helm, *args], capture_output=True, text=True, timeout=timeout, env=self._env(), check=False)
        except FileNotFoundError as e:
            raise HelmError(f"{what}: no helm here ({self.helm}): the Locust image ships one (locust/Dockerfile)", 503) from e
        except subprocess.TimeoutExpired as e:
            raise HelmError(f"{what}: helm did not answer within {timeout:.0f} s", 504) from e
        if done.returncode != 0:
            error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
            # Another helm (the participant's own) is upgrading the same release: a conflict, said as one.
            status = 409 if "another operation" in error else 502
            raise HelmError(f"{what}: {error}", status)
        return done.stdout

    def _values_file(self, values: dict, name: str) -> Path:
        path = self.workdir / f"{name}-values.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(values, sort_keys=False))
        return path

    def upgrade(self, values: dict, release: dict | None = None, why: str = "the Workshop tab") -> int:
        """`helm upgrade` of the release with exactly VALUES as its values (--reset-values: the chart's
        defaults under them), with its own chart; the new revision's number. Its description keeps the
        chart's part of the last one's (scripts/lib/cluster.sh's chart hash: the chart is the same) and
        says WHY."""
        release = release or self.latest()
        chart = (release.get("info") or {}).get("description", "").split(";")[0]
        description = f"{chart}; {why}" if chart.startswith("liveness-lab chart ") else why
        args = ["upgrade", self.release, str(self.chart_dir(release)), "--namespace", self.api.namespace, *self._context()]
        args += ["--reset-values", "--values", str(self._values_file(values, "upgrade")), "--description", description]
        self._run(args, UPGRADE_TIMEOUT_S, f"helm upgrade {self.release}")
        return int(release["version"]) + 1

    def render(self, values: dict, release: dict) -> list[dict]:
        """What RELEASE's chart renders with VALUES (`helm template`, no cluster asked): its objects."""
        args = ["template", self.release, str(self.chart_dir(release)), "--namespace", self.api.namespace, "--is-upgrade", "--skip-tests"]
        args += ["--values", str(self._values_file(values, "render"))]
        text = self._run(args, RENDER_TIMEOUT_S, f"helm template {self.release}")
        return [d for d in yaml.safe_load_all(text) if d]
