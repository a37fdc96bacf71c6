"""What a participant has done, kept server-side in a ConfigMap of the release's namespace
(``<release>-workshop``, rendered empty by the chart and labelled for the instructor's table), so it
survives a browser reload and a restart of the Locust master; in a rollout of the master (a step that changes
a mode), when the old and the new one answer for a moment, each follows what the other wrote.

Two keys, JSON each:

- ``progress.json``: the step on screen, per step whether its check was met (``done``, when) or skipped,
  the hints and solution shown, the participant's prediction; ``done``/``total``; and the last check's
  state and reason (what the instructor's table prints);
- ``start-values.json``: the release's own values (Helm's stored ones, `helm get values`) as the workshop
  first found them: what every workshop key (a value some step sets) is when no step sets it, which Reset
  puts back (course.target_values). A ``start.json`` of an older master (the containers it patched) is
  not read.

Plain data both ways: a ConfigMap written by an older master (a step renamed or gone) loads, the unknown
steps left out.
"""

import json
import time
from dataclasses import asdict, dataclass, field

PROGRESS_KEY = "progress.json"
START_KEY = "start-values.json"
VERSION = 1


@dataclass
class StepProgress:
    done: bool = False
    met_at: float | None = None  # epoch s, the first time its check was met
    skipped_at: float | None = None  # epoch s, the last Skip
    hints: int = 0  # hints shown
    solution: bool = False  # the solution shown
    prediction: str | None = None  # the participant's answer to the step's question


@dataclass
class Progress:
    current: str
    steps: dict[str, StepProgress] = field(default_factory=dict)
    last: dict = field(default_factory=dict)  # {"step", "state", "reason", "t"}: the last check
    started: float = field(default_factory=time.time)
    updated: float | None = None
    resets: int = 0
    skips: int = 0

    @classmethod
    def new(cls, first: str) -> "Progress":
        return cls(current=first)

    def of(self, step: str) -> StepProgress:
        return self.steps.setdefault(step, StepProgress())

    def done(self, names: list[str]) -> int:
        return sum(1 for n in names if self.steps.get(n, StepProgress()).done)

    def to_json(self, names: list[str], titles: dict[str, str] | None = None) -> dict:
        """The ConfigMap's progress.json: with done/total over NAMES (the steps this master shows), so the
        instructor's table needs no step file."""
        return {
            "version": VERSION,
            "current": self.current,
            "currentTitle": (titles or {}).get(self.current, self.current),
            "done": self.done(names),
            "total": len(names),
            "steps": {n: asdict(s) for n, s in self.steps.items() if n in names},
            "last": self.last,
            "started": self.started,
            "updated": self.updated,
            "resets": self.resets,
            "skips": self.skips,
        }

    @classmethod
    def from_json(cls, data: dict, names: list[str]) -> "Progress":
        known = set(StepProgress.__dataclass_fields__)
        steps = {n: StepProgress(**{k: v for k, v in s.items() if k in known}) for n, s in (data.get("steps") or {}).items() if n in names}
        current = data.get("current") if data.get("current") in names else names[0]
        return cls(
            current=current,
            steps=steps,
            last=data.get("last") or {},
            started=data.get("started") or time.time(),
            updated=data.get("updated"),
            resets=int(data.get("resets") or 0),
            skips=int(data.get("skips") or 0),
        )


def encode(progress_json: dict, start: dict | None) -> dict[str, str]:
    """The ConfigMap's data."""
    data = {PROGRESS_KEY: json.dumps(progress_json, separators=(",", ":"), sort_keys=True)}
    if start is not None:
        data[START_KEY] = json.dumps(start, separators=(",", ":"), sort_keys=True)
    return data


def decode(data: dict | None) -> tuple[dict | None, dict | None]:
    """(progress.json, start-values.json) of a ConfigMap's data; None for a key missing or not JSON."""
    out = []
    for key in (PROGRESS_KEY, START_KEY):
        try:
            out.append(json.loads((data or {})[key]))
        except (KeyError, TypeError, ValueError):
            out.append(None)
    return out[0], out[1]
