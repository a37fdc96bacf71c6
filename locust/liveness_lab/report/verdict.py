"""The demo's verdict on its claim, from a scripted run's facts (``report.facts``).

The claim (issue 5; issue 38 on Tomcat): under the same load every pod of a variant whose serving
threads block (blocking: an event loop; servlet: Tomcat's worker threads) is restarted, each restart a
liveness kill of its own (not a startup-probe kill, not OOMKilled, not an exit of its own; no pod
evicted), the first kill on time for the run's probe settings; every pod of a variant that never holds a
serving thread while it waits (reactive, servlet-async, servlet-virtual) has no restart and no
`Unhealthy` event, and its requests have no failure. Offloaded and virtual are reported as they fall; no
verdict is invented for them. The verdict is PASS, FAIL, or INCONCLUSIVE: no variant of either side was
in the run, or the run cannot tell (``RunFacts.cannot_tell``, the lab's rule too: pods replaced during it,
the API gone, the clocks apart, load the run did not offer, the machine busy over the line). A spared
variant's own probe failures or restarts are never a reason for INCONCLUSIVE: they fail the claim.

The first kill is timed against run.json's probe settings (``facts.kill_window``: the window and its
slack); a run recorded before run.json held them gets no timing check, and the report says so.
"""

from dataclasses import dataclass

from liveness_lab.base.variants import mode_of

from .facts import BLOCKING_MODES, NON_BLOCKING_MODES, RunData, RunFacts, VariantAnalysis, run_facts, variant_kill_window

EXIT_CODES = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}


@dataclass(frozen=True)
class Check:
    who: str
    ok: bool
    text: str


def expected(variant: str) -> str | None:
    """'killed', 'spared' or None (not judged): the claim's side of VARIANT, by its mode."""
    mode = mode_of(variant)
    return "killed" if mode in BLOCKING_MODES else "spared" if mode in NON_BLOCKING_MODES else None


def check_killed(a: VariantAnalysis) -> list[Check]:
    who = a.variant
    checks = [Check(who, bool(a.pods.pods), f"{who} pods observed: {len(a.pods.pods)}")]
    for pod, n in a.pods.restarts_by_pod.items():
        checks.append(Check(who, n >= 1, f"{pod} restarted {n} time(s) (needs >= 1)"))
    for r in a.pods.restarts:
        checks.append(Check(who, r.liveness, f"{r.pod} restart at +{r.t - a.phases.start:.0f}s, needs a liveness kill: {r.describe()}"))
    checks.append(Check(who, not a.pods.evicted, f"no {who} pod evicted ({', '.join(a.pods.evicted) or 'none'})"))
    return checks


def check_spared(a: VariantAnalysis) -> list[Check]:
    who = a.variant
    checks = [Check(who, bool(a.pods.pods), f"{who} pods observed: {len(a.pods.pods)}")]
    for pod, n in a.pods.restarts_by_pod.items():
        checks.append(Check(who, n == 0, f"{pod} restarted {n} time(s) (needs 0)"))
    checks.append(Check(who, a.probes.unhealthy == 0, f"{who} Unhealthy events during the run: {a.probes.unhealthy} (needs 0)"))
    checks.append(Check(who, a.figures.requests > 0, f"{who} requests served: {a.figures.requests}"))
    checks.append(Check(who, a.figures.failures == 0, f"{who} request failures: {a.figures.failures} (needs 0)"))
    return checks


def check_kill_timing(a: VariantAnalysis, run: dict) -> tuple[list[Check], list[str]]:
    """The first liveness kill of a variant the claim expects killed, against its window; or a note saying
    why it was not timed."""
    window = variant_kill_window(a, run)
    first = a.first_liveness_kill_s
    if run.get("settings") is None:
        return [], [
            "run.json records no probe settings (recorded before it did, or the API did not answer): the kill timing is not checked"
        ]
    if window is None:
        return [], [f"run.json records no liveness probe of {a.variant}: its kill timing is not checked"]
    if first is None:
        # No kill at all is the restart checks' business; here there is nothing to time.
        return [], [f"{a.variant}: no liveness kill event to time (window {window.describe()})"]
    pod = min(a.liveness_kills, key=lambda k: k.t).pod
    inside = window.contains(first)
    text = f"{pod} first liveness kill at +{first:.1f}s after load start, {'within' if inside else 'OUTSIDE'} {window.describe()}"
    return [Check(a.variant, inside, text)], []


@dataclass
class Verdict:
    """The verdict, its checks, and the facts it was given."""

    verdict: str
    checks: list[Check]
    notes: list[str]  # what was not checked, and why
    facts: RunFacts

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict:
        """verdict.json: the verdict, its checks and the figures (without the time series)."""
        f = self.facts
        return {
            "verdict": self.verdict,
            "checks": [{"who": c.who, "ok": c.ok, "text": c.text} for c in self.checks],
            "notes": self.notes,
            "disturbances": f.disturbances,
            "cannotTell": f.cannot_tell,
            "cpu": {
                "notes": f.cpu.notes,
                "signs": f.cpu.signs,
                "machineWarnings": f.cpu.machine_warnings,
                "starved": f.cpu.starved,
                "throttled": f.cpu.throttled,
            },
            "phases": vars(f.phases),
            "killWindows": {
                v: {"fromS": w.low, "toS": w.high, "earliestS": w.earliest_s, "latestS": w.latest_s} for v, w in f.kill_windows.items()
            },
            "variants": {v: a.to_json() for v, a in f.analyses.items()},
            "load": {"notes": f.load_notes, "variants": {v: x.to_json() for v, x in f.loads.items()}},
            "virtualThreads": {v: x.to_json() for v, x in f.schedulers.items()},
            "clock": f.clocks.to_json() if f.clocks else None,
            "actions": [vars(a) for a in f.actions],
        }


def judge(data: RunData) -> Verdict:
    """The run's facts, the claim's checks on them, and the verdict."""
    facts = run_facts(data)
    checks, notes = [], list(facts.notes)
    killed = [v for v in facts.analyses if expected(v) == "killed"]
    spared = [v for v in facts.analyses if expected(v) == "spared"]
    for v in killed:
        checks += check_killed(facts.analyses[v])
        timing, why_not = check_kill_timing(facts.analyses[v], facts.run)
        checks += timing
        notes += why_not
    for v in spared:
        checks += check_spared(facts.analyses[v])
    if facts.cannot_tell:
        verdict = "INCONCLUSIVE"
    elif any(not c.ok for c in checks):
        verdict = "FAIL"
    elif killed and spared:
        verdict = "PASS"
    else:
        verdict = "INCONCLUSIVE"
    return Verdict(verdict=verdict, checks=checks, notes=notes, facts=facts)
