"""Who may use the web UI: with ``LIVENESS_LAB_UI_TOKEN`` set (the chart's master: Secret ``<release>-ui``,
key ``token``), only whoever holds that token reads anything or acts; without it (``locust -f
locust/locustfile.py`` on the host) the UI is open, as Locust's own is. Either way no browser page of
another origin may POST to it.

Built on Locust's own login (``--web-login``, flask-login; docs.locust.io, "Adding authentication to the
web UI"): every stock route and every route of our tabs carries ``web_ui.auth_required_if_enabled``, and
this module gives flask-login what it asks of an application:

- ``request_loader``: a request with ``Authorization: Bearer <token>`` (or ``X-Liveness-Lab-Token: <token>``,
  which passes the API server's service proxy: ``base/ui_token.py``) is the participant;
- ``user_loader``: so is a browser with the session cookie the login set (HttpOnly, SameSite=Strict,
  signed with a key derived from the token: it outlives a restarted master and dies with a new token);
- ``unauthorized_handler``: anything else gets 401 and changes nothing: ``application/problem+json``,
  or, for a browser asking for ``/``, Locust's own login page with a field for the token;
- the way in: ``GET <any page>?token=<token>`` (the link ``scripts/cluster-up.sh`` and the chart's
  NOTES.txt print) logs the browser in and redirects (303) to the same page without the token; the login
  page posts the token to ``POST /liveness-lab/login``.

Open without a token: ``/assets/...`` (the bundle's script and images, which the login page needs; no
data), Locust's ``/login`` page, ``POST /liveness-lab/login``, and Flask's ``/static/...`` (Locust ships
no static folder: 404). ``tests/test_ui_auth.py`` lists the app's every route and refuses any other that
answers without the token.

A POST, PUT, PATCH or DELETE whose ``Origin`` names another host than the request's is refused (403),
token or not: Locust's app allows every origin (flask-cors) and a cookie goes with a same-site request, so a
page on another port of 127.0.0.1 could otherwise start or stop a swarm with the participant's session.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
from urllib.parse import urlencode, urlsplit

from flask import Blueprint, Response, redirect, request, url_for
from flask_login import UserMixin, login_user

from liveness_lab.base import coordinates, ui_token

log = logging.getLogger(__name__)

LOGIN_ROUTE = "/liveness-lab/login"
# Routes that answer without the token (see the module's docstring), by Flask endpoint.
OPEN_ENDPOINTS = frozenset({"static", "locust.send_assets", "locust.login", "liveness_lab_login.login"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Participant(UserMixin):
    """The one user there is: whoever holds the release's token."""

    id = "participant"


PARTICIPANT = Participant()


def problem(status: int, title: str, detail: str, headers: dict | None = None) -> Response:
    """An ``application/problem+json`` answer (RFC 9457), as the project's routes give every error."""
    return Response(
        json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail}),
        status=status,
        mimetype="application/problem+json",
        headers=headers,
    )


def other_origin(req) -> bool:
    """A browser's request from a page of another origin (its Origin header names another host:port)."""
    origin = req.headers.get("Origin")
    return bool(origin) and origin != "null" and urlsplit(origin).netloc != req.host


def refuse_other_origin():
    """before_request: a write from a page of another origin, refused before any route sees it."""
    if request.method not in SAFE_METHODS and other_origin(request):
        return problem(403, "Other origin", f"a request from {request.headers.get('Origin')} may not act on this Locust")
    return None


def presented(req) -> str | None:
    """The token a request carries in a header: Authorization: Bearer, or X-Liveness-Lab-Token."""
    auth = req.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return req.headers.get(ui_token.HEADER, "").strip() or None


def install(environment, token: str | None = None) -> bool:
    """Guards ENVIRONMENT's web UI (master or local runner): the Origin check always, the token when TOKEN
    (default: LIVENESS_LAB_UI_TOKEN) is set. True when the token is required. Locust's login must be on
    (--web-login; locustfile.py turns it on whenever the token is set): a token without it would leave the
    routes open, so that is an error, not a warning."""
    web_ui = environment.web_ui
    if web_ui is None:
        return False
    app = web_ui.app
    app.before_request(refuse_other_origin)
    token = (os.environ.get(ui_token.TOKEN_ENV, "") if token is None else token).strip()
    if not token:
        log.info("web UI: open (no %s): anyone who reaches it may use it", ui_token.TOKEN_ENV)
        return False
    if not web_ui.web_login:
        raise RuntimeError(f"{ui_token.TOKEN_ENV} is set but Locust's login is off: start Locust with --web-login (LOCUST_WEB_LOGIN=true)")

    def valid(given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), token.encode())

    # Sessions are signed with a key of the token's: a master restarted with the same token keeps its
    # browsers logged in, a new token logs them all out. The cookie's name is the token's too, so two
    # releases forwarded to two ports of 127.0.0.1 (cookies ignore the port) keep their own sessions.
    fingerprint = hashlib.sha256(b"liveness-lab ui session\0" + token.encode()).hexdigest()
    app.secret_key = fingerprint
    app.config.update(
        SESSION_COOKIE_NAME=f"liveness-lab-ui-{fingerprint[:12]}",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
    )
    manager = web_ui.login_manager
    manager.user_loader(lambda user_id: PARTICIPANT if user_id == PARTICIPANT.id else None)
    manager.request_loader(lambda req: PARTICIPANT if valid(presented(req)) else None)

    where = ui_token.kubectl_command(coordinates.namespace(), coordinates.release())
    info = f"This Locust needs its release's token: open the link scripts/cluster-up.sh printed, or paste the output of {where}"
    web_ui.auth_args = {
        "custom_form": {
            "inputs": [{"label": "Token", "name": ui_token.QUERY, "is_secret": True, "is_required": True}],
            "callback_url": LOGIN_ROUTE,
            "submit_button_text": "Log in",
        },
        "info": info,
    }

    def login_page(status: int, error: str | None = None) -> Response:
        from locust.html import render_template_from

        # Locust's own /login page overwrites auth_args' info and error with its session's: ours are given here.
        args = {**web_ui.auth_args, "info": info, "error": error}
        html = render_template_from("auth.html", auth_args=args, auth_title="Locust: log in")
        headers = {"WWW-Authenticate": ui_token.CHALLENGE, "Cache-Control": "no-store"}
        return Response(html, status=status, mimetype="text/html", headers=headers)

    def unauthorized():
        wrong = presented(request) is not None
        if request.method == "GET" and request.path == url_for("locust.index") and request.accept_mimetypes.accept_html and not wrong:
            return login_page(401)
        detail = (
            "the token sent is not this release's"
            if wrong
            else f"send the release's token: Authorization: Bearer <token> (or {ui_token.HEADER}: <token>); get it with {where}"
        )
        return problem(401, "Token required", detail, {"WWW-Authenticate": ui_token.CHALLENGE})

    manager.unauthorized_handler(unauthorized)

    def exchange_link():
        """before_request: ?token=... in a page's URL logs the browser in, then the same page without it."""
        given = request.args.get(ui_token.QUERY)
        if given is None or request.method != "GET":
            return None
        if not valid(given):
            return problem(401, "Token required", "the token in the link is not this release's", {"WWW-Authenticate": ui_token.CHALLENGE})
        login_user(PARTICIPANT)
        rest = [(k, v) for k, v in request.args.items(multi=True) if k != ui_token.QUERY]
        response = redirect(request.path + (f"?{urlencode(rest)}" if rest else ""), code=303)
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    app.before_request(exchange_link)

    blueprint = Blueprint("liveness_lab_login", __name__)

    @blueprint.route(LOGIN_ROUTE, methods=["POST"])
    def login():
        if not valid(request.form.get(ui_token.QUERY, "").strip()):
            return login_page(401, "That is not this release's token.")
        login_user(PARTICIPANT)
        return redirect(url_for("locust.index"), code=303)

    app.register_blueprint(blueprint)
    log.info("web UI: the release's token required (%s)", ui_token.TOKEN_ENV)
    return True
