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

from liveness_lab.base.scenario import COUNT, THROUGHPUT_SHARE, Scenario
from liveness_lab.report.settings import CLOCK_SLACK_S, KillWindow, ProbeSettings
from liveness_lab.report.verdict import VariantAnalysis, Verdict, added_by_actions, judge, load_run

HELD, NOT_HELD, CANNOT_TELL = "held", "not held", "cannot tell"


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


def action_kill_window(probe: ProbeSettings) -> KillWindow:
    """When the first liveness kill may come after an action that makes every check fail: (F-1)P+T to
    FP+T, as from the load start (report.settings.kill_window), with T more early slack, because a check
    that fails at once (a downstream refusing connections: 503 in milliseconds) does not wait out T."""
    p, t, f = probe.period_s, probe.timeout_s, probe.failure_threshold
    return KillWindow((f - 1) * p + t, f * p + t, CLOCK_SLACK_S + t, CLOCK_SLACK_S, probe)


def first_kill_after_action(a: VariantAnalysis, result: Verdict) -> float | None:
    """Seconds from the first action to the variant's first liveness kill after it; None without either."""
    if not result.actions:
        return None
    start = result.actions[0].t
    kills = [k.t for k in a.probes.liveness_kills if k.t >= start - CLOCK_SLACK_S]
    return round(min(kills) - start, 1) if kills else None


def recovery_after_actions(a: VariantAnalysis, result: Verdict) -> float | None:
    """Seconds from the last action's rollout done until every pod of the variant is Ready and stays so to
    the end of the recording; None when that never happens (or nothing was rolled out)."""
    if not result.actions or result.actions[-1].done is None:
        return None
    end = result.actions[-1].done
    after = [(t, r, n) for t, r, n in a.pods.ready if t >= end]
    for i, (t, _, total) in enumerate(after):
        if total and all(r == n and n for _, r, n in after[i:]):
            return round(max(0.0, t - end), 1)
    return None


def during_load(a: VariantAnalysis) -> list[tuple[float, int, int]]:
    """The variant's (t, Ready, pods) snapshots from the load start to the load stop, the state at the load
    start first (the last snapshot before it, moved to it): a snapshot holds until the next one."""
    ph = a.phases
    before = [x for x in a.pods.ready if x[0] < ph.start]
    inside = [x for x in a.pods.ready if ph.start <= x[0] <= ph.stop]
    return ([(ph.start, *before[-1][1:])] if before else []) + inside


def ready_share(a: VariantAnalysis) -> float | None:
    """Percent of the variant's pod-seconds Ready during the load, each snapshot weighted by the time to
    the next one; None without snapshots."""
    snaps = during_load(a)
    if not snaps:
        return None
    ready = total = 0.0
    for (t, r, n), nxt in zip(snaps, [*snaps[1:], (a.phases.stop, 0, 0)], strict=True):
        ready += r * (nxt[0] - t)
        total += n * (nxt[0] - t)
    return round(100 * ready / total, 1) if total > 0 else None


def longest_not_ready(a: VariantAnalysis) -> float | None:
    """The longest stretch in seconds, during the load, in which the variant had no Ready pod (its Service no
    endpoint); None without snapshots."""
    snaps = during_load(a)
    if not snaps:
        return None
    longest, since = 0.0, None
    for t, r, _ in [*snaps, (a.phases.stop, 1, 1)]:
        if r == 0 and since is None:
            since = t
        elif r > 0 and since is not None:
            longest, since = max(longest, t - since), None
    return round(longest, 1)


def throttled_pct(a: VariantAnalysis, result: Verdict) -> float | None:
    """Percent of CFS periods throttled over the run, the variant's most throttled pod; None when the
    recorder could not read the kubelet's counters."""
    found = [share for pod, share in result.cpu.throttled.items() if pod in a.pods.pods]
    return round(100 * max(found), 1) if found else None


def added_pods(a: VariantAnalysis, result: Verdict) -> list[str] | None:
    """The pods an action added to the variant; None when no action raised its replicas."""
    if not any(x.target == a.variant and x.replicas for x in result.actions):
        return None
    return added_by_actions(a.pods, a.variant, result.actions)


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
    if key == "kill_timing" and expected == "from-action":
        if not result.actions:
            return Line(v, key, expected, "no action recorded in the timeline", None)
        if a.settings is None or a.settings.liveness is None:
            return Line(v, key, expected, "no liveness probe settings recorded in run.json", None)
        window = action_kill_window(a.settings.liveness)
        first = first_kill_after_action(a, result)
        at = f" (+{result.actions[0].t - a.phases.start:.0f} s: {result.actions[0].what})"
        predicted = f"first kill {window.low:.0f}-{window.high:.0f} s after the first action{at}"
        if first is None:
            return Line(v, key, predicted, "no liveness kill after it", False)
        return Line(v, key, predicted, f"{first:.1f} s after it", window.contains(first))
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
    if key == "recovery_after_actions":
        if not result.actions:
            return Line(v, key, str(expected), "no action recorded in the timeline", None)
        last = result.actions[-1]
        if last.done is None:
            return Line(v, key, str(expected), f"the last action ({last.what}) had not rolled out when the recording ended", None)
        r = recovery_after_actions(a, result)
        when = f" (rolled out at +{last.done - a.phases.start:.0f} s)"
        if r is None:
            return Line(v, key, f"{expected} s after the last action{when}", "not Ready to the end of the recording", False)
        return Line(v, key, f"{expected} s after the last action{when}", f"all Ready {r:.0f} s after it", count_holds(expected, round(r)))
    if key in ("added_restarts", "added_liveness_failures"):
        added = added_pods(a, result)
        if added is None:
            return Line(v, key, str(expected), f"no recorded action raised {v}'s replicas", None)
        if key == "added_restarts":
            n = sum(1 for r in a.pods.restarts if r.pod in added)
        else:
            n = sum(1 for x in a.probes.liveness_failures if x.pod in added)
        return Line(v, key, str(expected), f"{n} ({len(added)} pod(s) added)", count_holds(expected, n))
    if key == "throttled_pct":
        pct = throttled_pct(a, result)
        if pct is None:
            return Line(v, key, f"{expected} %", "no CFS throttling counters recorded (nodes/proxy not readable?)", None)
        return Line(v, key, f"{expected} %", f"{pct:.0f} % of periods", count_holds(expected, round(pct)))
    if key == "ready_share_pct":
        share = ready_share(a)
        if share is None:
            return Line(v, key, f"{expected} %", "no pod snapshots during the load", None)
        return Line(v, key, f"{expected} %", f"{share:.0f} % of pod-seconds Ready", count_holds(expected, round(share)))
    if key == "longest_not_ready_s":
        longest = longest_not_ready(a)
        if longest is None:
            return Line(v, key, f"{expected} s", "no pod snapshots during the load", None)
        return Line(v, key, f"{expected} s", f"{longest:.0f} s without a Ready pod", count_holds(expected, round(longest)))
    if key == "throughput":
        offered = float(run["users_per_variant"]) * float(run["rate_per_user"])
        got = throughput(a)
        if got is None:
            return Line(v, key, f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s", "no samples during the hold", None)
        return Line(v, key, f">= {THROUGHPUT_SHARE:.0%} of {offered:g} req/s", f"median {got:.1f} req/s", got >= THROUGHPUT_SHARE * offered)
    raise ValueError(f"unknown prediction {key!r}")  # the loader refuses these


def figures(a: VariantAnalysis, result: Verdict | None = None) -> dict:
    """The few numbers the matrix shows per variant (with RESULT, those that read the actions and the
    throttling too)."""
    f = a.figures
    more = {}
    if result is not None:
        added = added_pods(a, result)
        more = {
            "firstKillAfterActionS": first_kill_after_action(a, result),
            "recoveryAfterActionsS": recovery_after_actions(a, result),
            "addedPods": None if added is None else len(added),
            "addedRestarts": None if added is None else sum(1 for r in a.pods.restarts if r.pod in added),
            "addedLivenessFailures": None if added is None else sum(1 for x in a.probes.liveness_failures if x.pod in added),
            "throttledPct": throttled_pct(a, result),
            "readySharePct": ready_share(a),
            "longestNotReadyS": longest_not_ready(a),
        }
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
    } | more


def judge_scenario(scenario: Scenario, folder) -> Judgement:
    """The scenario's predictions against the report folder FOLDER (demo.sh's files; the report itself
    need not be built)."""
    folder = Path(folder)
    data = load_run(folder)
    result = judge(data)
    lines, why = [], list(result.disturbances)
    # cpu_check machine: the variants' own throttling, probe failures and latency are the scenario's subject.
    starvation = result.cpu.machine_warnings if scenario.cpu_check == "machine" else result.cpu.warnings
    why += [f"CPU starvation: {w}" for w in starvation]
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
        figures={v: figures(a, result) for v, a in result.analyses.items()},
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
