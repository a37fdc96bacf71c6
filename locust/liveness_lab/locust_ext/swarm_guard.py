"""No swarm on a master with no worker: ``POST /swarm`` is refused, in words, while none is connected.

Locust's master answers a ``/swarm`` with ``{"success": true, "message": "Swarming started"}`` whether or
not a worker is connected; with none it only logs "You can't start a distributed test before at least
one worker processes has connected" (``locust.runners.MasterRunner.start``) and stays "ready": no user
runs, the tabs never open (Locust shows them once a swarm runs), and whoever asked was told it started.
Its start form greys its button while the worker count it last polled is 0, but a script, a test or a
form a poll behind posts anyway. It happens for a few seconds after every rollout of the release's Locust:
the old master tells its worker to quit as it stops, the worker's container restarts and connects to the
new master (chart/templates/locust-worker-deployment.yaml).

So the master answers such a ``/swarm`` as Locust answers every ``/swarm`` it refuses (HTTP 200,
``success: false``, a ``message`` its form shows under the button), and starts nothing. The token is asked
first, as for every route (``ui_auth``): without it the answer is the same 401 as before.
"""

from __future__ import annotations

from functools import wraps

from flask import jsonify
from locust.runners import MasterRunner

ENDPOINT = "locust.swarm"


NO_WORKER = (
    "no Locust worker is connected to this master, so a swarm would not start: wait a few seconds (after a rollout "
    "the worker restarts and connects to the new master) and start again; if it stays at 0 workers, see "
    "kubectl get pods -l app.kubernetes.io/component=locust-worker"
)


def install(environment) -> bool:
    """Guard the master's /swarm (a local runner has no workers to wait for: left as it is). True when installed."""
    web_ui = environment.web_ui
    if web_ui is None or not isinstance(environment.runner, MasterRunner):
        return False
    app = web_ui.app
    swarm = app.view_functions[ENDPOINT]

    @wraps(swarm)
    def guarded(*args, **kwargs):
        if environment.runner.worker_count == 0:
            return jsonify({"success": False, "message": NO_WORKER, "host": environment.host})
        return swarm(*args, **kwargs)

    # Locust's own token check (auth_required_if_enabled) outside ours: a request without the token learns nothing.
    app.view_functions[ENDPOINT] = web_ui.auth_required_if_enabled(guarded)
    return True
