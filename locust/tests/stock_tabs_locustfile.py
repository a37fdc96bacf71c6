"""locust/locustfile.py as Locust loads it, plus one user class whose task raises, so that every stock tab of
the web UI has something of the server's to show, the Exceptions tab too (tests/test_stock_tabs.py). Its
name says it is planted; never used outside that test.

Usage (from locust/): locust -f tests/stock_tabs_locustfile.py ...   (tests/test_stock_tabs.py starts it)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from locust import User, constant, task  # noqa: E402

from locustfile import *  # noqa: E402,F401,F403  (the user classes and the tabs, as Locust loads them)


class PlantedFailureUser(User):
    """Raises in its task, once a second: an entry of the Exceptions tab."""

    wait_time = constant(1)

    @task
    def planted(self):
        raise RuntimeError("planted by tests/stock_tabs_locustfile.py")
