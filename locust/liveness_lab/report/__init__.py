"""The scripted run's evidence: ``recorder`` writes a timeline of pods and events while Locust swarms,
``verdict`` judges it, ``build`` turns it with Locust's stats history into ``report.html``, PNG plots and
``summary.md``. Driven by ``scripts/demo.sh``; tested on recorded fixtures in ``locust/tests``.
"""
