"""liveness-lab's Locust side: the variant table, the Kubernetes reader, the Pods tab and the load shape.

Imported by ``locust/locustfile.py`` (Locust puts the locustfile's folder on ``sys.path``) and by the
report modules under ``locust/report/``.
"""

# The latency each request asks for when nobody says (ms): the default of the locustfile's --latency-ms,
# of scripts/demo.sh, and what the report assumes for an old run.json without latency_ms. The same
# number as the service's own default (DemoProperties) and the chart's latencyMs; each runtime has one.
DEFAULT_LATENCY_MS = 1000
