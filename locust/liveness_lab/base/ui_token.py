"""The credential of a release's Locust web UI, shared by the master that checks it
(``locust_ext/ui_auth.py``) and every client that sends it (``scripts/demo.sh --load cluster``, the tests).

The chart makes one token per release in the Secret ``<release>-ui`` (``chart/templates/locust-ui-secret.yaml``,
key ``token``; ``<release>`` is the chart's name prefix, ``variants.fullname``), kept across upgrades, and
gives it to the master as ``LIVENESS_LAB_UI_TOKEN``. A client sends it

- as ``Authorization: Bearer <token>`` when it talks to the master itself (kind's NodePort, a port-forward);
- as ``X-Liveness-Lab-Token: <token>`` through the API server's service proxy: the API server takes the
  ``Authorization`` header as the client's own credential to the API and removes it once it has
  authenticated the request (k8s.io/apiserver ``WithAuthentication``), so the master would never see it;
  other headers pass through. A header, not a query parameter: the API server's audit log records the URL.

A browser gets in with the link ``http://127.0.0.1:8089/?token=<token>`` (``login_link``), which the master
turns into a session cookie, or by pasting the token into the login page.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse

from .variants import fullname

TOKEN_ENV = "LIVENESS_LAB_UI_TOKEN"
SECRET_KEY = "token"
HEADER = "X-Liveness-Lab-Token"
QUERY = "token"
# The master's 401 says who refused: its WWW-Authenticate names this realm (the API server's own 401 does not).
REALM = "liveness-lab"
CHALLENGE = f'Bearer realm="{REALM}"'


def secret_name(release: str) -> str:
    """The Secret holding RELEASE's token (the chart's ``<fullname>-ui``)."""
    return f"{fullname(release)}-ui"


def kubectl_command(namespace: str, release: str) -> str:
    """The command that prints RELEASE's token (kubectl decodes it itself: no base64 tool, on macOS too)."""
    return f"kubectl -n {namespace} get secret {secret_name(release)} -o go-template='{{{{.data.{SECRET_KEY} | base64decode}}}}'"


def from_secret(secret: dict | None) -> str | None:
    """The token in SECRET (API JSON, its data base64 as the API serves it); None when it has none."""
    raw = ((secret or {}).get("data") or {}).get(SECRET_KEY)
    if not raw:
        return None
    try:
        return base64.b64decode(raw, validate=True).decode("utf-8").strip() or None
    except (binascii.Error, UnicodeDecodeError):
        return None


def bearer(token: str | None) -> dict[str, str]:
    """The header a client that reaches the master directly sends (none without a token: an open UI)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def proxied(token: str | None) -> dict[str, str]:
    """The header a client sends through the API server's service proxy, which keeps Authorization for itself."""
    return {HEADER: token} if token else {}


def login_link(url: str, token: str | None) -> str:
    """The web UI at URL with the token a browser logs in with (URL itself when there is none)."""
    return f"{url.rstrip('/')}/?{urllib.parse.urlencode({QUERY: token})}" if token else url
