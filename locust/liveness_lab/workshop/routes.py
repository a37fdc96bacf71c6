"""The Workshop tab's routes, on the web UI's own Flask app (one Blueprint, registered by ``install``, which
the locustfile calls from Locust's init listener): the ``tab.Workshop`` of the master behind them.

Routes (JSON; an error is ``application/problem+json`` with its status, never a 500; an action whose
progress the API refused to keep answers 503, or 409 when someone else keeps writing it):

    GET  /liveness-lab/workshop                       the steps, the progress (done/total), the current check
    POST /liveness-lab/workshop/steps/<step>/select   show this step
    POST /liveness-lab/workshop/steps/<step>/hint     show its next hint
    POST /liveness-lab/workshop/steps/<step>/solution show its solution (and the lab's answer)
    POST /liveness-lab/workshop/steps/<step>/predict  {"choice": "..."}: the participant's prediction
    POST /liveness-lab/workshop/steps/<step>/skip     apply the step's change for the participant
    POST /liveness-lab/workshop/reset                 the release back to the values the workshop started with
    GET  /liveness-lab/workshop/window                what the current check judges (the window, the release)
"""

import json
import logging
import os
import time

import gevent

from liveness_lab.base import coordinates
from liveness_lab.locust_ext.ui_auth import problem

from . import tab
from .course import StepError, load_steps
from .tab import ActionError, Workshop

log = logging.getLogger(__name__)


def install(environment, poller=None, ticks=None) -> Workshop | None:
    """Adds the Workshop tab's routes to ENVIRONMENT's web UI (master or local runner) and starts its checks."""
    web_ui = environment.web_ui
    if web_ui is None or os.environ.get("LIVENESS_LAB_WORKSHOP", "on") == "off":
        return None
    from flask import Blueprint, Response, request

    helm_release = os.environ.get("LIVENESS_LAB_HELM_RELEASE") or coordinates.release()
    try:
        steps = load_steps()
    except StepError as e:
        log.error("workshop: %s", e)
        steps, failure = None, str(e)
    blueprint = Blueprint("liveness_lab_workshop", __name__)
    guard = web_ui.auth_required_if_enabled

    if steps is None:

        @blueprint.route("/liveness-lab/workshop")
        @guard
        def broken():
            return problem(503, "The workshop's steps do not load", failure)

        web_ui.app.register_blueprint(blueprint)
        return None

    api = tab.Api(coordinates.release(), poller.kube if poller is not None else None)
    workshop = Workshop(
        steps,
        api,
        helm=tab.Helm(api),
        runner_of=lambda: environment.runner,
        options_of=lambda: environment.parsed_options,
        poller=poller,
        ticks=ticks,
    )
    environment.events.test_start.add_listener(lambda **_kw: gevent.spawn(workshop.on_swarm_start, time.time()))
    environment.events.spawning_complete.add_listener(lambda **_kw: workshop.on_spawned())
    environment.events.test_stop.add_listener(lambda **_kw: workshop.on_swarm_stop())

    def answer(fn):
        try:
            return Response(json.dumps(fn(), separators=(",", ":")), mimetype="application/json")
        except ActionError as e:
            return problem(e.status, e.title, e.detail)
        except Exception as e:  # a bug: said as one (with --web-login, Locust's guard would answer it 200 as text)
            log.exception("workshop: %s %s failed", request.method, request.path)
            return problem(500, "The workshop failed", f"{type(e).__name__}: {e}")

    @blueprint.route("/liveness-lab/workshop")
    @guard
    def state():
        return answer(lambda: workshop.to_json(helm_release))

    @blueprint.route("/liveness-lab/workshop/window")
    @guard
    def window():
        return answer(workshop.window_json)

    @blueprint.route("/liveness-lab/workshop/steps/<name>/<action>", methods=["POST"])
    @guard
    def act(name, action):
        body = None
        if action == "predict":
            body = request.get_json(silent=True)
            if not isinstance(body, dict):
                return problem(400, "Bad body", 'send JSON: {"choice": "<one of the step\'s choices>"}')
        return answer(lambda: workshop.act(name, action, body))

    @blueprint.route("/liveness-lab/workshop/reset", methods=["POST"])
    @guard
    def reset():
        return answer(workshop.reset)

    web_ui.app.register_blueprint(blueprint)
    workshop.start_checking()
    return workshop
