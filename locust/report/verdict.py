"""Judges a scripted run: from the run parameters, Locust's stats history and the recorder's timeline,
the figures per variant and the verdict on the claim.

The claim (issue 5): under the same load every blocking pod is restarted, each restart preceded by
liveness probe failures (not OOMKilled, not evicted); every reactive pod has no restart and no
`Unhealthy` event, and the reactive requests have no failure. Offloaded and virtual are reported as they
fall; no verdict is invented for them. The verdict is PASS, FAIL, or INCONCLUSIVE: blocking or reactive
was not in the run, pods were replaced during it (someone rolled the Deployments out or deleted pods),
or the Kubernetes API stopped answering (the cluster went away).
"""

import csv
import json
import math
from pathlib import Path

from liveness_lab.kube import is_liveness_failure, is_liveness_kill
from liveness_lab.variants import VARIANTS, request_name

# Event timestamps are whole seconds; a restart's own time comes from the container's finishedAt.
CLOCK_SLACK_S = 2.0
# CPU starvation hints: the machine this busy during the hold, or the reactive pods throttled this often.
BUSY_WARN = 0.90
THROTTLE_WARN = 0.25
# This many failed reads of the API (about one a second) and the timeline has holes: no verdict.
API_ERRORS_DISTURBED = 5
# The reactive median may exceed the requested latency by this factor before we call it starved.
LATENCY_WARN_FACTOR = 1.5


def load_run(folder: Path) -> dict:
    """run.json, locust_stats_history.csv, locust_stats.csv, locust_failures.csv and timeline.jsonl of one
    report folder (the two summaries of Locust may be missing)."""
    folder = Path(folder)
    run = json.loads((folder / "run.json").read_text())
    history = list(csv.DictReader((folder / "locust_stats_history.csv").open(newline="")))
    totals_path = folder / "locust_stats.csv"
    totals = list(csv.DictReader(totals_path.open(newline=""))) if totals_path.exists() else []
    failures_path = folder / "locust_failures.csv"
    failures = list(csv.DictReader(failures_path.open(newline=""))) if failures_path.exists() else []
    timeline = [json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines() if line.strip()]
    return {"run": run, "history": history, "totals": totals, "failures": failures, "timeline": timeline}


def num(value):
    """A CSV cell as a float; None for N/A or empty."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def phases(run: dict) -> dict:
    """Absolute times: load start, hold start, load stop (cool-down begins), quiet start, end."""
    p, t0 = run["phases"], float(run["locust_started"])
    hold_start = t0 + p["ramp"]
    stop = hold_start + p["hold"]
    quiet = stop + p["cooldown"]
    return {"start": t0, "hold": hold_start, "stop": stop, "quiet": quiet, "end": quiet + p["quiet"]}


def series(history: list[dict], variant: str, window_s: float = 5.0) -> list[dict]:
    """The variant's stats history rows: t, rps, fps, p50, p95, p99, requests, failures.

    Requests/s and failures/s come from the cumulative counts over the last WINDOW_S seconds, not from
    Locust's own "current" columns: those are relative to the last request, so they freeze at their last
    value when the load stops. Percentiles (Locust's last 10 s) are dropped where no request ended then.
    """
    rows = []
    for row in history:
        if row.get("Name") != request_name(variant):
            continue
        rows.append(
            {
                "t": num(row["Timestamp"]),
                "p50": num(row.get("50%")),
                "p95": num(row.get("95%")),
                "p99": num(row.get("99%")),
                "requests": int(num(row["Total Request Count"]) or 0),
                "failures": int(num(row["Total Failure Count"]) or 0),
            }
        )
    rows.sort(key=lambda r: r["t"])
    j = 0
    last_change = None
    for i, r in enumerate(rows):
        while j < i and r["t"] - rows[j + 1]["t"] >= window_s:
            j += 1
        span = r["t"] - rows[j]["t"]
        r["rps"] = (r["requests"] - rows[j]["requests"]) / span if span > 0 else 0.0
        r["fps"] = (r["failures"] - rows[j]["failures"]) / span if span > 0 else 0.0
        if i == 0 or r["requests"] != rows[i - 1]["requests"]:
            last_change = r["t"]
        if last_change is None or r["t"] - last_change > 10:
            r["p50"] = r["p95"] = r["p99"] = None
    return rows


def chosen_variants(run: dict) -> list[str]:
    names = [v.strip() for v in str(run["variants"]).split(",") if v.strip()]
    return [v for v in VARIANTS if v in names]


def analyze_variant(variant: str, data: dict, ph: dict) -> dict:
    """Everything the report says about one variant."""
    timeline = data["timeline"]
    snapshots = [(r["t"], [p for p in r["pods"] if p["variant"] == variant]) for r in timeline if r["kind"] == "pods"]
    events = [r for r in timeline if r["kind"] == "event" and r["variant"] == variant]
    in_run = lambda ts: ts is not None and ts >= ph["start"] - CLOCK_SLACK_S  # noqa: E731

    # Restarts: a pod's restart count going up between two snapshots. Its time is the container's
    # finishedAt when the API gave one, else the snapshot's.
    baseline, last_count, restarts, evicted = {}, {}, [], set()
    ready_series = []
    for t, pods in snapshots:
        ready_series.append((t, sum(p["ready"] for p in pods), len(pods)))
        for p in pods:
            name = p["name"]
            if p.get("reason") == "Evicted":
                evicted.add(name)
            if name not in last_count:
                baseline[name] = last_count[name] = p["restarts"]
                continue
            if p["restarts"] > last_count[name]:
                at = p["lastTerminatedAt"] if p["lastTerminatedAt"] and p["lastTerminatedAt"] <= t else t
                for _ in range(p["restarts"] - last_count[name]):
                    restarts.append(
                        {"pod": name, "t": at, "reason": p["lastTerminatedReason"], "exitCode": p["lastTerminatedExitCode"]}
                    )
                last_count[name] = p["restarts"]
    pods_seen = sorted(last_count)
    # Pods that were not there when recording began: a rollout or a deletion during the run (a liveness
    # restart keeps its pod). Such a run says nothing about the claim.
    first_names = {p["name"] for p in snapshots[0][1]} if snapshots else set()
    replaced = sorted(set(pods_seen) - first_names)

    # Liveness failures: each observed (pod, time) of an Unhealthy "Liveness probe failed" event.
    failures = sorted({(e["pod"], e["last"]) for e in events if is_liveness_failure(e) and in_run(e["last"])}, key=lambda x: x[1])
    unhealthy = [e for e in events if e["reason"] == "Unhealthy" and in_run(e["last"])]
    killing = [e for e in events if e["reason"] == "Killing" and in_run(e["last"])]

    # Each restart must follow a liveness failure of the same pod, after that pod's previous restart: an
    # Unhealthy "Liveness probe failed" event, or a Killing "failed liveness probe" event. The kubelet's
    # event spam filter (client-go: a burst of 25 events per object and event type, then one per 5
    # minutes) drops events of a pod that keeps failing, so a later restart may have neither; it still
    # counts when the container ended in place on SIGTERM (exit 143: only the kubelet does that to a
    # container whose pod lives on) and the same pod's liveness failures were seen earlier in the run.
    kills = sorted({(e["pod"], e["last"]) for e in killing if is_liveness_kill(e)}, key=lambda x: x[1])
    evidence = failures + kills
    previous, seen_failure = {}, set()
    for r in sorted(restarts, key=lambda r: r["t"]):
        since = previous.get(r["pod"], ph["start"] - CLOCK_SLACK_S)
        window = [ts for pod, ts in evidence if pod == r["pod"] and since - CLOCK_SLACK_S < ts <= r["t"] + CLOCK_SLACK_S]
        if window:
            r["attribution"] = "liveness failure events before it"
        elif r["exitCode"] == 143 and r["pod"] in seen_failure:
            r["attribution"] = "SIGTERM by the kubelet (exit 143) after earlier liveness failures; its events were rate-limited"
        else:
            r["attribution"] = None
        r["afterLivenessFailure"] = r["attribution"] is not None
        if window or any(pod == r["pod"] and ts <= r["t"] + CLOCK_SLACK_S for pod, ts in evidence):
            seen_failure.add(r["pod"])
        previous[r["pod"]] = r["t"]

    # Recovery: from load stop until every pod is Ready and stays so to the end of the recording.
    recovery = None
    after = [(t, ready, total) for t, ready, total in ready_series if t >= ph["stop"]]
    for i, (t, ready, total) in enumerate(after):
        if total and all(r == n and n for _, r, n in after[i:]):
            recovery = max(0.0, t - ph["stop"])
            break

    rows = series(data["history"], variant)
    totals = next((r for r in data["totals"] if r.get("Name") == request_name(variant)), {})
    requests = int(num(totals.get("Request Count")) or max((r["requests"] for r in rows), default=0))
    fails = int(num(totals.get("Failure Count")) or max((r["failures"] for r in rows), default=0))
    hold_p50 = [r["p50"] for r in rows if r["p50"] is not None and ph["hold"] + 10 <= r["t"] <= ph["stop"]]
    first = lambda xs: round(min(xs) - ph["start"], 1) if xs else None  # noqa: E731
    return {
        "variant": variant,
        "pods": pods_seen,
        "podsAddedDuringRun": replaced,
        "restarts": restarts,
        "restartsByPod": {name: last_count[name] - baseline[name] for name in pods_seen},
        "evicted": sorted(evicted),
        "livenessFailures": [{"pod": p, "t": t} for p, t in failures],
        "unhealthy": len(unhealthy),
        "killing": len(killing),
        "livenessKills": [{"pod": p, "t": t} for p, t in kills],
        "events": sorted(
            ({k: e[k] for k in ("t", "pod", "reason", "message", "count", "last")} for e in events if in_run(e["last"])),
            key=lambda e: e["last"] or 0,
        ),
        "firstLivenessFailureS": first([t for _, t in failures]),
        "firstRestartS": first([r["t"] for r in restarts]),
        "recoveryS": None if recovery is None else round(recovery, 1),
        "requests": requests,
        "failures": fails,
        "failureRatio": fails / requests if requests else 0.0,
        "p50": num(totals.get("50%")),
        "p95": num(totals.get("95%")),
        "p99": num(totals.get("99%")),
        "errors": sorted(
            ((e.get("Error", ""), int(num(e.get("Occurrences")) or 0)) for e in data.get("failures", []) if e.get("Name") == request_name(variant)),
            key=lambda x: -x[1],
        ),
        "holdMedianP50": sorted(hold_p50)[len(hold_p50) // 2] if hold_p50 else None,
        "series": rows,
        "ready": ready_series,
    }


def check_blocking(a: dict) -> list[tuple[bool, str]]:
    checks = [(bool(a["pods"]), f"blocking pods observed: {len(a['pods'])}")]
    for pod, n in a["restartsByPod"].items():
        checks.append((n >= 1, f"{pod} restarted {n} time(s) (needs >= 1)"))
    for r in a["restarts"]:
        how = r["attribution"] or "no liveness failure seen before it"
        checks.append((r["afterLivenessFailure"], f"{r['pod']} restart at +{r['t'] - a['_start']:.0f}s preceded by a liveness failure: {how}"))
        checks.append((r["reason"] != "OOMKilled", f"{r['pod']} restart reason {r['reason']} (exit {r['exitCode']}), not OOMKilled"))
    checks.append((not a["evicted"], f"no blocking pod evicted ({', '.join(a['evicted']) or 'none'})"))
    return checks


def check_reactive(a: dict) -> list[tuple[bool, str]]:
    checks = [(bool(a["pods"]), f"reactive pods observed: {len(a['pods'])}")]
    for pod, n in a["restartsByPod"].items():
        checks.append((n == 0, f"{pod} restarted {n} time(s) (needs 0)"))
    checks.append((a["unhealthy"] == 0, f"reactive Unhealthy events during the run: {a['unhealthy']} (needs 0)"))
    checks.append((a["requests"] > 0, f"reactive requests served: {a['requests']}"))
    checks.append((a["failures"] == 0, f"reactive request failures: {a['failures']} (needs 0)"))
    return checks


def cpu_check(data: dict, ph: dict, analyses: dict, latency_ms: float) -> dict:
    """Signs that CPU starvation, not a blocked event loop, could explain what happened."""
    timeline = data["timeline"]
    busy = [r["busy"] for r in timeline if r["kind"] == "cpu" and ph["hold"] <= r["t"] <= ph["stop"]]
    throttles = [r for r in timeline if r["kind"] == "throttle"]
    throttle_error = next((r["message"] for r in timeline if r["kind"] == "error" and r.get("what") == "throttle"), None)
    notes, warnings = [], []
    if busy:
        mean, peak = sum(busy) / len(busy), max(busy)
        notes.append(f"machine CPU busy during the hold: mean {mean:.0%}, peak {peak:.0%} ({len(busy)} samples, /proc/stat)")
        if mean >= BUSY_WARN:
            warnings.append(f"the machine's CPU was {mean:.0%} busy on average during the hold")
    else:
        notes.append("machine CPU: no samples")
    throttled = {}
    if len(throttles) >= 2:
        # Summed over consecutive samples; a restarted container starts its counters again from 0.
        hits, periods = {}, {}
        for before, after in zip(throttles, throttles[1:]):
            for pod, m in after["pods"].items():
                prev = before["pods"].get(pod, {})
                for key, acc in (("container_cpu_cfs_throttled_periods_total", hits), ("container_cpu_cfs_periods_total", periods)):
                    cur, old = m.get(key, 0.0), prev.get(key, 0.0)
                    acc[pod] = acc.get(pod, 0.0) + (cur - old if cur >= old else cur)
        throttled = {pod: hits.get(pod, 0.0) / n for pod, n in periods.items() if n > 0}
        notes.append("CFS throttling per pod over the run: " + (", ".join(f"{p} {r:.0%}" for p, r in sorted(throttled.items())) or "no data"))
    elif throttle_error:
        notes.append(f"CFS throttling: not readable ({throttle_error})")
    reactive = analyses.get("reactive")
    if reactive:
        for pod in reactive["pods"]:
            if throttled.get(pod, 0) >= THROTTLE_WARN:
                warnings.append(f"reactive pod {pod} was CPU-throttled in {throttled[pod]:.0%} of its periods")
        if reactive["unhealthy"]:
            warnings.append(f"reactive pods failed {reactive['unhealthy']} probe(s): with a free event loop that means CPU starvation or a sick node")
        p50 = reactive["holdMedianP50"]
        if p50 is not None:
            notes.append(f"reactive median latency during the hold: {p50:.0f} ms for {latency_ms:.0f} ms requested")
            if p50 > LATENCY_WARN_FACTOR * latency_ms:
                warnings.append(f"reactive median latency {p50:.0f} ms is over {LATENCY_WARN_FACTOR}x the requested {latency_ms:.0f} ms: the pod was short of CPU")
    return {"notes": notes, "warnings": warnings, "starved": bool(warnings), "throttled": throttled}


def judge(data: dict) -> dict:
    """Analyses per chosen variant, the checks, the CPU check and the verdict."""
    run = data["run"]
    ph = phases(run)
    analyses = {}
    for v in chosen_variants(run):
        analyses[v] = analyze_variant(v, data, ph)
        analyses[v]["_start"] = ph["start"]
    checks = []
    if "blocking" in analyses:
        checks += [("blocking", ok, text) for ok, text in check_blocking(analyses["blocking"])]
    if "reactive" in analyses:
        checks += [("reactive", ok, text) for ok, text in check_reactive(analyses["reactive"])]
    cpu = cpu_check(data, ph, analyses, float(run.get("latency_ms", 1000)))
    disturbances = [
        f"{v}: pods created during the run ({', '.join(a['podsAddedDuringRun'])}): a rollout or a deletion, not the load"
        for v, a in analyses.items()
        if a["podsAddedDuringRun"]
    ]
    api_errors = sum(1 for r in data["timeline"] if r["kind"] == "error" and r.get("what") == "api")
    if api_errors >= API_ERRORS_DISTURBED:
        disturbances.append(
            f"the Kubernetes API did not answer {api_errors} times during the recording: the cluster went away or was overloaded"
        )
    if disturbances:
        verdict = "INCONCLUSIVE"
    elif any(not ok for _, ok, _ in checks):
        verdict = "FAIL"
    elif "blocking" in analyses and "reactive" in analyses:
        verdict = "PASS"
    else:
        verdict = "INCONCLUSIVE"
    return {
        "verdict": verdict,
        "checks": checks,
        "disturbances": disturbances,
        "analyses": analyses,
        "phases": ph,
        "cpu": cpu,
        "apiErrors": api_errors,
    }


EXIT_CODES = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 2}
