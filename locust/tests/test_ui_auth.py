"""Only the holder of the release's token uses the web UI (locust_ext/ui_auth.py): the real Flask app of a
real Locust master (Environment, MasterRunner, the web UI with Locust's --web-login, not serving) with
every tab the locustfile adds (its init listener, the workshop on the in-memory release of
recorded_release.py). Every route of the app is listed from its url_map, so a route added later is tried
too: without the token, or with a wrong one, each answers 401 and changes nothing (the runner, the stats,
the user classes, the workshop's progress and the release's Deployments); with it, each answers. Then the
browser's way in (the link, the login page), the Origin check, and the open UI without a token."""

import json
import re
import sys

import pytest
from locust import FastHttpUser, task
from locust.env import Environment
from recorded_release import RecordedApi, RecordedHelm

from liveness_lab.base import ui_token
from liveness_lab.locust_ext import ui_auth
from liveness_lab.workshop import tab

TOKEN = "t0ken-of-the-release-XYZ"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


class Nobody(FastHttpUser):
    host = "http://127.0.0.1:18082"  # never called

    @task
    def nothing(self):
        pass


# A value for each path argument of the app's routes; a route with another argument fails the listing test
# until it has one here (so nobody forgets to try it).
ARGUMENTS = {"path": "favicon-light.png", "filename": "nothing.css", "name": "tcp-probe", "action": "hint"}
# What a request to each route carries, so that with the token it does what it does (by endpoint).
BODIES = {
    "locust.swarm": {"data": {"user_count": "1", "spawn_rate": "1", "user_classes": "Nobody", "shape_class": "Default"}},
    "locust.update_user": {"json": {"user_class_name": "Nobody", "host": "http://127.0.0.1:9"}},
    "liveness_lab_login.login": {"data": {"token": TOKEN}},
}
# With the token these answer something else than 200, for reasons of their own (by endpoint).
NOT_200 = {
    "locust.request_stats_full_history_csv": 404,  # "not started with option to generate full history" (--csv-full-history)
    "static": 404,  # Locust ships no static folder
    "locust.update_user": 201,
    "liveness_lab_login.login": 303,  # logged in: on to the UI
}


def master_web_ui(monkeypatch, tmp_path, token: str | None, web_login: bool = True):
    """A master with the locustfile's tabs on its web UI; its Kubernetes API a closed port; the workshop's
    release in memory. Returns (environment, the workshop's in-memory API)."""
    from conftest import closed_port_kubeconfig

    import locustfile

    monkeypatch.setattr(sys, "argv", ["locust"])
    monkeypatch.setenv("KUBECONFIG", str(closed_port_kubeconfig(tmp_path / "kubeconfig")))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for name, value in {
        "LIVENESS_LAB_PODS_REFRESH": "3600",
        "LIVENESS_LAB_LIVE_REFRESH": "3600",
        "LIVENESS_LAB_WORKSHOP_REFRESH": "3600",
    }.items():
        monkeypatch.setenv(name, value)
    if token is None:
        monkeypatch.delenv(ui_token.TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(ui_token.TOKEN_ENV, token)
    api = RecordedApi()
    monkeypatch.setattr(tab, "Api", lambda release, kube: api)
    monkeypatch.setattr(tab, "Helm", RecordedHelm)
    # The workshop's first check now, and no periodic one: nothing but the requests changes its state.
    monkeypatch.setattr(tab.Workshop, "start_checking", lambda self: self.tick())
    environment = Environment(
        user_classes=[Nobody], available_user_classes={"Nobody": Nobody}, available_user_tasks={"Nobody": Nobody.tasks}
    )
    environment.create_master_runner("127.0.0.1", 0)
    environment.create_web_ui("127.0.0.1", 0, delayed_start=True, web_login=web_login)
    locustfile._tabs(environment)
    return environment, api


@pytest.fixture
def guarded(monkeypatch, tmp_path):
    environment, api = master_web_ui(monkeypatch, tmp_path, TOKEN)
    yield environment, api
    environment.runner.quit()


def requests_of(app):
    """(endpoint, method, url) of every route of APP, each method but OPTIONS (Flask answers it itself,
    without the route, flask-cors adds its headers: no data) and HEAD (the GET route answers it)."""
    out = []
    for rule in app.url_map.iter_rules():
        missing = set(rule.arguments) - set(ARGUMENTS)
        assert not missing, f"route {rule.rule} takes {missing}: give it a value in ARGUMENTS"
        url = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: ARGUMENTS[m.group(1)], rule.rule)
        out += [(rule.endpoint, method, url) for method in sorted(rule.methods - {"OPTIONS", "HEAD"})]
    return out


def state(environment, api, workshop_json) -> str:
    """Everything a request could change: the runner, the stats, the user class, the workshop's progress
    as served and as kept, the release's Deployments and every API call the workshop made."""
    runner = environment.runner
    return json.dumps(
        {
            "runner": [runner.state, runner.user_count, runner.stats.total.num_requests, len(runner.exceptions)],
            "host": [environment.host, Nobody.host],
            "workshop": workshop_json,
            "configmap": api.cm,
            "deployments": api.deps,
            "calls": api.calls,
        },
        sort_keys=True,
        default=str,
    )


def test_every_route_but_the_login_and_the_bundle_refuses_a_request_without_the_token_and_changes_nothing(guarded):
    environment, api = guarded
    app = environment.web_ui.app
    environment.runner.stats.log_request("GET", "/api/work", 1000, 10)  # something /stats/reset would clear
    guarded_routes = [r for r in requests_of(app) if r[0] not in ui_auth.OPEN_ENDPOINTS]
    # Each tab's routes and Locust's own are among them: the listing sees what the locustfile added.
    endpoints = {endpoint for endpoint, _, _ in guarded_routes}
    assert {"locust.index", "locust.swarm", "locust.stop", "locust.reset_stats", "locust.stats_report", "locust.update_user"} <= endpoints
    assert {"liveness_lab_pods.pods_json", "liveness_lab_live.live_json", "liveness_lab_stats_history.stats_history"} <= endpoints
    assert {
        "liveness_lab_workshop.state",
        "liveness_lab_workshop.window",
        "liveness_lab_workshop.act",
        "liveness_lab_workshop.reset",
    } <= endpoints

    def workshop():
        return app.test_client().get("/liveness-lab/workshop", headers=BEARER).get_json()

    before = state(environment, api, workshop())
    answered = []
    for endpoint, method, url in guarded_routes:
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {ui_token.HEADER: "not-the-token"}, {"Authorization": TOKEN}):
            client = app.test_client()
            response = client.open(url, method=method, headers=headers, **BODIES.get(endpoint, {}))
            if response.status_code != 401:
                answered.append((method, url, headers, response.status_code))
            elif url.startswith("/liveness-lab/") or method != "GET" or url != "/":
                assert response.mimetype == "application/problem+json", (method, url, response.mimetype)
            assert response.headers.get("WWW-Authenticate", "").startswith("Bearer"), (method, url)
            assert state(environment, api, workshop()) == before, f"{method} {url} with {headers} changed something"
    assert answered == [], f"answered without the token: {answered}"


@pytest.mark.parametrize("headers", [BEARER, {ui_token.HEADER: TOKEN}], ids=["bearer", "x-liveness-lab-token"])
def test_every_route_answers_with_the_token(guarded, headers):
    environment, _ = guarded
    app = environment.web_ui.app
    wrong = {}
    for endpoint, method, url in requests_of(app):
        response = app.test_client().open(url, method=method, headers=headers, **BODIES.get(endpoint, {}))
        want = NOT_200.get(endpoint, 200)
        if response.status_code != want:
            wrong[f"{method} {url}"] = (response.status_code, response.get_data(as_text=True)[:200])
    assert wrong == {}
    # What they did: the user class changed, a step's hint shown.
    assert Nobody.host == "http://127.0.0.1:9"
    assert app.test_client().get("/liveness-lab/workshop", headers=headers).get_json()["steps"][1]["hintsShown"]


def test_the_link_logs_a_browser_in_with_a_session_cookie_and_drops_the_token_from_the_url(guarded):
    environment, _ = guarded
    browser = environment.web_ui.app.test_client()
    page = browser.get("/", headers={"Accept": "text/html"})
    # No cookie yet: Locust's login page, with a field for the token and where to find it, as a 401.
    assert page.status_code == 401 and page.mimetype == "text/html"
    assert "authArgs" in page.get_data(as_text=True) and '"callback_url": "/liveness-lab/login"' in page.get_data(as_text=True)
    assert "get secret liveness-lab-ui" in page.get_data(as_text=True)

    wrong = browser.get("/?token=guess")
    assert wrong.status_code == 401 and not wrong.headers.getlist("Set-Cookie")
    assert ui_token.login_link("http://127.0.0.1:8089", TOKEN) == f"http://127.0.0.1:8089/?token={TOKEN}"
    link = browser.get(f"/?tab=live&token={TOKEN}")
    assert link.status_code == 303 and link.headers["Location"] == "/?tab=live"  # the token leaves the URL
    cookie = " ".join(link.headers.getlist("Set-Cookie"))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    # The session opens every route, the UI page and what its tabs fetch, and acts.
    assert browser.get("/", headers={"Accept": "text/html"}).status_code == 200
    assert browser.get("/liveness-lab/workshop").status_code == 200
    assert browser.post("/liveness-lab/workshop/steps/tcp-probe/hint").status_code == 200
    # A browser without it still gets nothing.
    assert environment.web_ui.app.test_client().get("/liveness-lab/live").status_code == 401


def test_the_login_page_takes_the_token_and_refuses_another(guarded):
    environment, _ = guarded
    browser = environment.web_ui.app.test_client()
    refused = browser.post(ui_auth.LOGIN_ROUTE, data={"token": "guess"})
    assert refused.status_code == 401 and "That is not this release" in refused.get_data(as_text=True)
    assert browser.get("/stats/requests").status_code == 401
    taken = browser.post(ui_auth.LOGIN_ROUTE, data={"token": TOKEN}, headers={"Origin": "http://localhost"})
    assert taken.status_code == 303 and taken.headers["Location"] == "/"
    assert browser.get("/stats/requests").status_code == 200


def test_a_session_cookie_of_another_token_is_refused(monkeypatch, tmp_path):
    """A master given a new token (a new Secret) logs every browser out: the cookie is signed with a key
    of the token's."""
    first, _ = master_web_ui(monkeypatch, tmp_path, TOKEN)
    browser = first.web_ui.app.test_client()
    assert browser.get(f"/?token={TOKEN}").status_code == 303
    cookie = browser.get_cookie(first.web_ui.app.config["SESSION_COOKIE_NAME"])
    first.runner.quit()
    second, _ = master_web_ui(monkeypatch, tmp_path, "a-new-token")
    other = second.web_ui.app.test_client()
    other.set_cookie(second.web_ui.app.config["SESSION_COOKIE_NAME"], cookie.value)
    other.set_cookie(first.web_ui.app.config["SESSION_COOKIE_NAME"], cookie.value)
    assert other.get("/stats/requests").status_code == 401
    second.runner.quit()


@pytest.mark.parametrize(
    "path", ["/stop", "/swarm", "/stats/reset", "/liveness-lab/workshop/reset", "/liveness-lab/workshop/steps/baseline/hint"]
)
def test_a_write_from_a_page_of_another_origin_is_refused_even_with_the_session(guarded, path):
    environment, api = guarded
    browser = environment.web_ui.app.test_client()
    browser.get(f"/?token={TOKEN}")
    before = state(environment, api, None)
    refused = browser.post(path, headers={"Origin": "http://127.0.0.1:30080"})
    assert refused.status_code == 403 and refused.mimetype == "application/problem+json"
    assert "may not act" in refused.get_json()["detail"] and state(environment, api, None) == before
    assert browser.post("/stats/reset", headers={"Origin": "http://localhost"}).status_code == 200  # the test client's host


def test_without_a_token_the_ui_is_open_as_locusts_own_and_still_refuses_other_origins(monkeypatch, tmp_path):
    environment, _ = master_web_ui(monkeypatch, tmp_path, None, web_login=False)
    try:
        client = environment.web_ui.app.test_client()
        assert client.get("/liveness-lab/workshop").status_code == 200
        assert client.post("/stats/reset").status_code == 200
        assert client.post("/stop", headers={"Origin": "http://evil.example"}).status_code == 403
    finally:
        environment.runner.quit()


def test_a_token_without_locusts_login_is_an_error_not_an_open_ui(monkeypatch, tmp_path):
    with pytest.raises(RuntimeError, match="--web-login"):
        master_web_ui(monkeypatch, tmp_path, TOKEN, web_login=False)


def test_the_locustfile_turns_locusts_login_on_when_the_token_is_set(tmp_path):
    """As Locust loads it: the locustfile sets LOCUST_WEB_LOGIN before Locust parses its options."""
    import subprocess

    from conftest import LOCUST_DIR

    code = "import os, locustfile; print(os.environ.get('LOCUST_WEB_LOGIN'))"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    with_token = subprocess.run(
        [sys.executable, "-c", code], cwd=LOCUST_DIR, env={**env, ui_token.TOKEN_ENV: "x"}, capture_output=True, text=True
    )
    without = subprocess.run([sys.executable, "-c", code], cwd=LOCUST_DIR, env=env, capture_output=True, text=True)
    assert (with_token.stdout.strip(), without.stdout.strip()) == ("true", "None"), (with_token.stderr, without.stderr)
