"""The lab (issue 13): the probe advice people argue about, each as a scenario measured on the kind cluster.

- ``catalogue``: the scenario files in ``locust/liveness_lab/lab/scenarios/`` (one YAML file each, read by base.scenario);
- ``judge``: a finished ``scripts/demo.sh`` report folder against its scenario's prediction;
- ``matrix``: ``matrix.md`` and a self-contained ``matrix.html`` over a lab run's folders;
- ``runner``: the lab over the cluster, ``python -m liveness_lab lab`` (what ``scripts/lab.sh`` runs);
- ``__main__``: ``python -m liveness_lab.lab``, the catalogue's and the judge's own command line;
- ``scenarios/``: the catalogue, one YAML file per scenario (data only: adding one needs no code).
"""
