"""The recorded runs' events and pods as the Kubernetes API listed them at each moment: the recorder's
timeline (fixtures/<run>/timeline.jsonl) holds each event's every state it saw (a record per new count of
an aggregated event) and a pod snapshot a second; these give them back as ``kubectl get -o json`` items,
what ``kube.event_record`` and ``kube.pod_record`` read. For the Live tab's countdown tests and the
browser test's replay (replay_locustfile.py)."""

import copy
import json
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def timeline(run: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / run / "timeline.jsonl").read_text().splitlines()]


def stamp(t: float | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def api_event(record: dict, shift: float = 0.0) -> dict:
    """An `event` record of the timeline as the API's JSON (core/v1), its times moved by SHIFT seconds."""
    return {
        "metadata": {"uid": record["uid"], "name": f"{record['pod']}.{record['uid'][:8]}"},
        "involvedObject": {"kind": "Pod", "name": record["pod"], "fieldPath": "spec.containers{service}"},
        "reason": record["reason"],
        "type": record["type"],
        "message": record["message"],
        "count": record["count"],
        "firstTimestamp": stamp(record["first"] + shift if record["first"] is not None else None),
        "lastTimestamp": stamp(record["last"] + shift if record["last"] is not None else None),
        "eventTime": None,
    }


def events_listed(records: list[dict], until: float, shift: float = 0.0) -> list[dict]:
    """The events a list at UNTIL (the timeline's clock) returned: each object's latest state recorded by then."""
    latest = {}
    for r in records:
        if r["kind"] == "event" and r["t"] <= until:
            latest[r["uid"]] = r
    return [api_event(r, shift) for r in latest.values()]


def pods_listed(pods_json: list[dict], records: list[dict], until: float, shift: float = 0.0) -> list[dict]:
    """PODS_JSON (API items: fixtures/pods.json) with each container's restart count, last termination and
    readiness as the timeline's last pod snapshot by UNTIL had them (before the first, as the first)."""
    snapshots = [r for r in records if r["kind"] == "pods"]
    by_then = [r for r in snapshots if r["t"] <= until] or snapshots[:1]
    snapshot = {p["name"]: p for p in by_then[-1]["pods"]} if by_then else {}
    pods = copy.deepcopy(pods_json)
    for p in pods:
        seen = snapshot.get(p["metadata"]["name"])
        if seen is None:
            continue
        for c in p["status"]["containerStatuses"]:
            c["restartCount"], c["ready"] = seen["restarts"], seen["ready"]
            c["lastState"] = (
                {
                    "terminated": {
                        "finishedAt": stamp(seen["lastTerminatedAt"] + shift),
                        "reason": seen["lastTerminatedReason"],
                        "exitCode": seen["lastTerminatedExitCode"],
                    }
                }
                if seen["lastTerminatedAt"]
                else {}
            )
        for cond in p["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["status"] = "True" if seen["ready"] else "False"
    return pods
