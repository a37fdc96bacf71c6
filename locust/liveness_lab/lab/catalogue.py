"""The lab's scenario catalogue: one YAML file per scenario in locust/liveness_lab/lab/scenarios/, in the
format base.scenario reads and checks (its header lists the keys).

Usage (from locust/): python -m liveness_lab.lab --help
"""

from pathlib import Path

from liveness_lab.base import LAB_GROUPS
from liveness_lab.base.scenario import CATALOGUE, Scenario, ScenarioError, load_scenario
from liveness_lab.base.variants import stack_of

# What a run takes beyond its load (the rollout and settling, the report, the rollback), the means
# measured on 2 cores (docs/lab.md): 82 s for the eighteen remedies (2,418 s for the twelve on
# WebFlux, 1,209 for the six on Tomcat, less their loads); 130 s for the storms (their actions' rollouts
# and the recoveries they wait for: 48-267 s).
OVERHEAD_S = {"remedy": 82, "storm": 130}


def in_group(scenario: Scenario, group: str) -> bool:
    """SCENARIO is one of GROUP's (LAB_GROUPS): the storms, the remedies, or one stack's: every variant it
    swarms runs on that stack."""
    if group == "storms":
        return scenario.storm
    if group == "remedies":
        return not scenario.storm
    return all(stack_of(v) == group for v in scenario.variants)


def estimate_s(scenarios: list[Scenario], repeat: int = 1) -> int:
    """How long a lab run of SCENARIOS, REPEAT times, takes on 2 cores: their loads plus OVERHEAD_S each."""
    one = sum(s.minutes() * 60 + OVERHEAD_S["storm" if s.storm else "remedy"] for s in scenarios)
    return round(repeat * one)


def load_catalogue(folder=CATALOGUE, only: list[str] | None = None, quick: bool = False, group: str | None = None) -> list[Scenario]:
    """Every scenario in FOLDER (or those named in ONLY, in catalogue order; or the quick ones; or GROUP's:
    each narrows the others), by order then name. A name in ONLY without a file is an error listing the
    names there are."""
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
    if group:
        if group not in LAB_GROUPS:
            raise ScenarioError(folder, "--group", f"no group {group}; there are {', '.join(LAB_GROUPS)}")
        scenarios = [s for s in scenarios if in_group(s, group)]
    return scenarios
