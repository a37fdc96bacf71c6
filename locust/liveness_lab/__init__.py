"""liveness-lab's Locust side: the variant table, the Kubernetes reader, the Pods tab and the load shape.

Imported by ``locust/locustfile.py`` (Locust puts the locustfile's folder on ``sys.path``) and by the
report modules under ``locust/report/``.
"""
