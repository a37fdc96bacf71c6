"""A master with no worker refuses a swarm in words (locust_ext/swarm_guard.py): the real Flask app of a real
Locust master with the locustfile's tabs (test_ui_auth.master_web_ui), and a real worker runner that
connects to it over ZeroMQ on 127.0.0.1. Without a worker, POST /swarm answers success false with the
reason and the master stays "ready" (Locust's own answer would be "Swarming started", and nothing would
run); once the worker is connected the same form starts the swarm; without the token it is the 401 of
every route, before the guard says anything."""

import sys

import gevent
import pytest
from locust.env import Environment
from test_ui_auth import BEARER, BODIES, TOKEN, Nobody, master_web_ui

from liveness_lab.locust_ext import swarm_guard

SWARM = BODIES["locust.swarm"]["data"]


@pytest.fixture
def master(monkeypatch, tmp_path):
    environment, _ = master_web_ui(monkeypatch, tmp_path, TOKEN)
    yield environment
    environment.runner.quit()


def connected_worker(master_env: Environment, wait_s: float = 10) -> Environment:
    worker = Environment(user_classes=[Nobody])
    worker.create_worker_runner("127.0.0.1", master_env.runner.server.port)
    deadline = gevent.get_hub().loop.now() + wait_s
    while master_env.runner.worker_count == 0 and gevent.get_hub().loop.now() < deadline:
        gevent.sleep(0.1)
    assert master_env.runner.worker_count == 1, "the worker did not connect to the master"
    return worker


def test_a_swarm_on_a_master_with_no_worker_is_refused_in_words_and_starts_nothing(master):
    client = master.web_ui.app.test_client()
    answer = client.post("/swarm", data=SWARM, headers=BEARER)
    assert answer.status_code == 200 and answer.get_json()["success"] is False
    assert answer.get_json()["message"] == swarm_guard.NO_WORKER
    assert master.runner.state == "ready" and master.runner.user_count == 0
    # Without the token: the 401 every route gives, the guard says nothing.
    refused = client.post("/swarm", data=SWARM)
    assert refused.status_code == 401 and "worker" not in refused.get_data(as_text=True)


def test_once_a_worker_is_connected_the_same_swarm_starts(master):
    worker = connected_worker(master)
    try:
        answer = master.web_ui.app.test_client().post("/swarm", data=SWARM, headers=BEARER)
        assert answer.get_json() == {"success": True, "message": "Swarming started", "host": answer.get_json()["host"]}
        deadline = gevent.get_hub().loop.now() + 10
        while master.runner.state not in ("spawning", "running") and gevent.get_hub().loop.now() < deadline:
            gevent.sleep(0.1)
        assert master.runner.state in ("spawning", "running")
    finally:
        master.runner.stop()
        worker.runner.quit()


def test_a_local_runner_has_no_worker_to_wait_for_and_is_left_as_it_is(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["locust"])
    environment = Environment(user_classes=[Nobody])
    environment.create_local_runner()
    environment.create_web_ui("127.0.0.1", 0, delayed_start=True)
    assert swarm_guard.install(environment) is False
