"""The benchmark, ``python -m liveness_lab bench`` (``scripts/bench.sh``): every mode of the service
against Little's law on this machine (``run``), its table and chart (``report``), the idle connections
it holds (``hold_connections``). No cluster and no Locust; not in the Locust image. Imports ``base``.
"""
