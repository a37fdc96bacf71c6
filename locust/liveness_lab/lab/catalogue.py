"""The lab's scenario catalogue: one YAML file per scenario in locust/liveness_lab/lab/scenarios/, in the
format base.scenario reads and checks (its header lists the keys).

Usage (from locust/): python -m liveness_lab.lab --help
"""

from pathlib import Path

from liveness_lab.base.scenario import Scenario, ScenarioError, load_scenario

CATALOGUE = Path(__file__).resolve().parent / "scenarios"


def load_catalogue(folder=CATALOGUE, only: list[str] | None = None, quick: bool = False) -> list[Scenario]:
    """Every scenario in FOLDER (or those named in ONLY, in catalogue order; or the quick ones), by order
    then name. A name in ONLY without a file is an error listing the names there are."""
    folder = Path(folder)
    scenarios = sorted((load_scenario(p) for p in folder.glob("*.yaml")), key=lambda s: (s.order, s.name))
    if only:
        names = {s.name for s in scenarios}
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ScenarioError(folder, "--only", f"no scenario {', '.join(unknown)}; there are {', '.join(s.name for s in scenarios)}")
        scenarios = [s for s in scenarios if s.name in only]
    if quick:
        scenarios = [s for s in scenarios if s.quick]
    return scenarios
