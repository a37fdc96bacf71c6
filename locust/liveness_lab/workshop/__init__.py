"""Workshop mode: the Workshop tab of the Locust web UI, with guided steps whose self-checks judge what is
measured (issue 40).

- ``course``: the steps, one YAML file each in ``workshop/steps/``, each naming the lab's scenario whose
  prediction is its check (read from ``lab/scenarios/``: data, not the lab's code), loaded and checked;
- ``change``: a step's change to a Deployment's container, and whether the release runs it;
- ``check``: a step's self-check on the measured window (the swarm on a settled release): the run's facts
  (``report.facts``) judged live by the lab's own judge (``report.predictions``);
- ``progress``: what a participant has done, kept in a ConfigMap of the release's namespace;
- ``cluster``: the release's own Deployments and that ConfigMap through the API (the chart's workshop Role);
- ``tab``: the master's side: the checks every few seconds, the JSON and the actions of the tab;
- ``room``: the instructor's table over every namespace with the workshop's label
  (``python -m liveness_lab workshop``, ``scripts/workshop.sh``).

Runs in the Locust master (the image ships it, with ``report`` and the scenario files), and on the host for
the instructor. Imports ``base``, ``report`` and ``locust_ext``.
"""
