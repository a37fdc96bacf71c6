"""Judges one finished scripted run (a scripts/demo.sh report folder) against its scenario's prediction.

The figures are the report's own (report.verdict.judge: restarts and their attribution, liveness events,
the kill window from the probe settings run.json recorded, Ready counts, Locust's totals, the CPU check);
nothing is derived again here. Each prediction becomes one line: what was predicted, what was measured,
held or not. The scenario's outcome:

- "held": every prediction held;
- "not held": at least one did not (the evidence says which and by how much);
- "cannot tell": the run was disturbed (pods replaced under it, the API gone) or shows CPU starvation,
  or a prediction could not be measured (no probe settings recorded): the run says nothing either way.

lab.json in the report folder keeps the judgement for the matrix.
"""

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from liveness_lab.report.verdict import VariantAnalysis, Verdict, judge, load_run

from .catalogue import COUNT, Scenario

HELD, NOT_HELD, CANNOT_TELL = "held", "not held", "cannot tell"
# The hold's median requests/s may fall this far short of users x rate and still count as "offered".
THROUGHPUT_SHARE = 0.9


@dataclass
class Line:
    """One prediction of one variant, judged."""

    variant: str
    key: str
    predicted: str
    measured: str
    held: bool | None  # None: could not be measured

    def text(self) -> str:
        mark = {True: "held", False: "NOT held", None: "not measured"}[self.held]
        return f"{self.variant} {self.key}: predicted {self.predicted}, measured {self.measured}: {mark}"


@dataclass
class Judgement:
    scenario: str
    folder: str
    outcome: str
    lines: list[Line]
    why_cannot_tell: list[str]
    report_verdict: str  # demo.sh's own verdict on its claim, for reference
    figures: dict  # per variant: the numbers the matrix shows

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict):
        return cls(**{**d, "lines": [Line(**x) for x in d["lines"]]})


def count_holds(expr, n: int) -> bool:
    """A count prediction (a number, or a comparison such as ">=1") against N."""
    op, number = COUNT.match(str(expr).strip()).groups()
    k = int(number)
    return {None: n == k, "==": n == k, ">=": n >= k, "<=": n <= k, ">": n > k, "<": n < k}[op]


def throughput(a: VariantAnalysis) -> float | None:
    """Median requests/s of the variant during the hold (its first 10 s left out, as for latency)."""
    ph = a.phases
    rps = sorted(s.rps for s in a.series if ph.hold + 10 <= s.t <= ph.stop)
    return rps[len(rps) // 2] if rps else None


def not_ready_during_load(a: VariantAnalysis) -> list[float]:
    """Seconds after the load start at which some pod of the variant was not Ready, load to quiet."""
    ph = a.phases
    return [round(t - ph.start, 1) for t, ready, total in a.pods.ready if ph.start <= t <= ph.quiet and ready < total]


# How Locust's FastHttpUser names an answer with status 429 in its failures.
SHED_ERROR = re.compile(r"\bcode=429\b")


def shed(a: VariantAnalysis) -> int:
    """Requests the variant answered 429 (demo.max-in-flight's load shedding)."""
    return sum(n for error, n in a.figures.errors if SHED_ERROR.search(error))


def judge_line(key: str, expected, a: VariantAnalysis, result: Verdict, run: dict) -> Line:
    v = a.variant
    restarted = sorted(p for p, n in a.pods.restarts_by_pod.items() if n > 0)
    if key == "restarts":
        n = len(a.pods.restarts)
        per_pod = ", ".join(f"{p.rsplit('-', 1)[-1]} {k}" for p, k in a.pods.restarts_by_pod.items())
        return Line(v, key, str(expected), f"{n} ({per_pod})", count_holds(expected, n))
    if key == "restarted_pods":
        held = len(restarted) == len(a.pods.pods) > 0 if expected == "all" else count_holds(expected, len(restarted))
        return Line(v, key, str(expected), f"{len(restarted)} of {len(a.pods.pods)}", held)
    if key == "kill_reason":
        if not a.pods.restarts:
            return Line(v, key, expected, "no restart to attribute", True)
        bad = [r for r in a.pods.restarts if not r.after_liveness_failure or r.reason == "OOMKilled"]
        measured = f"{len(a.pods.restarts) - len(bad)} of {len(a.pods.restarts)} restarts after liveness failures, not OOMKilled"
        if a.pods.evicted:
            measured += f"; evicted: {', '.join(a.pods.evicted)}"
        return Line(v, key, expected, measured, not bad and not a.pods.evicted)
    if key == "kill_timing":
        window = result.kill_windows.get(v)
        first = a.first_liveness_kill_s
        if window is None:
            return Line(v, key, expected, "no liveness probe settings recorded in run.json", None)
        if first is None:
            return Line(v, key, f"first kill at {window.low:.0f}-{window.high:.0f} s", "no liveness kill", False)
        return Line(v, key, f"first kill at {window.low:.0f}-{window.high:.0f} s", f"+{first:.1f} s", window.contains(first))
    if key == "failures":
        f = a.figures
        return Line(v, key, str(expected), f"{f.failures} of {f.requests} ({f.failure_ratio:.1%})", count_holds(expected, f.failures))
    if key == "shed":
        n = shed(a)
        return Line(v, key, str(expected), f"{n} of {a.figures.requests} answered 429", count_holds(expected, n))
    if key == "failures_not_shed":
        n = a.figures.failures - shed(a)
        other = ", ".join(f"{error} x{k}" for error, k in a.figures.errors if not SHED_ERROR.search(error))
        return Line(v, key, str(expected), f"{n}" + (f" ({other})" if other else ""), count_holds(expected, n))
    if key == "liveness_failures":
        n = len(a.probes.liveness_failures)
        return Line(v, key, str(expected), str(n), count_holds(expected, n))
    if key == "unhealthy":
        return Line(v, key, str(expected), str(a.probes.unhealthy), count_holds(expected, a.probes.unhealthy))
    if key == "ready":
        seen = not_ready_during_load(a)
        measured = f"NotReady in {len(seen)} snapshot(s)" + (f", from +{seen[0]:.0f} s to +{seen[-1]:.0f} s" if seen else "")
        snapshots_ok = len(a.pods.ready) > 0
        if not snapshots_ok:
            return Line(v, key, expected, "no pod snapshots", None)
        return Line(v, key, expected, measured, (not seen) if expected == "throughout" else bool(seen))
    if key == "recovers":
        r = a.recovery_s
        return Line(
            v,
            key,
            "all Ready within the quiet period",
            "not within the quiet period" if r is None else f"all Ready {r:.0f} s after load stop",
            r is not None,
        )
    if key == "throughput":
        offered = float(run["users_per_variant"]) * float(run["rate_per_user"])
        got = throughput(a)
        if got is None:
            return Line(v, key, f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s", "no samples during the hold", None)
        return Line(v, key, f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s", f"median {got:.1f} req/s", got >= THROUGHPUT_SHARE * offered)
    raise ValueError(f"unknown prediction {key!r}")  # the loader refuses these


def figures(a: VariantAnalysis) -> dict:
    """The few numbers the matrix shows per variant."""
    f = a.figures
    return {
        "pods": len(a.pods.pods),
        "restarts": len(a.pods.restarts),
        "requests": f.requests,
        "failures": f.failures,
        "shed": shed(a),
        "firstLivenessKillS": a.first_liveness_kill_s,
        "livenessFailures": len(a.probes.liveness_failures),
        "unhealthy": a.probes.unhealthy,
        "recoveryS": a.recovery_s,
        "holdRps": throughput(a),
    }


def judge_scenario(scenario: Scenario, folder) -> Judgement:
    """The scenario's predictions against the report folder FOLDER (demo.sh's files; the report itself
    need not be built)."""
    folder = Path(folder)
    data = load_run(folder)
    result = judge(data)
    lines, why = [], list(result.disturbances)
    if result.cpu.starved:
        why += [f"CPU starvation: {w}" for w in result.cpu.warnings]
    for variant, expected in scenario.predict.items():
        a = result.analyses.get(variant)
        if a is None:
            why.append(f"{variant} was not in the run (run.json variants: {data.run['variants']})")
            continue
        lines += [judge_line(key, value, a, result, data.run) for key, value in expected.items()]
    why += [f"{x.variant} {x.key}: {x.measured}" for x in lines if x.held is None]
    if why:
        outcome = CANNOT_TELL
    elif all(x.held for x in lines):
        outcome = HELD
    else:
        outcome = NOT_HELD
    return Judgement(
        scenario=scenario.name,
        folder=str(folder),
        outcome=outcome,
        lines=lines,
        why_cannot_tell=why,
        report_verdict=result.verdict,
        figures={v: figures(a) for v, a in result.analyses.items()},
    )


def write(judgement: Judgement, folder) -> Path:
    path = Path(folder) / "lab.json"
    path.write_text(json.dumps(judgement.to_json(), indent=2) + "\n")
    return path


def read(folder) -> Judgement:
    return Judgement.from_json(json.loads((Path(folder) / "lab.json").read_text()))


def repeat_index(folder_name: str) -> int:
    """1 for `baseline`, i for `baseline-<i>` (lab.sh's --repeat folders)."""
    m = re.search(r"-(\d+)$", folder_name)
    return int(m.group(1)) if m else 1
