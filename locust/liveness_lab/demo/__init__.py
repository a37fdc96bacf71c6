"""The scripted run, ``python -m liveness_lab demo`` (``scripts/demo.sh``): ``run`` swarms the chosen
variants with a fixed timetable and builds its report; ``options`` holds its options and resolves them,
with the release's defaults, to the plan it runs; ``record`` writes ``run.json`` and the timeline as it
goes; ``release`` reads the release as it runs; ``cluster_lock`` makes the run the cluster's only
scripted run; ``no_other_load`` makes it the only load (the in-cluster Locust not swarming, the pods
idle); ``load_source`` chooses where the load comes from; ``locust_master`` drives the release's own
Locust master when the load comes from the cluster.
Imports ``report`` and ``base``.
"""
