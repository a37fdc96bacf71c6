"""Locust's stats history, served by the in-cluster master: ``GET /liveness-lab/stats-history?after=SEQ``.

A scripted run with ``--load cluster`` drives the chart's Locust master through its REST API and needs the
same ``locust_stats_history.csv`` that ``locust --csv ... --csv-full-history`` writes on the host (the
report reads its per-second rows: cumulative counts and the last 10 s percentiles per variant). Locust's
REST API has no such series (``/stats/requests`` is the state now, its percentiles over the whole run),
and its ``/stats/requests_full_history/csv`` only exists when the master writes a file from its start,
which would grow for as long as the pod lives. So the master keeps the rows itself: once a second, from
the master's start, a tick of rows made by Locust's own history writer
(``StatsCSVFileWriter._stats_history_data_rows``, full history: one row per request name plus
Aggregated), the last ``KEEP_S`` seconds of them in memory.

The answer is CSV: the header, then the rows of every tick numbered above SEQ, oldest first; its
``X-Stats-History-Seq`` header is the newest tick's number (the next ``after``), ``X-Stats-History-Now``
the master's clock (epoch seconds), so a client can tell how far it is from its own. A client asks with a
SEQ above any (e.g. ``after=9e18``) to learn where the ticks are now without rows.
"""

import csv
import io
import time
from collections import deque

from locust.stats import PERCENTILES_TO_REPORT, StatsCSV, StatsCSVFileWriter, get_readable_percentiles

ROUTE = "/liveness-lab/stats-history"
SEQ_HEADER = "X-Stats-History-Seq"
NOW_HEADER = "X-Stats-History-Now"
EVERY_S = 1.0  # Locust's CSV_STATS_INTERVAL_SEC: one row per name a second, as on the host
KEEP_S = 4 * 3600  # a client fetches every few seconds; this is only what a slow one may still get


class HistoryRows(StatsCSV):
    """Locust's stats history rows, written by Locust's own method into memory instead of a file."""

    full_history = True
    _stats_history_data_rows = StatsCSVFileWriter._stats_history_data_rows

    def __init__(self, environment, percentiles=PERCENTILES_TO_REPORT):
        super().__init__(environment, percentiles)
        # StatsCSVFileWriter's columns, which its __init__ (opening files) sets.
        self.stats_history_csv_columns = [
            "Timestamp",
            "User Count",
            "Type",
            "Name",
            "Requests/s",
            "Failures/s",
            *get_readable_percentiles(self.percentiles_to_report),
            "Total Request Count",
            "Total Failure Count",
            "Total Median Response Time",
            "Total Average Response Time",
            "Total Min Response Time",
            "Total Max Response Time",
            "Total Average Content Size",
        ]

    def header(self) -> str:
        out = io.StringIO()
        csv.writer(out).writerow(self.stats_history_csv_columns)
        return out.getvalue()

    def tick(self, now: float) -> str:
        out = io.StringIO()
        self._stats_history_data_rows(csv.writer(out), now)
        return out.getvalue()


class Ticks:
    """The numbered ticks (seq, csv text), the last KEEP of them."""

    def __init__(self, rows: HistoryRows, keep: int = int(KEEP_S / EVERY_S)):
        self.rows, self.seq = rows, 0
        self.ticks: deque[tuple[int, str]] = deque(maxlen=keep)

    def take(self, now: float) -> None:
        self.seq += 1
        self.ticks.append((self.seq, self.rows.tick(now)))

    def after(self, seq: int) -> tuple[str, int]:
        """The CSV (header and the rows of ticks above SEQ) and the newest tick's number."""
        return self.rows.header() + "".join(text for n, text in self.ticks if n > seq), self.seq


def install(environment) -> Ticks | None:
    """Adds the route to ENVIRONMENT's web UI (master or local runner) and takes a tick a second."""
    web_ui = environment.web_ui
    if web_ui is None:
        return None
    import gevent
    from flask import Blueprint, Response, request

    ticks = Ticks(HistoryRows(environment))

    def loop():
        while True:
            if environment.runner is not None:
                ticks.take(time.time())
            gevent.sleep(EVERY_S)

    blueprint = Blueprint("liveness_lab_stats_history", __name__)

    @blueprint.route(ROUTE)
    @web_ui.auth_required_if_enabled
    def stats_history():
        try:
            after = int(float(request.args.get("after", "0")))
        except ValueError:
            return Response("after: a tick number, e.g. after=0\n", status=400, mimetype="text/plain")
        text, seq = ticks.after(after)
        return Response(text, mimetype="text/csv", headers={SEQ_HEADER: str(seq), NOW_HEADER: f"{time.time():.3f}"})

    web_ui.app.register_blueprint(blueprint)
    gevent.spawn(loop)
    return ticks
