"""liveness-lab's Python: what Locust loads, the scripted run, the lab, the workshop and the bench, one
package each.

Each package imports only the packages below it (``tests/test_layers.py`` holds the tree to this):

- ``__main__``, ``cli``: ``python -m liveness_lab demo|lab|bench|workshop``, what ``scripts/demo.sh``,
  ``scripts/lab.sh``, ``scripts/bench.sh`` and ``scripts/workshop.sh`` exec into; the command line of all four;
- ``lab``: the lab, the probe advice people argue about as scenarios (``lab/scenarios/``, one YAML file
  each), each run as a scripted run and judged against its prediction;
- ``demo``: the scripted run: the release as it runs, the cluster lock, where the load comes from
  (Locust on this machine, or the release's own Locust master), a run to its report;
- ``workshop``: the Workshop tab's steps, checks and actions in the Locust master, and the instructor's table;
- ``report``: a run's evidence: the recorder's timeline, the run's facts (``facts``), the one judge of
  the lab's and the workshop's predictions (``predictions``), the demo's verdict (``verdict``), report.html;
- ``bench``: every mode of the service against Little's law, on this machine, with no cluster and no
  Locust (not in the Locust image);
- ``locust_ext``: what ``locustfile.py`` adds to Locust: the Pods and Live tabs, the stats history the
  master serves, the scripted run's load shape;
- ``base``: what every other package reads: the variant table, the cluster's coordinates, the
  Kubernetes reader, a container's probes, a scenario file, the countdown of a liveness kill, each
  restart's own cause, the variants' colours, the messages and exit codes of a command;
- ``rollclient``: a load client that never retries (stdlib only), for rolling updates.

The Locust image ships ``locustfile.py``, ``base``, ``locust_ext``, ``report`` and ``workshop``, and the
lab's scenario files as data (locust/Dockerfile).
"""
