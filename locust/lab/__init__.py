"""The lab (issue 13): the probe advice people argue about, each as a scenario measured on the kind cluster.

- ``lab.catalogue``: the scenario files in ``locust/scenarios/`` (one YAML file each), loaded and checked;
- ``lab.judge``: a finished ``scripts/demo.sh`` report folder against its scenario's prediction;
- ``lab.matrix``: ``matrix.md`` and a self-contained ``matrix.html`` over a lab run's folders;
- ``python -m lab``: the command line ``scripts/lab.sh`` calls.
"""
