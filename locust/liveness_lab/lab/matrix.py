"""The lab's matrix over one lab folder (scripts/lab.sh's reports/lab-<ts>/): one row per scenario, in
catalogue order, with what was predicted, what was measured (the first run's figures), how often the
prediction held (k of N with --repeat; a race's predictions as the share of runs they held in, with
its 95 % interval), how long a run took, a small timeline plot (report.build's
plot_small) and links to each run's own report. Writes matrix.md (plots as PNG files beside it) and a
self-contained matrix.html (plots inline).
"""

import base64
import html
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from liveness_lab.base.scenario import Scenario
from liveness_lab.base.variants import stack_of
from liveness_lab.report.build import plot_small
from liveness_lab.report.document import STYLE
from liveness_lab.report.facts import run_facts
from liveness_lab.report.predictions import NOTHING
from liveness_lab.report.recording import load_run

from . import judge, ledger
from .catalogue import CATALOGUE, load_catalogue

# How the matrix names a stack (chart/values.yaml serviceModes).
STACK_NAMES = {"webflux": "WebFlux (Reactor Netty)", "servlet": "Spring MVC (Tomcat)"}

OUTCOME_COLOURS = {judge.HELD: "#2ca02c", judge.NOT_HELD: "#d62728", judge.CANNOT_TELL: "#ff7f0e"}


@dataclass
class Row:
    name: str
    scenario: Scenario | None
    runs: list[tuple[Path, judge.Judgement]]  # (folder, judgement), in folder order
    plot: Path | None
    seconds: list[int]
    kubernetes: str | None = None  # the release its runs ran on: a folder's runs of one scenario on two are two rows
    tally: str | None = None  # the ledger's count under the scenario's current prediction (ledger.Version.text)

    @property
    def key(self) -> str:
        """The row's name in files: the scenario, and the release when its runs recorded one."""
        return f"{self.name}-{self.kubernetes}" if self.kubernetes else self.name

    @property
    def held(self) -> int:
        return sum(j.outcome == judge.HELD for _, j in self.runs)

    def outcome(self) -> str:
        """ "held 3 of 3", "not held (1 of 3 held)", "cannot tell" ..."""
        n, k = len(self.runs), self.held
        tells = [j for _, j in self.runs if j.outcome != judge.CANNOT_TELL]
        if not tells:
            return judge.CANNOT_TELL
        if k == n:
            return f"held {k} of {n}" if n > 1 else judge.HELD
        return f"not held ({k} of {n} held)" if n > 1 else judge.NOT_HELD

    def race(self) -> list[str]:
        """The race judged over the row's runs against its band (judge.judge_race): "race blocking
        restarted_pods: held in 9 of 10 runs (60-98 % at 95 %), predicted 75-100 %: held", and how to run the
        number it is judged at while fewer runs measured it."""
        if self.scenario is None or self.scenario.race is None:
            return []
        race = self.scenario.race
        result = judge.judge_race(race, [w for _, j in self.runs if (w := judge.race_won(j.lines, j.race)) is not None])
        command = f" (scripts/lab.sh --only {self.name} --repeat {race.runs})" if result.state == judge.NOT_YET else ""
        return [result.text + command]

    def colour(self) -> str:
        """Green when every run held, orange when none could tell, red otherwise."""
        outcomes = {j.outcome for _, j in self.runs}
        return OUTCOME_COLOURS[outcomes.pop() if len(outcomes) == 1 else judge.NOT_HELD]


def predicted(s: Scenario | None) -> str:
    if s is None:
        return "(scenario file gone)"
    shown = lambda x: str(x).lower() if isinstance(x, bool) else str(x)  # noqa: E731 (as the file says it)
    race = lambda v, k: " (a race)" if s.in_race(v, k) else ""  # noqa: E731
    return "; ".join(f"{v}: " + ", ".join(f"{k} {shown(x)}{race(v, k)}" for k, x in p.items()) for v, p in s.predict.items())


def stack(s: Scenario | None, j: judge.Judgement) -> str:
    """The web stack the row ran on, from its variants' modes (chart/values.yaml serviceModes)."""
    names = s.variants if s else list(j.figures)
    found = dict.fromkeys(STACK_NAMES.get(stack_of(v), "?") for v in names)
    return " and ".join(found) or "?"


def where(row: Row) -> str:
    """The row's stack, and the Kubernetes release its runs ran on when they recorded it."""
    return stack(row.scenario, row.runs[0][1]) + (f", Kubernetes {row.kubernetes}" if row.kubernetes else "")


# The figures a scenario of the storms (actions, throttling, the back-off) adds, when its run has them.
MORE_FIGURES = (
    ("firstKillAfterActionS", "first kill {:.0f} s after the first action"),
    ("recoveryAfterActionsS", "all Ready {:.0f} s after the last action"),
    ("killsAfterActions", "{} liveness kill(s) after it"),
    ("addedPods", "{} pod(s) added"),
    ("addedRestarts", "{} restart(s) of them"),
    ("throttledPct", "throttled in {:.0f} % of periods"),
    ("throttledPeakPct", "{:.0f} % in its most throttled 15 s"),
    ("gcPausedBeforeKillsPct", "stopped for GC {:.0f} % or more of the time before each kill"),
    ("gcPausedBeforeFirstRestartPct", "stopped for GC {:.0f} % of the time before the first restart"),
    ("inFlightBeforeFirstRestart", "{:,} requests in flight before the first restart"),
    ("readySharePct", "Ready {:.0f} % of the time"),
    ("longestNotReadyS", "longest without a Ready pod {:.0f} s"),
    ("longestRestartWaitS", "longest wait from an exit to the next start {:.0f} s"),
    ("firstKillsSpreadS", "its pods' first kills within {:.0f} s"),
    ("vthreadsQueuedMax", "up to {} virtual threads queued"),
    ("killedBeforeStarted", "{} liveness kill(s) before the startup probe passed"),
)


def measured(j: judge.Judgement) -> str:
    """The first run's figures per variant: restarts, failures, first kill (and those of MORE_FIGURES the
    scenario predicts)."""
    parts = []
    for v, f in j.figures.items():
        kill = f" first kill +{f['firstLivenessKillS']:.0f} s," if f.get("firstLivenessKillS") is not None else ""
        more = "".join(f", {text.format(f[key])}" for key, text in MORE_FIGURES if wanted(j, v, key) and f.get(key) is not None)
        parts.append(f"{v}: {f['restarts']} restart(s),{kill} {f['failures']} of {f['requests']} failed, {f['unhealthy']} Unhealthy{more}")
    return "; ".join(parts)


# Which prediction keys make a figure worth showing (a scenario that predicts none of them shows none).
FIGURE_KEYS = {
    "firstKillAfterActionS": {"kill_timing"},
    "recoveryAfterActionsS": {"recovery_after_actions"},
    "killsAfterActions": {"kills_after_actions"},
    "addedPods": {"added_restarts", "added_liveness_failures"},
    "addedRestarts": {"added_restarts", "added_liveness_failures"},
    "throttledPct": {"throttled_pct"},
    "throttledPeakPct": {"throttled_peak_pct"},
    "gcPausedBeforeKillsPct": {"gc_paused_before_kills_pct"},
    "gcPausedBeforeFirstRestartPct": {"gc_paused_before_first_restart_pct"},
    "inFlightBeforeFirstRestart": {"in_flight_before_first_restart", "gc_paused_before_kills_pct", "gc_paused_before_first_restart_pct"},
    "readySharePct": {"ready_share_pct", "longest_not_ready_s"},
    "longestNotReadyS": {"ready_share_pct", "longest_not_ready_s"},
    "longestRestartWaitS": {"longest_restart_wait_s"},
    "firstKillsSpreadS": {"first_kills_spread_s"},
    "vthreadsQueuedMax": {"vthreads_queued"},
    "killedBeforeStarted": {"killed_before_started"},
}


def wanted(j: judge.Judgement, variant: str, figure: str) -> bool:
    """The run's judgement has a line of VARIANT for a prediction the FIGURE belongs to."""
    return any(x.variant == variant and x.key in FIGURE_KEYS[figure] for x in j.lines)


def missed(j: judge.Judgement) -> list[str]:
    """What a run's outcome rests on that did not hold (a race's lines are counted in Row.race instead)."""
    return [x.text() for x in j.lines if not x.held and x.state != NOTHING and not j.is_race(x)] + [
        f"cannot tell: {w}" for w in j.why_cannot_tell
    ]


def collect(folder: Path) -> list[Row]:
    folder = Path(folder)
    found: dict[tuple, list] = {}  # (scenario, release) -> its runs
    for path in sorted(folder.glob("*/lab.json")):
        j = judge.read(path.parent)
        found.setdefault((j.scenario, j.kubernetes), []).append((path.parent, j))
    try:
        catalogue = {s.name: s for s in load_catalogue(CATALOGUE)}
    except ValueError:  # a broken file must not cost the matrix of what ran
        catalogue = {}
    names = {name for name, _ in found}
    try:
        records = ledger.load(os.environ.get(ledger.LEDGER_ENV) or None)
    except (OSError, ValueError):  # a ledger that does not read must not cost the matrix either
        records = []
    order = list(catalogue) + sorted(names - set(catalogue))
    rows = []
    for name, release in sorted(found, key=lambda k: (order.index(k[0]), release_order(k[1]))):
        runs = sorted(found[(name, release)], key=lambda r: judge.repeat_index(r[0].name))
        seconds = []
        for run_folder, _ in runs:
            timing = run_folder / "timing.json"
            if timing.exists():
                seconds.append(int(json.loads(timing.read_text())["totalS"]))
        s = catalogue.get(name)
        tally = ledger.versions(records, s)[0].text() if s is not None else None
        rows.append(Row(name, s, runs, None, seconds, release, tally))
    return rows


def release_order(release: str | None) -> tuple:
    """v1.35.8 before v1.36.4 before v1.38.0-beta.0 (numbers, not text); unrecorded first."""
    return tuple(int(n) for n in re.findall(r"\d+", release or "")[:3])


def plot(row: Row, folder: Path) -> Path | None:
    """The first run's small timeline, as matrix-<scenario>[-<release>].png in the lab folder."""
    run_folder = row.runs[0][0]
    try:
        facts = run_facts(load_run(run_folder))
    except (OSError, ValueError, KeyError):
        return None
    path = folder / f"matrix-{row.key}.png"
    plot_small(facts.analyses, facts.phases, path)
    return path


def under(row: Row) -> list[str]:
    """The ledger's word on the row's scenario: its runs under the prediction in force, these included."""
    return [f"in the ledger, under this prediction: {row.tally}"] if row.tally else []


def duration(row: Row) -> str:
    if not row.seconds:
        return "-"
    mean = sum(row.seconds) / len(row.seconds)
    return f"{mean / 60:.1f} min" + (f" (mean of {len(row.seconds)})" if len(row.seconds) > 1 else "")


def render_markdown(rows: list[Row], folder: Path) -> str:
    lines = [
        "# liveness-lab: the probe lessons, measured",
        "",
        f"Lab run {folder.name}, matrix written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. "
        "Each row: the scenario's prediction (locust/liveness_lab/lab/scenarios/<name>.yaml), what the cluster did, and how often "
        "the prediction held. The measurement wins: a row that does not hold stays so in the ledger (locust/ledger/).",
        "",
        "| scenario | stack | setting | predicted | measured (first run) | outcome | time per run | plot | reports |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r.scenario
        title = f"**{r.name}**: {s.title}" if s else f"**{r.name}**"
        reports = " ".join(f"[{f.name}]({f.name}/report.html)" for f, _ in r.runs)
        image = f"![{r.name}]({r.plot.name})" if r.plot else "-"
        lines.append(
            f"| {title} | {where(r)} | {s.setting if s else ''} | {predicted(s)} | {measured(r.runs[0][1])} | "
            f"{'; '.join([r.outcome(), *r.race(), *under(r)])} | {duration(r)} | {image} | {reports} |"
        )
    details = []
    for r in rows:
        notes = [m for _, j in r.runs for m in missed(j)]
        if notes:
            details += ["", f"## {r.name}" + (f" on Kubernetes {r.kubernetes}" if r.kubernetes else ""), ""]
            details += [f"- {n}" for n in notes]
    return "\n".join(lines + details) + "\n"


def render_html(rows: list[Row], folder: Path) -> str:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>liveness-lab matrix</title>",
        f"<style>{STYLE}body{{max-width:1600px}}td{{vertical-align:top;font-size:90%}}td "
        f"img{{width:340px;max-width:none}}</style></head><body>",
        "<h1>liveness-lab: the probe lessons, measured</h1>",
        f"<p>Lab run {esc(folder.name)}. Each row: the scenario's prediction, what the cluster did, and how often the "
        "prediction held; hover a scenario for its lesson. Plots: requests/s per variant (failures/s dotted), load "
        "shaded grey, quiet blue; black dotted: liveness failure, dashed: kill, solid: restart; faint steps: Ready pods "
        "(right axis); each variant in its colour, as in report.html and the web UI's Live tab.</p>",
        "<table><tr><th>scenario</th><th>stack</th><th>predicted</th><th>measured (first run)</th><th>outcome</th>"
        "<th>time per run</th><th>timeline (first run)</th><th>reports</th></tr>",
    ]
    for r in rows:
        s = r.scenario
        lesson = esc(s.lesson) if s else ""
        sources = "<br>".join(esc(x) for x in s.sources) if s else ""
        image = ""
        if r.plot:
            data = base64.b64encode(r.plot.read_bytes()).decode("ascii")
            image = f"<img alt='{esc(r.name)}' src='data:image/png;base64,{data}'>"
        reports = "<br>".join(f"<a href='{esc(f.name)}/report.html'>{esc(f.name)}</a> ({esc(j.outcome)})" for f, j in r.runs)
        notes = "".join(f"<li>{esc(n)}</li>" for _, j in r.runs for n in missed(j))
        race = "".join(f"<br><small>race: {esc(x)}</small>" for x in r.race())
        parts.append(
            f"<tr><td title='{lesson}'><b>{esc(r.name)}</b><br>{esc(s.title if s else '')}<br><small>{esc(s.setting if s else '')}"
            f"</small><details><summary>lesson, sources</summary>{lesson}<br><small>{sources}</small></details></td>"
            f"<td>{esc(where(r))}</td><td>{esc(predicted(s))}</td>"
            f"<td>{esc(measured(r.runs[0][1]))}{'<ul>' + notes + '</ul>' if notes else ''}</td>"
            f"<td style='color:{r.colour()}'><b>{esc(r.outcome())}</b>{race}"
            f"{''.join(f'<br><small>{esc(x)}</small>' for x in under(r))}</td>"
            f"<td>{esc(duration(r))}</td>"
            f"<td>{image}</td><td>{reports}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "".join(parts)


def build(folder) -> tuple[Path, Path]:
    """matrix.md and matrix.html in FOLDER, over every <scenario>[-<i>]/lab.json below it."""
    folder = Path(folder)
    rows = collect(folder)
    for r in rows:
        r.plot = plot(r, folder)
    md, page = folder / "matrix.md", folder / "matrix.html"
    md.write_text(render_markdown(rows, folder))
    page.write_text(render_html(rows, folder))
    return md, page
