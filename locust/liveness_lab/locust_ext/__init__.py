"""What ``locust/locustfile.py`` adds to Locust: the Pods tab (``pods_tab``), the Live tab's data
(``live_view``), the stats history the master serves to a scripted run (``stats_history``), the
scripted run's load shape (``demo_shape``) and who may use the web UI (``ui_auth``: the release's token).
Runs inside Locust (master and workers, in the cluster or on the host); imports ``base`` only.
"""
