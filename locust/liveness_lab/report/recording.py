"""One scripted run's report folder as it was recorded, read: ``RunData`` (run.json, Locust's CSVs, the
recorder's timeline) and what run.json itself says: the run's timetable (``Phases``), the variants it
chose, the latency its requests asked for. The rest of the run's facts read it through these.
"""

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

from liveness_lab.base import DEFAULT_LATENCY_MS
from liveness_lab.base.variants import VARIANTS


@dataclass
class RunData:
    """One report folder: run.json, Locust's stats history, totals and failures, the recorder's timeline."""

    run: dict
    history: list[dict]
    totals: list[dict]
    failures: list[dict]
    timeline: list[dict]


def requested_latency_ms(run: dict) -> float:
    """The latency the run's requests asked for, from run.json; an old run without it had the default."""
    return float(run.get("latency_ms", DEFAULT_LATENCY_MS))


def load_run(folder: Path) -> RunData:
    """run.json, locust_stats_history.csv, locust_stats.csv, locust_failures.csv and timeline.jsonl of one
    report folder (the two summaries of Locust may be missing)."""
    folder = Path(folder)

    def rows(name):
        path = folder / name
        return list(csv.DictReader(path.open(newline=""))) if path.exists() else []

    return RunData(
        run=json.loads((folder / "run.json").read_text()),
        history=list(csv.DictReader((folder / "locust_stats_history.csv").open(newline=""))),
        totals=rows("locust_stats.csv"),
        failures=rows("locust_failures.csv"),
        timeline=[json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines() if line.strip()],
    )


def num(value):
    """A CSV cell as a float; None for N/A or empty."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class Phases:
    """Absolute times (epoch s) of the run's timetable: load start, hold start, load stop (cool-down
    begins), quiet start, end of the recording."""

    start: float
    hold: float
    stop: float
    quiet: float
    end: float


def run_phases(run: dict) -> Phases:
    """The timetable of run.json's `phases` (durations) from `locust_started`."""
    p, t0 = run["phases"], float(run["locust_started"])
    hold = t0 + p["ramp"]
    stop = hold + p["hold"]
    quiet = stop + p["cooldown"]
    return Phases(start=t0, hold=hold, stop=stop, quiet=quiet, end=quiet + p["quiet"])


def chosen_variants(run: dict) -> list[str]:
    names = [v.strip() for v in str(run["variants"]).split(",") if v.strip()]
    return [v for v in VARIANTS if v in names]
