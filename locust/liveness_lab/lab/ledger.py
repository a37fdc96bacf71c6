"""The lab's ledger: every judged run kept as data in the repository (``locust/ledger/``), and each
scenario's runs counted under the version of its prediction they were judged by.

A scenario's prediction is everything in its file that decides a run and its judgement (``Scenario.digest``:
values, variants, load, actions, kubelet, predict, race; not the prose). An edit to any of it is a new
version: its tally starts at 0 of 0, and the runs of the earlier versions stay in the ledger, counted under
theirs. A run counts for its version only when the scenario file was committed as it ran (git had no
change to the file against the run's commit: ``committed``); a run of an uncommitted prediction, or from a
copy without git, is kept and shown, but counted for no version.

Two files per run, ``<ledger>/<scenario>/<load start, UTC>-<kubernetes release>.json``, a few KiB: the
judgement (outcome, each prediction's line, why it could not tell, which lines are the race's), the
figures the matrix shows, the digest, the commit, the Kubernetes release, how busy the machine was; and
beside it ``.tar.xz``, the recording itself (RUN_FILES: run.json, the timeline, Locust's stats), some
10-30 KiB, from which the run is judged again (``rejudge``). ``scripts/lab.sh`` adds one per run;
``python -m liveness_lab.lab ledger`` prints the tallies.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import tarfile
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from liveness_lab.base import ROOT
from liveness_lab.base.scenario import Scenario
from liveness_lab.report.predictions import Line

from . import catalogue, judge

LEDGER = ROOT / "locust" / "ledger"
LEDGER_ENV = "LIVENESS_LAB_LEDGER"  # another folder (tests, a scratch pass)
FORMAT = 2  # 2: with the recording (ARCHIVE), which the records of format 1 were given once
ARCHIVE = ".tar.xz"
# What the recording keeps of a run's report folder: what report.recording.load_run reads.
RUN_FILES = ("run.json", "timeline.jsonl", "locust_stats.csv", "locust_stats_history.csv", "locust_failures.csv")


def committed(path: Path, commit: str | None) -> bool | None:
    """Whether the file at PATH, as it is now, is the one of COMMIT in its git checkout (tracked, no change
    against it): True or False; None where git cannot say (no git, not a checkout, no commit recorded)."""
    if not commit or commit == "unknown":
        return None
    path = Path(path).resolve()
    git = ["git", "-C", str(path.parent)]
    try:
        inside = subprocess.run([*git, "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, timeout=10)
        if inside.stdout.strip() != "true":
            return None
        tracked = subprocess.run([*git, "ls-files", "--error-unmatch", path.name], capture_output=True, timeout=10)
        if tracked.returncode != 0:
            return False
        same = subprocess.run([*git, "diff", "--quiet", commit, "--", path.name], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {0: True, 1: False}.get(same.returncode)


def record(result: judge.Judgement, scenario: Scenario, is_committed: bool | None) -> dict:
    """The ledger's record of one judged run."""
    return {
        "format": FORMAT,
        "scenario": result.scenario,
        "digest": result.digest or scenario.digest,
        "committed": is_committed,
        "outcome": result.outcome,
        "started": result.started,
        "startedUtc": None if result.started is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(result.started)),
        "commit": result.commit,
        "kubernetes": result.kubernetes,
        "busyPct": result.busy_pct,
        "lines": [{k: x.to_json()[k] for k in ("variant", "key", "predicted", "measured", "state")} for x in result.lines],
        "race": result.race,
        "whyCannotTell": result.why_cannot_tell,
        "demoVerdict": result.report_verdict,
        "figures": result.figures,
        "folder": Path(result.folder).name,
    }


def add(result: judge.Judgement, scenario: Scenario, ledger: Path | None = None) -> Path:
    """Writes RESULT's record into LEDGER (its own file; an existing one is never overwritten)."""
    folder = Path(ledger) if ledger is not None else LEDGER
    rec = record(result, scenario, committed(scenario.path, result.commit))
    stamp = rec["startedUtc"] or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = folder / scenario.name / f"{stamp.replace(':', '')}-{rec['kubernetes'] or 'unknown'}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while path.exists():
        n += 1
        path = path.with_name(f"{path.stem.split('.')[0]}.{n}.json")
    rec["archive"] = path.with_suffix(ARCHIVE).name
    archive(Path(result.folder), path.with_suffix(ARCHIVE))
    path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return path


def archive(folder: Path, path: Path) -> None:
    """The run's recording (RUN_FILES of FOLDER) as one xz tarball at PATH, the same bytes for the same files."""

    def plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
        return info

    with tarfile.open(path, "w:xz", preset=9 | lzma.PRESET_EXTREME) as tar:
        for name in RUN_FILES:
            if (folder / name).is_file():
                tar.add(folder / name, arcname=name, filter=plain)


def rejudge(record_path: Path, scenario: Scenario) -> judge.Judgement:
    """The run of the record at RECORD_PATH judged again, now, against SCENARIO's prediction, from its
    recording (a scratch folder, removed after)."""
    with tempfile.TemporaryDirectory(prefix="ledger-") as scratch:
        with tarfile.open(Path(record_path).with_suffix(ARCHIVE), "r:xz") as tar:
            tar.extractall(scratch, filter="data")
        return judge.judge_scenario(scenario, scratch)


def load(ledger: Path | None = None) -> list[dict]:
    """Every record of LEDGER, oldest first."""
    folder = Path(ledger) if ledger is not None else LEDGER
    records = [json.loads(p.read_text()) for p in sorted(folder.glob("*/*.json"))]
    return sorted(records, key=lambda r: (r.get("started") or 0, r["scenario"]))


@dataclass
class Version:
    """One version of a scenario's prediction and the runs judged by it."""

    digest: str
    runs: list[dict] = field(default_factory=list)  # committed runs, oldest first
    uncounted: int = 0  # runs judged by it from an uncommitted file, or where git could not say

    def count(self, outcome: str) -> int:
        return sum(r["outcome"] == outcome for r in self.runs)

    @property
    def since(self) -> str | None:
        return self.runs[0]["startedUtc"][:10] if self.runs and self.runs[0].get("startedUtc") else None

    def text(self) -> str:
        """ "held 3 of 3 since <date>", "held 1 of 3 (2 not held, 1 cannot tell)", "0 of 0" ..."""
        held, not_held, unknown = (self.count(o) for o in (judge.HELD, judge.NOT_HELD, judge.CANNOT_TELL))
        decided = held + not_held
        out = f"held {held} of {decided}" if decided else "0 of 0"
        extra = [f"{not_held} not held"] * bool(not_held) + [f"{unknown} cannot tell"] * bool(unknown)
        extra += [f"{self.uncounted} run(s) of an uncommitted prediction, not counted"] * bool(self.uncounted)
        return out + (f" ({', '.join(extra)})" if extra else "") + (f" since {self.since}" if self.since else "")


def race_text(version: Version, scenario: Scenario) -> str | None:
    """The scenario's race judged over VERSION's runs against its band (judge.judge_race); None without a race."""
    if scenario.race is None:
        return None
    won = [judge.race_won([Line(**x) for x in r["lines"]], r["race"]) for r in version.runs]
    return judge.judge_race(scenario.race, [w for w in won if w is not None]).text


def versions(records: list[dict], scenario: Scenario) -> tuple[Version, list[Version]]:
    """SCENARIO's current version (its file's digest now) and the earlier ones the ledger holds runs of,
    each with its own runs."""
    by: dict[str, Version] = {scenario.digest: Version(scenario.digest)}
    for r in records:
        if r["scenario"] != scenario.name:
            continue
        v = by.setdefault(r["digest"], Version(r["digest"]))
        if r.get("committed") is True:
            v.runs.append(r)
        else:
            v.uncounted += 1
    current = by.pop(scenario.digest)
    return current, list(by.values())


def report(records: list[dict], scenarios: list[Scenario]) -> list[str]:
    """A line per scenario, its current prediction's tally, then one per earlier version with runs."""
    out = []
    for s in scenarios:
        current, earlier = versions(records, s)
        out.append(f"{s.name} [{current.digest}]: {current.text()}")
        if (race := race_text(current, s)) is not None:
            out.append(f"  {race}")
        out += [f"  earlier prediction [{v.digest}]: {v.text()}" for v in earlier]
    return out


def rejudge_all(folder: Path | None, scenarios: list[Scenario], every: bool = True) -> tuple[list[str], int]:
    """Every record of FOLDER with its recording and its scenario's current prediction, judged again: a line
    per record, and how many now differ from their record (outcome or a line). EVERY: SCENARIOS is the whole
    catalogue, so a record of another scenario names one gone; else only SCENARIOS' records are read."""
    by_name, out, differ = {s.name: s for s in scenarios}, [], 0
    for path in sorted((Path(folder) if folder is not None else LEDGER).glob("*/*.json")):
        if not every and path.parent.name not in by_name:
            continue
        rec, s = json.loads(path.read_text()), by_name.get(path.parent.name)
        name = f"{path.parent.name}/{path.name}"
        if s is None or rec["digest"] != s.digest or not path.with_suffix(ARCHIVE).is_file():
            why = "no such scenario" if s is None else "judged by an earlier prediction" if rec["digest"] != s.digest else "no recording"
            out.append(f"{name}: {rec['outcome']}, not judged again ({why})")
            continue
        now = rejudge(path, s)
        lines = [{k: x.to_json()[k] for k in ("variant", "key", "predicted", "measured", "state")} for x in now.lines]
        same = now.outcome == rec["outcome"] and lines == rec["lines"]
        differ += not same
        changed = [f"    was: {a}\n    now: {b}" for a, b in zip(rec["lines"], lines, strict=False) if a != b]
        out.append(f"{name}: {rec['outcome']}, now {now.outcome}: {'the same' if same else 'DIFFERENT'}")
        out += changed
    return out, differ


# The documents' generated blocks: each between a BEGIN and an END line, written by `ledger --write` and
# checked by `ledger --check` (scripts/tests/test_docs.py): a table or a figure that differs from what the
# ledger gives is a test failure, never an edit by hand.
BEGIN = "<!-- ledger: {name} (python -m liveness_lab.lab ledger --write writes this block; do not edit it) -->"
END = "<!-- /ledger: {name} -->"
LAB_DOC = ROOT / "docs" / "lab.md"
README = ROOT / "README.md"
# A cell shows this many of a version's runs, the latest.
SHOWN_RUNS = 5
OUTCOME_WORDS = {judge.HELD: "held", judge.NOT_HELD: "**not held**", judge.CANNOT_TELL: "cannot tell"}


def short(measured: str) -> str:
    """A line's measured value without its detail: "2 (hm9lj 2; first ...)" -> "2"."""
    return measured.split(" (")[0].split("; ")[0]


def measured_cell(runs: list[dict]) -> str:
    """Per prediction, its measured value run by run (the latest SHOWN_RUNS), a value that did not hold in
    bold; then each run's date, outcome, Kubernetes release and how busy the machine was."""
    runs = runs[-SHOWN_RUNS:]
    keys: dict[tuple[str, str], str] = {}
    for r in runs:
        for x in r["lines"]:
            keys.setdefault((x["variant"], x["key"]), x["predicted"])
    parts = []
    for (variant, key), predicted in keys.items():
        values = []
        for r in runs:
            x = next((y for y in r["lines"] if (y["variant"], y["key"]) == (variant, key)), None)
            value = "-" if x is None else short(x["measured"])
            values.append(f"**{value}**" if x is not None and x["state"] == judge.NOT_HELD else value)
        race = " (race)" if any(f"{variant} {key}" in r["race"] for r in runs) else ""
        said = f"{values[0]} in each" if len(values) > 1 and len(set(values)) == 1 else " / ".join(values)
        parts.append(f"{variant} {key} {predicted}{race}: {said}")
    runs_said = " / ".join(
        f"{(r.get('startedUtc') or '?')[:10]} {OUTCOME_WORDS[r['outcome']]}, {r.get('kubernetes') or '?'}, "
        f"{'?' if r.get('busyPct') is None else round(r['busyPct'])} % busy"
        for r in runs
    )
    return "; ".join(parts) + f". Runs: {runs_said}"


def scenario_row(records: list[dict], s: Scenario) -> str:
    current, earlier = versions(records, s)
    link = f"[{s.name}](../locust/liveness_lab/lab/scenarios/{s.name}.yaml)"
    tally = current.text() if current.runs or current.uncounted else "not run yet"
    if (race := race_text(current, s)) is not None:
        tally += f"; {race}"
    tally += "".join(f"; earlier prediction `{v.digest}`: {v.text()}" for v in earlier)
    measured = measured_cell(current.runs) if current.runs else ""
    return f"| {link}: {s.title} | `{current.digest}` | {tally} | {measured} |"


def table(records: list[dict], scenarios: list[Scenario]) -> list[str]:
    return [
        "| scenario | prediction | runs under it | measured, run by run (the latest five) |",
        "|---|---|---|---|",
        *(scenario_row(records, s) for s in scenarios),
    ]


def summary(records: list[dict], scenarios: list[Scenario]) -> list[str]:
    """The README's lines: how the current predictions fared, from the ledger."""
    held, failed, unknown, waiting, runs = [], [], [], [], 0
    for s in scenarios:
        current, _ = versions(records, s)
        runs += len(current.runs)
        if not current.runs:
            waiting.append(s.name)
        elif current.count(judge.NOT_HELD):
            failed.append(f"{s.name} (not held in {current.count(judge.NOT_HELD)} of {len(current.runs)})")
        elif current.count(judge.HELD):
            held.append(s.name)
        else:
            unknown.append(s.name)
    dates = sorted(r["startedUtc"][:10] for r in records if r.get("startedUtc"))
    span = f", {dates[0]} to {dates[-1]}" if dates else ""
    text = (
        f"- **Under the predictions in force** ([the ledger](locust/ledger/README.md), {runs} counted runs{span}): "
        f"{len(held)} of {len(scenarios)} scenarios held in every run that decided, "
        f"{len(failed)} did not hold in a run or more{': ' + ', '.join(failed) if failed else ''}, "
        f"{len(unknown)} could not tell, {len(waiting)} not run yet under their current prediction."
    )
    return textwrap.wrap(text, width=106, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)


def blocks(records: list[dict], scenarios: list[Scenario]) -> dict[Path, dict[str, list[str]]]:
    """Per document, its generated blocks by name."""
    groups = {
        "remedies-webflux": [s for s in scenarios if not s.storm and not catalogue.in_group(s, "servlet")],
        "remedies-servlet": [s for s in scenarios if not s.storm and catalogue.in_group(s, "servlet")],
        "storms": [s for s in scenarios if s.storm],
    }
    return {LAB_DOC: {name: table(records, chosen) for name, chosen in groups.items()}, README: {"summary": summary(records, scenarios)}}


def fill(text: str, name: str, lines: list[str], path: Path) -> str:
    """TEXT with its block NAME replaced by LINES; an error naming PATH when the block is missing."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{path}: needs one line '{begin}' and one '{end}' to hold the ledger's {name}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + "\n".join(lines) + "\n" + end + tail


def documents(records: list[dict], scenarios: list[Scenario]) -> dict[Path, tuple[str, str]]:
    """Per document, (its text now, its text with the ledger's blocks)."""
    out = {}
    for path, named in blocks(records, scenarios).items():
        now = path.read_text()
        new = now
        for name, lines in named.items():
            new = fill(new, name, lines, path)
        out[path] = (now, new)
    return out
