"""The benchmark, ``python -m liveness_lab bench`` (``scripts/bench.sh``): every mode of the service
against Little's law on this machine (``run``: the options and the order of the measurements; ``host``,
``build``, ``jvm``, ``load``, ``scenario``, ``memory``, ``progress``: what it runs), its table and chart
(``report``, ``heap``), the connections it holds (``hold_connections``). No cluster and no Locust; not in
the Locust image. Imports ``base``.
"""
