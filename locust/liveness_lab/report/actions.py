"""The lab's actions during a run as the timeline recorded them (lab.actions: a scale-out, a changed
environment, probes set in the template or in the running pods), and the pods they made: a scenario's own
new pods, not a rollout or a deletion under the run.
"""

from dataclasses import dataclass

from liveness_lab.base.causes import CLOCK_SLACK_S

from .pods import PodHistory


@dataclass(frozen=True)
class RecordedAction:
    """One of the lab's actions during the run (lab.actions): when it was done, on which target, what it
    changed, and when its Deployment had rolled out (None: not within the recording); host clock."""

    index: int
    t: float
    target: str
    what: str
    replicas: int | None
    done: float | None
    error: str | None = None
    rollout: bool = False  # it changed the container's environment or its template's probes: a rollout, new pods


def rolls_out(record: dict) -> bool:
    """An `action` record whose change makes new pods: an environment, or probes set in the template (not in
    the running pods)."""
    return "env" in record or ("probe" in record and not record.get("inPlace"))


def recorded_actions(timeline: list[dict]) -> list[RecordedAction]:
    """The timeline's `action` records, each with the time of its `action-done`; those the API refused
    are left out."""
    done = {r["index"]: r["t"] for r in timeline if r["kind"] == "action-done"}
    return [
        RecordedAction(
            r["index"],
            r["t"],
            r["target"],
            r.get("what", ""),
            r.get("replicas"),
            done.get(r["index"]),
            r.get("error"),
            rollout=rolls_out(r),
        )
        for r in timeline
        if r["kind"] == "action" and not r.get("error")
    ]


def added_by_actions(history: PodHistory, variant: str, actions: list[RecordedAction]) -> list[str]:
    """The pods of VARIANT that came up during the run after an action raised its replicas: the
    scenario's own new pods, not a rollout or a deletion under the run."""
    raised = [a.t for a in actions if a.target == variant and a.replicas]
    if not raised:
        return []
    return [p for p in history.added_during_run if history.first_seen.get(p, 0) >= min(raised) - CLOCK_SLACK_S]


def made_by_actions(history: PodHistory, variant: str, actions: list[RecordedAction]) -> list[str]:
    """The pods of VARIANT that came up during the run after an action made pods of it: a scale-out's, or
    a rollout's (an action that changed its container's environment). The scenario's own."""
    made = [a.t for a in actions if a.target == variant and (a.replicas or a.rollout)]
    if not made:
        return []
    return [p for p in history.added_during_run if history.first_seen.get(p, 0) >= min(made) - CLOCK_SLACK_S]
