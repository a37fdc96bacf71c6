"""The web UI bundle (locust-ui 2.43.4, the newest npm has) against the pinned Locust (2.47.0, whose own UI
is no longer published as a library: locustio/locust#3408) is a tested pair: in headless Chromium (Debian's),
on a local Locust master and one worker (as the chart runs it) swarming the real service jar with a user
that raises planted beside the variants, every stock tab shows what the server's own routes say at that
moment: Statistics the rows of /stats/requests, Charts the user count, Failures its errors, Exceptions
/exceptions, Current ratio /tasks, Download Data links that answer with the server's CSV, Logs lines of
/logs, Workers the worker and its users; and the Stop and Reset buttons reach it (they are POST in 2.47:
webui/src/postOnlyRequests.js). The 1 s request timeout makes the blocking instance fail within seconds."""

import re
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import LIVE_WEB_UI_PORT, auth_headers, pods_tab_page, web_post, web_read
from test_live_view import local_locust

CLASSES = ["BlockingUser", "ReactiveUser", "PlantedFailureUser"]
# The texts of echarts' HTML tooltips on the page.
TOOLTIPS = """() => Array.from(document.querySelectorAll('div'))
  .filter(d => d.style && d.style.position === 'absolute' && getComputedStyle(d).zIndex === '9999999' && d.innerText)
  .map(d => d.innerText)"""


@pytest.fixture
def stock_web_ui(services, tmp_path):
    yield from local_locust(
        services,
        tmp_path,
        LIVE_WEB_UI_PORT,
        Path(__file__).parent / "stock_tabs_locustfile.py",
        workers=1,
        LIVENESS_LAB_REQUEST_TIMEOUT_S="1",
    )


def table_rows(page) -> list[list[str]]:
    """The visible table's body rows as cell texts."""
    rows = page.locator("tbody tr")
    return [[c.strip() for c in rows.nth(i).inner_text().split("\t")] for i in range(rows.count())]


def wait_until(what, probe, timeout=20):
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what}: {last}")


def test_every_stock_tab_shows_the_servers_data(stock_web_ui):
    web_ui = stock_web_ui
    assert web_post(web_ui, "/swarm", user_count=9, spawn_rate=9, user_classes=CLASSES, shape_class="Default") == 200
    wait_until(
        "failures and exceptions", lambda: web_read(web_ui, "/stats/requests")["errors"] and web_read(web_ui, "/exceptions")["exceptions"]
    )
    with pods_tab_page(web_ui, "Statistics", viewport=(1600, 1000)) as page:
        # Statistics: one row per request name, each with a request count between two reads of the server.
        before = {s["name"]: s["num_requests"] for s in web_read(web_ui, "/stats/requests")["stats"]}
        page.wait_for_timeout(2500)  # the tab reads /stats/requests every 2 s
        shown = {r[1]: int(r[2]) for r in table_rows(page) if len(r) > 2 and r[1]}
        after = {s["name"]: s["num_requests"] for s in web_read(web_ui, "/stats/requests")["stats"]}
        assert set(shown) == set(after) == {"blocking /api/work", "reactive /api/work", "Aggregated"}, shown
        assert all(before[n] <= shown[n] <= after[n] for n in shown), (before, shown, after)

        # Charts: the user count the server reports, in the charts' tooltips (echarts draws on a canvas; its
        # tooltip is HTML, one per chart, their axis pointers linked).
        page.get_by_role("tab", name="Charts").click()
        charts = page.locator("[_echarts_instance_]")
        charts.first.wait_for(timeout=10000)
        page.wait_for_timeout(2500)
        users = web_read(web_ui, "/stats/requests")["user_count"]

        def tooltips():
            box = charts.first.bounding_box()
            page.mouse.move(box["x"] + box["width"] - 60, box["y"] + box["height"] / 2 + 10)
            page.mouse.move(box["x"] + box["width"] - 50, box["y"] + box["height"] / 2)
            page.wait_for_timeout(500)
            texts = page.evaluate(TOOLTIPS)
            return [t for t in texts if re.search(rf"Number of Users:\s*{users}\b", t)] or None

        assert wait_until(f"a tooltip with {users} users", tooltips, timeout=15)

        # Failures: each of the server's errors, with its count at most what it says next.
        page.get_by_role("tab", name="Failures").click()
        page.wait_for_timeout(2500)
        errors = {(e["name"], e["error"]): e["occurrences"] for e in web_read(web_ui, "/stats/requests")["errors"]}
        shown = {(r[2], r[3]): int(r[0]) for r in table_rows(page) if len(r) >= 4}
        assert shown and set(shown) <= set(errors) and all(shown[k] <= errors[k] for k in shown), (shown, errors)
        assert any(name == "blocking /api/work" for name, _ in shown), shown

        # Exceptions: the planted one, its message and count.
        page.get_by_role("tab", name="Exceptions").click()
        page.wait_for_timeout(2500)
        server = web_read(web_ui, "/exceptions")["exceptions"]
        rows = table_rows(page)
        assert any("planted by tests/stock_tabs_locustfile.py" in " ".join(r) for r in rows), rows
        assert int(rows[0][0]) <= max(e["count"] for e in server), (rows, server)

        # Current ratio: the classes and their share, as /tasks has them.
        page.get_by_role("tab", name="Current ratio").click()
        ratios = web_read(web_ui, "/tasks")["per_class"]
        for name, ratio in ratios.items():
            page.get_by_text(f"{100 * ratio['ratio']:.1f}% {name}").first.wait_for(timeout=10000)

        # Download Data: the links answer with the server's CSV.
        page.get_by_role("tab", name="Download Data").click()
        link = page.get_by_role("link", name="Download requests CSV")
        href = urllib.request.urljoin(web_ui + "/", link.get_attribute("href"))
        with urllib.request.urlopen(urllib.request.Request(href, headers=auth_headers(href)), timeout=10) as r:
            assert "blocking /api/work" in r.read().decode()

        # Logs: a line of the server's /logs.
        page.get_by_role("tab", name="Logs").click()
        line = next(line for line in web_read(web_ui, "/logs")["master"] if "All users spawned" in line)
        page.get_by_text(line.split("] ", 1)[-1][:60], exact=False).first.wait_for(timeout=10000)

        # Workers: the master's worker, its state and its users, as /stats/requests has them.
        page.get_by_role("tab", name="Workers").click()
        page.wait_for_timeout(2500)
        workers = {w["id"]: w for w in web_read(web_ui, "/stats/requests")["workers"]}
        rows = table_rows(page)
        assert [r[0] for r in rows] == list(workers), (rows, workers)
        assert rows[0][1] == workers[rows[0][0]]["state"] and int(rows[0][2]) == workers[rows[0][0]]["user_count"] == 9, (rows, workers)

        # Reset and Stop reach the server (POST in Locust 2.47; the library sends GET: postOnlyRequests.js).
        page.get_by_role("button", name="Reset").click()
        wait_until(
            "reset",
            lambda: (
                sum(s["num_requests"] for s in web_read(web_ui, "/stats/requests")["stats"] if s["name"] != "Aggregated")
                < sum(after.values()) / 2
            ),
        )
        page.get_by_role("button", name="Stop").click()
        wait_until("stopped", lambda: web_read(web_ui, "/stats/requests")["state"] == "stopped")
