"""A scripted run is the only load: the in-cluster Locust (the release's master through the API server's
service proxy, ``locust_master.py``; or its web UI at ``LIVENESS_LAB_LOCUST_UI`` when set, e.g.
http://127.0.0.1:8089 on kind's port mapping; with the release's token either way) is not swarming, and
the variants' pods have no request in flight (their own ``demo_requests_in_flight``, read through the API
server's pod proxy).
"""

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from liveness_lab.base import ui_token
from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError
from liveness_lab.base.kube import Kube, KubeUnavailable, pod_record
from liveness_lab.base.variants import SERVICE_PORT, fullname
from liveness_lab.report.recorder import parse_service_metrics

from .locust_master import MasterUnavailable

DEFAULT_UI = "http://127.0.0.1:8089"
# Locust runner states in which users are (or are about to be) sending requests.
BUSY = ("spawning", "running", "stopping", "cleanup")
STOP_WAIT_S = 30
IDLE_WAIT_S = 60


def locust_ui(environ=os.environ) -> str:
    return (environ.get("LIVENESS_LAB_LOCUST_UI") or DEFAULT_UI).rstrip("/")


def locust_ui_service(services: dict | None, release: str) -> str:
    """The name of the release's Locust web UI Service among SERVICES (the release's, API JSON): the one of
    component locust with a port named web. The chart names it <fullname>-locust-ui, and its fullname is the
    release's name only when that contains the chart's (release "bob" has bob-liveness-lab-locust-ui);
    that name, from the release's, when the Services could not be read."""
    for svc in (services or {}).get("items", []):
        labels = svc["metadata"].get("labels") or {}
        if labels.get("app.kubernetes.io/component") == "locust" and any(
            p.get("name") == "web" for p in (svc.get("spec") or {}).get("ports") or []
        ):
            return svc["metadata"]["name"]
    return f"{fullname(release)}-locust-ui"


def master_token(api, environ=os.environ) -> str | None:
    """The token of the release's web UI: LIVENESS_LAB_UI_TOKEN when set, else its Secret, read with the
    run's credentials (None: no Secret, an open UI; or not readable: said, and the master will say 401)."""
    given = (environ.get(ui_token.TOKEN_ENV) or "").strip()
    if given:
        return given
    try:
        return api.ui_token()
    except Exception as e:  # noqa: BLE001 - the master's 401 then says what to do
        LOG.warning("the release's web UI token is not readable (%s): set %s to it", e, ui_token.TOKEN_ENV)
        return None


def release_master(api, environ=os.environ, log_path=None):
    """The release's Locust master, with its token (master_token): at LIVENESS_LAB_LOCUST_UI when set, else
    through the API server's service proxy (its web UI Service, port web: locust_ui_service) of API
    (release.ClusterApi)."""
    from .locust_master import DirectHttp, LocustMaster, ServiceProxy

    token = master_token(api, environ)
    hint = ui_token.kubectl_command(api.namespace, api.release)
    if (environ.get("LIVENESS_LAB_LOCUST_UI") or "").strip():
        return LocustMaster(DirectHttp(locust_ui(environ), token), log_path, hint)
    try:
        services = api.services()
    except Exception:  # noqa: BLE001 - the proxy's own error names what does not answer
        services = None
    proxy = ServiceProxy(api.api_client, api.namespace, locust_ui_service(services, api.release), "web", api.context, token)
    return LocustMaster(proxy, log_path, hint)


@dataclass(frozen=True)
class SwarmStatus:
    state: str
    users: int | str

    @property
    def busy(self) -> bool:
        return self.state in BUSY


def swarm_status(ui, timeout: float = 5) -> SwarmStatus | None:
    """The runner's own state and user count (its web UI's /stats/requests; the workers' entries have a
    state too), or None when nothing answers there. UI: a URL or a master.LocustMaster."""
    if not isinstance(ui, str):
        found = ui.status()
        return SwarmStatus(found.state, found.users) if found is not None else None
    try:
        with urllib.request.urlopen(f"{ui}/stats/requests", timeout=timeout) as r:
            d = json.load(r)
        return SwarmStatus(str(d["state"]), d.get("user_count", "?"))
    except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError):
        return None


def stop_swarm(ui, timeout: float = 10) -> None:
    if not isinstance(ui, str):
        ui.stop()
        return
    req = urllib.request.Request(f"{ui}/stop", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        r.read()


def ensure_no_swarm(ui, stop: bool, sleep=time.sleep, wait_s: int = STOP_WAIT_S) -> None:
    """The in-cluster Locust sends no load. A running swarm is stopped (STOP, said so) or refused with the
    command that stops it. Nothing answering there is fine: no Locust, no swarm."""
    how = (
        f"curl -X POST {ui}/stop (or Stop in the web UI, {ui})"
        if isinstance(ui, str)
        else f"POST /stop to the release's Locust master, {ui} (or Stop in its web UI)"
    )
    status = swarm_status(ui)
    if status is None:
        LOG.info("no in-cluster Locust answers on %s: no swarm to stop", ui)
        return
    if not status.busy:
        LOG.info("in-cluster Locust: %s, not swarming", status.state)
        return
    if not stop:
        raise SetupError(
            f"the in-cluster Locust is swarming the variants ({status.state}, {status.users} users): a scripted run must be the only load",
            f"stop it: {how}; or leave out --no-stop-swarm and the run stops it",
        )
    LOG.info("the in-cluster Locust is swarming (%s, %s users): stopping it (POST %s/stop)", status.state, status.users, ui)
    try:
        stop_swarm(ui)
    except (OSError, urllib.error.URLError, MasterUnavailable) as e:
        raise SetupError(f"could not stop the in-cluster Locust ({e})", f"stop it yourself: {how}") from e
    for _ in range(wait_s):
        status = swarm_status(ui)
        if status is None or not status.busy:
            LOG.info("in-cluster Locust stopped (%s)", status.state if status else "gone")
            return
        sleep(1)
    raise SetupError(f"the in-cluster Locust is still swarming {wait_s} s after the stop", f"stop it yourself: {how}")


def in_flight(kube: Kube, pods: list[dict], variants: list[str]) -> dict[str, int | None]:
    """Requests each of the variants' pods is serving now; None for a pod that did not answer in 3 s."""
    out = {}
    for pod in map(pod_record, pods):
        if pod["variant"] not in variants or pod["deleting"]:
            continue
        try:
            text = kube.pod_proxy(pod["name"], pod["actuatorPort"] or SERVICE_PORT, "actuator/prometheus", 3.0)
            out[pod["name"]] = parse_service_metrics(text.decode("utf-8", "replace")).get("inFlight")
        except KubeUnavailable:
            out[pod["name"]] = None
    return out


def wait_variants_idle(kube: Kube, variants: list[str], sleep=time.sleep, wait_s: int = IDLE_WAIT_S) -> bool:
    """Every pod of the variants has nothing in flight (a stopped swarm's last requests drain), at most
    WAIT_S; then a warning (the report will say the run was not alone) and False."""
    waited = 0
    while True:
        busy = {name: n for name, n in in_flight(kube, kube.pods(), variants).items() if n != 0}
        if not busy:
            return True
        shown = ", ".join(f"{name}: {'?' if n is None else n}" for name, n in busy.items())
        if waited >= wait_s:
            LOG.warning(
                "requests still in flight after %s s (%s): something else sends load; the verdict will not pass over it", wait_s, shown
            )
            return False
        if waited == 0:
            LOG.info("waiting for the requests in flight to finish (%s)", shown)
        sleep(2)
        waited += 2
