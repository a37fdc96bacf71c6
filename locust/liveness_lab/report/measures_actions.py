"""The measures of a scenario's actions (a rollout, a scale-out, a change in the running pods): the recovery
and the kills after the last one, the restarts and failures of the pods one added. A finished run only: the
workshop has no actions. Each judge is registered by its prediction key (``measure.measure``); module doc of
``report.predictions`` for the rules they share.
"""

from .facts import added_pods, kills_after_actions, recovery_after_actions
from .measure import NOT_HELD, NOT_MEASURED, Evidence, Line, after_run_line, count_state, measure


@measure("recovery_after_actions", "kills_after_actions")
def _after_actions(key: str, expected, ev: Evidence) -> Line:
    """recovery_after_actions: seconds from the last action done to every pod Ready; kills_after_actions:
    liveness kills after it."""
    a = ev.analysis
    if not ev.actions:
        return after_run_line(key, ev, str(expected), "no action recorded in the timeline", NOT_MEASURED)
    last = ev.actions[-1]
    if last.done is None:
        return after_run_line(key, ev, str(expected), f"the last action ({last.what}) was not done when the recording ended", NOT_MEASURED)
    done = f"+{last.done - ev.started:.0f} s"
    if key == "kills_after_actions":
        n = kills_after_actions(a, ev.actions)
        measured = f"{n} liveness kill(s) after the last action (done at {done})"
        return after_run_line(key, ev, str(expected), measured, count_state(expected, n, True))
    r = recovery_after_actions(a, ev.actions)
    predicted = f"{expected} s after the last action (rolled out at {done})"
    if r is None:
        return after_run_line(key, ev, predicted, "not Ready to the end of the recording", NOT_HELD)
    return after_run_line(key, ev, predicted, f"all Ready {r:.0f} s after it", count_state(expected, round(r), True))


@measure("added_restarts", "added_liveness_failures")
def _added(key: str, expected, ev: Evidence) -> Line:
    """added_restarts, added_liveness_failures: restarts (a pending kill counted) and liveness failures of
    the pods an action added."""
    a = ev.analysis
    added = added_pods(a, ev.actions)
    if added is None:
        return after_run_line(key, ev, str(expected), f"no recorded action raised {a.variant}'s replicas", NOT_MEASURED)
    if key == "added_restarts":
        n = sum(1 for r in a.pods.restarts if r.pod in added) + sum(1 for k in a.pending_kills if k.pod in added)
    else:
        n = sum(1 for x in a.probes.liveness_failures if x.pod in added)
    return after_run_line(key, ev, str(expected), f"{n} ({len(added)} pod(s) added)", count_state(expected, n, True))
