"""Swarms liveness-lab's service variants: one FastHttpUser class per variant, and the Pods, Live and Workshop
tabs in the web UI.

The classes are built from the variant table (``liveness_lab/base/variants.py`` reads it): ``<Variant>User``,
e.g. ``BlockingUser`` and ``ReactiveUser``.

Every user calls ``GET /api/work?latencyMs=N`` at a constant rate (``constant_throughput``), so the
offered load stays the same when a server slows down: that is what saturates a blocking pod's 4 event
loops (more than 4 requests in flight) while the reactive pod just keeps waiting on timers.

Usage:
    # In the cluster: the chart runs the master (web UI on http://127.0.0.1:8089) and workers.
    # On the host, against kind's NodePorts on 127.0.0.1 (web UI on http://127.0.0.1:8089):
    LIVENESS_LAB_TARGET=host locust -f locust/locustfile.py --class-picker
    # Headless, two variants, 20 users each for a minute:
    LIVENESS_LAB_TARGET=host locust -f locust/locustfile.py --headless -u 40 -r 10 -t 60s BlockingUser ReactiveUser
    # The scripted run (ramp, hold, cool-down, quiet): see scripts/demo.sh, which sets LIVENESS_LAB_SHAPE=demo.

Where each variant answers: ``liveness_lab/base/variants.py`` (``LIVENESS_LAB_TARGET=cluster|host``, or
``LIVENESS_LAB_<VARIANT>_HOST=http://127.0.0.1:PORT`` for one variant). In the cluster only the deployed
variants have a class; on the host every variant of chart/values.yaml has one: pick those deployed.

Options (command line, web UI "Custom parameters", or environment):
    --latency-ms        LIVENESS_LAB_LATENCY_MS        how long the service waits per request, in ms
                                                       (default liveness_lab.base.DEFAULT_LATENCY_MS)
    --rate-per-user     LIVENESS_LAB_RATE_PER_USER=1   requests per second each user aims for
Command line or environment (not in the web UI):
    --request-timeout-s LIVENESS_LAB_REQUEST_TIMEOUT_S  seconds a request may wait before it counts as failed
                                                       (default liveness_lab.base.DEFAULT_REQUEST_TIMEOUT_S)
Environment only:
    LIVENESS_LAB_SHAPE=demo             use liveness_lab.shape.DemoShape (ramp, hold, cool-down, quiet)
                      =offered          offer it in the class picker (the chart's master; demo.sh --load cluster)
    LIVENESS_LAB_PODS_TAB=on|off        the Pods tab (liveness_lab/locust_ext/pods_tab.py)
    LIVENESS_LAB_LIVE_REFRESH=2         seconds between the Live tab's samples (liveness_lab/locust_ext/live_view.py)
    LIVENESS_LAB_WORKSHOP=on|off        the Workshop tab's checks and actions (liveness_lab/workshop/tab.py)
    LIVENESS_LAB_UI_TOKEN=<token>       every route of the web UI requires it (liveness_lab/locust_ext/ui_auth.py;
                                        the chart's master reads it from the Secret <release>-ui); unset, the UI is open
    LOCUST_BUILD_PATH=<webui/dist>      the web UI bundle with the Live tab, when built (see below)
"""

import os
from pathlib import Path

import locust.runners
from locust import FastHttpUser, constant_throughput, events, task

from liveness_lab.base import DEFAULT_LATENCY_MS, DEFAULT_RATE, DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_USERS_PER_VARIANT, ui_token, variants
from liveness_lab.locust_ext import demo_shape as shape
from liveness_lab.locust_ext import live_view, pods_tab, stats_history, swarm_guard, ui_auth
from liveness_lab.workshop import routes as workshop_routes

if os.environ.get("LIVENESS_LAB_SHAPE") in ("demo", "offered"):
    # Only imported on request: a shape class in the module would replace the web UI's users/rate form,
    # unless the class picker is on (the chart's master: "offered", selected by a /swarm request).
    from liveness_lab.locust_ext.demo_shape import DemoShape  # noqa: F401

# The web UI with the Live tab: Locust's own UI from its locust-ui library plus our tab, built into
# webui/dist/ (in the image by its Dockerfile; on the host by scripts/build-webui.sh). Locust serves it
# when --build-path / LOCUST_BUILD_PATH names it; set here before Locust reads its options, so that
# `locust -f locustfile.py` shows the Live tab whenever the bundle is built, and the stock UI when not.
WEBUI_BUILD = Path(__file__).resolve().parent / "webui" / "dist"
if (WEBUI_BUILD / "index.html").is_file():
    os.environ.setdefault("LOCUST_BUILD_PATH", str(WEBUI_BUILD))

# With the release's token the web UI takes Locust's own login (--web-login, flask-login), which
# liveness_lab/locust_ext/ui_auth.py completes: set here, as the build path above, before Locust reads its
# options. Without the token (Locust on the host) the UI stays open, as Locust's own is.
if os.environ.get(ui_token.TOKEN_ENV, "").strip():
    os.environ["LOCUST_WEB_LOGIN"] = "true"

# Workers send their stats to the master every second, not Locust's 3 s: the master's stats history (one
# row a second, what `scripts/demo.sh --load cluster` fetches) then moves a second at a time as a host
# run's does, instead of in 3 s steps that make a 5 s requests/s window read 1x or 2x the rate.
locust.runners.WORKER_REPORT_INTERVAL = float(os.environ.get("LIVENESS_LAB_WORKER_REPORT_S", "1"))


@events.init_command_line_parser.add_listener
def _options(parser):
    parser.add_argument(
        "--latency-ms",
        type=int,
        default=DEFAULT_LATENCY_MS,
        env_var="LIVENESS_LAB_LATENCY_MS",
        help="latency each /api/work request asks the service for, in ms",
    )
    parser.add_argument(
        "--rate-per-user",
        type=float,
        default=DEFAULT_RATE,
        env_var="LIVENESS_LAB_RATE_PER_USER",
        help="requests per second each user aims for (constant_throughput)",
    )
    parser.add_argument(
        "--request-timeout-s",
        type=float,
        default=DEFAULT_REQUEST_TIMEOUT_S,
        env_var="LIVENESS_LAB_REQUEST_TIMEOUT_S",
        include_in_web_ui=False,
        help="seconds a request may wait before it counts as failed (a blocked pod queues them)",
    )
    shape.add_options(parser)


@events.init.add_listener
def _tabs(environment, **_kwargs):
    # Master or local runner only: workers have no web UI. First who may use it (the token, other origins),
    # before Locust serves a request; every route below carries Locust's own guard.
    ui_auth.install(environment)
    # A master with no worker refuses a swarm in words instead of answering that it started (swarm_guard.py).
    swarm_guard.install(environment)
    # The Live tab reads the Pods tab's poller.
    poller = pods_tab.install(environment)
    live_view.install(environment, poller)
    # The per-second stats history a scripted run with --load cluster fetches (liveness_lab/locust_ext/stats_history.py).
    ticks = stats_history.install(environment)
    # The Workshop tab's steps and checks, on the same pods, events and stats history (liveness_lab/workshop/tab.py).
    workshop_routes.install(environment, poller, ticks)
    propose_demo_load(environment)


def propose_demo_load(environment):
    """The start form proposes the demo's load, not Locust's 1 user: DEFAULT_USERS_PER_VARIANT users of each
    deployed variant's class (every class is ticked in the class picker), all started at once (40 users,
    ramp 40, for blocking and reactive). Only where nobody chose (-u, -r, LOCUST_USERS...), and only for the
    web UI: a headless run keeps Locust's own rule."""
    opts = environment.parsed_options
    if environment.web_ui is None or opts is None:
        return
    users = DEFAULT_USERS_PER_VARIANT * max(1, sum(v.enabled for v in variants.TABLE))
    if getattr(opts, "num_users", None) is None:
        opts.num_users = users
    if getattr(opts, "spawn_rate", None) is None:
        opts.spawn_rate = users


class VariantUser(FastHttpUser):
    """One variant's users: /api/work at a constant rate. The classes below name the variant."""

    abstract = True
    variant = ""

    # FastHttpUser builds its client with these once the user has its environment: the run's option, so
    # a scenario that asks for requests of 30 s can wait for them (workers get it with the swarm).
    @property
    def network_timeout(self):
        return float(self._option("request_timeout_s", DEFAULT_REQUEST_TIMEOUT_S))

    @property
    def connection_timeout(self):
        return self.network_timeout

    def wait_time(self):
        # constant_throughput keeps its pacing state on the user, so building it per call is safe; this
        # way the rate can change from the web UI between runs.
        return constant_throughput(self._option("rate_per_user", DEFAULT_RATE))(self)

    @task
    def work(self):
        self.client.get(f"/api/work?latencyMs={self._option('latency_ms', DEFAULT_LATENCY_MS)}", name=variants.request_name(self.variant))

    def _option(self, name, default):
        return getattr(self.environment.parsed_options, name, default)


def _user_class(variant: variants.Variant) -> type[VariantUser]:
    name = variants.user_class(variant.name)
    return type(
        name,
        (VariantUser,),
        {
            "__doc__": f"Swarms the {variant.name} variant (APP_MODE={variant.mode}).",
            "__module__": __name__,
            "abstract": False,
            "variant": variant.name,
            "host": variants.target_host(variant.name),
        },
    )


# One class per variant of the table (chart/values.yaml, or the chart's LIVENESS_LAB_VARIANTS in the
# cluster), named as Locust shows it: blocking -> BlockingUser. Locust picks them up from this module's names.
globals().update({cls.__name__: cls for cls in map(_user_class, variants.TABLE)})
