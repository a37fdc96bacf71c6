"""What ``locust/locustfile.py`` adds to Locust: the Pods tab (``pods_tab``), the Live tab's data
(``live_view``), the stats history the master serves to a scripted run (``stats_history``) and the
scripted run's load shape (``demo_shape``). Runs inside Locust (master and workers, in the cluster or on
the host); imports ``base`` only.
"""
