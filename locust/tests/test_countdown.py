"""The countdown (base/countdown.py) on events recorded from the kind cluster: the recorder's timelines
(fixtures/<run>/timeline.jsonl, every new count of an aggregated event as it was seen) and the API's
list after the first restart (fixtures/events.json). The chart's liveness probe: every 5 s, 3 failures."""

import json
import time

from conftest import FIXTURES
from recorded_events import timeline

from liveness_lab.base.countdown import EventReader, Probe, countdown, describe
from liveness_lab.base.kube import event_record, parse_time

CHART = Probe(period_s=5, failure_threshold=3)
LABELS = {"failure": "liveness failure", "kill": "liveness kill", "unreported": "liveness failure, no event"}
BLOCKING = "liveness-lab-blocking-5996c55b89-jjfw9"  # run-pass's (and run-fail's) blocking pod


def at(hms: str) -> float:
    return parse_time(f"2026-11-22T{hms}Z")


def event_records(run: str, pod: str | None = None) -> list[dict]:
    return [r for r in timeline(run) if r["kind"] == "event" and (pod is None or r["pod"] == pod)]


def container_ends(run: str, pod: str) -> list[tuple[str, float]]:
    """(pod, when its container ended) for each restart the run's pod snapshots saw."""
    ends, before = [], None
    for r in timeline(run):
        for p in r.get("pods", []) if r["kind"] == "pods" else []:
            if p["name"] == pod:
                if before is not None and p["restarts"] > before:
                    ends.append((pod, p["lastTerminatedAt"]))
                before = p["restarts"]
    return ends


def counted(records, ends=(), probe=CHART):
    """The countdown of RECORDS, read one list at a time as the recorder saw them."""
    reader, occurrences = EventReader(), []
    for r in records:
        occurrences += reader.read([r], lambda pod: probe)
    return countdown(occurrences, list(ends), lambda pod: probe)


def summary(markers, since=float("-inf")):
    """(time as HH:MM:SS, kind, label) of each marker from SINCE on."""
    return [(_hms(m.t), m.kind, m.label) for m in markers if m.t >= since]


def _hms(t):
    return time.strftime("%H:%M:%S", time.gmtime(t))


def test_the_first_kill_follows_three_reported_failures_numbered_1_2_3():
    markers = counted(event_records("run-pass", BLOCKING), container_ends("run-pass", BLOCKING))
    assert summary(markers)[:4] == [
        ("12:14:03", "failure", "1/3"),
        ("12:14:08", "failure", "2/3"),
        ("12:14:13", "failure", "3/3"),
        ("12:14:13", "kill", "3/3"),
    ]
    assert all(m.exact for m in markers[:4])


def test_the_kubelets_spam_filter_stops_the_failure_events_after_the_first_kill_and_the_kills_still_count_down():
    """The defect: after the first kill the Live tab showed no failures. The recorded run says why: the
    kubelet sent 25 Warning updates of the pod (startup, readiness and liveness failures; client-go's
    spam filter: a burst of 25 per object and type, then one per 5 minutes), the last of them at 12:14:48,
    and from then on only its Normal events (Killing, Started). Each later kill still follows 3 failures
    in a row: the ones no event reported are placed back from the kill, 5 s apart."""
    records = event_records("run-pass", BLOCKING)
    warnings, last_count = 0, {}
    for r in records:
        if r["type"] == "Warning" and r["t"] < at("12:18:00"):  # before the 5-minute token came back
            warnings += r["count"] - last_count.get(r["uid"], 0)
            last_count[r["uid"]] = r["count"]
    assert warnings == 25
    liveness = [r for r in records if r["message"].startswith("Liveness probe failed")]
    assert max(r["last"] for r in liveness) == at("12:14:48")
    assert [r["count"] for r in records if r["reason"] == "Killing"] == [1, 2, 3, 4, 5]

    markers = counted(records, container_ends("run-pass", BLOCKING))
    kills = [m for m in markers if m.kind == "kill"]
    assert [_hms(k.t) for k in kills] == ["12:14:13", "12:14:58", "12:15:38", "12:16:18", "12:16:58"]
    for kill in kills:
        before = [m for m in markers if m.kind != "kill" and m.kill_t == kill.t]
        assert [m.label for m in before] == ["1/3", "2/3", "3/3"], _hms(kill.t)
        assert [kill.t - m.t for m in before] == [10, 5, 0]
    # After the first kill: one failure reported (12:14:48, the 25th Warning), the rest inferred.
    assert summary(markers, at("12:14:14"))[:4] == [
        ("12:14:48", "failure", "1/3"),
        ("12:14:53", "unreported", "2/3"),
        ("12:14:58", "unreported", "3/3"),
        ("12:14:58", "kill", "3/3"),
    ]
    assert kills[1].unreported == [2, 3] and kills[2].unreported == [1, 2, 3]
    text = describe(next(m for m in markers if m.kind == "unreported"), at("12:13:50"), LABELS)
    assert text.startswith("liveness failure 2/3 at +63.0 s, no event of its own: the kubelet's event spam filter dropped its event")


def test_a_count_that_rose_by_two_between_two_lists_is_two_failures_the_earlier_a_period_before():
    """As a list every 10 s would have seen the recorded liveness event: count 1 at 12:14:03, then 3 at
    12:14:13. The failure in between (12:14:08, count 2) is placed 5 s before the last."""
    records = [r for r in event_records("run-pass", BLOCKING) if not (r["uid"].startswith("a580706c") and r["count"] == 2)]
    markers = counted(records, container_ends("run-pass", BLOCKING))
    assert summary(markers)[:4] == [
        ("12:14:03", "failure", "1/3"),
        ("12:14:08", "failure", "2/3"),
        ("12:14:13", "failure", "3/3"),
        ("12:14:13", "kill", "3/3"),
    ]
    placed = markers[1]
    assert not placed.exact and markers[0].exact and markers[2].exact
    assert "its time placed a period before the next" in describe(placed, at("12:13:50"), LABELS)


def test_an_aggregated_event_first_seen_with_its_count_gives_each_failure_its_number():
    """The API's list after the first restart (fixtures/events.json): the liveness event reads count 4,
    first 12:14:03, last 12:14:48; the Killing event count 2, first 12:14:13, last 12:14:58. Of the two
    failures in between, only the count tells; the kill at 12:14:13 places them (2/3, 3/3), and says
    they were folded into that count, not dropped."""
    events = [event_record(e) for e in json.loads((FIXTURES / "events.json").read_text())["items"]]
    markers = counted([e for e in events if e["pod"] == BLOCKING], [(BLOCKING, at("12:14:28"))])
    assert summary(markers) == [
        ("12:14:03", "failure", "1/3"),
        ("12:14:08", "unreported", "2/3"),
        ("12:14:13", "unreported", "3/3"),
        ("12:14:13", "kill", "3/3"),
        ("12:14:48", "failure", "1/3"),
        ("12:14:53", "unreported", "2/3"),
        ("12:14:58", "unreported", "3/3"),
        ("12:14:58", "kill", "3/3"),
    ]
    folded = describe(markers[1], at("12:13:50"), LABELS)
    assert "counted only by the update of its aggregated event at +58.0 s" in folded, folded
    assert "spam filter" in describe(markers[5], at("12:13:50"), LABELS)
    assert markers[4].hidden == 0  # both hidden failures found their place


def test_every_failure_of_the_apis_count_has_its_place_across_the_five_minute_gap():
    """The same pod in the next recording (run-fail, 14 minutes later): its liveness event reads count
    16, last 12:23:48; the Killing event count 6, last 12:23:58. The 12 failures after 12:14:48 came in
    one update (a token of the spam filter came back): 11 of them are the failures the kills at 12:14:58,
    12:15:38, 12:16:18 and 12:16:58 imply, the 12th is the one at 12:23:48, the first of the sixth kill's."""
    records = event_records("run-pass", BLOCKING) + event_records("run-fail", BLOCKING)
    markers = counted(records, container_ends("run-pass", BLOCKING))
    failures = [m for m in markers if m.kind in ("failure", "unreported") and m.t <= at("12:23:48")]
    assert len(failures) == 16  # the API's count
    assert sum(m.folded_into == at("12:23:48") for m in failures) == 11
    assert summary(markers, at("12:17:00")) == [
        ("12:23:48", "failure", "1/3"),
        ("12:23:53", "unreported", "2/3"),
        ("12:23:58", "unreported", "3/3"),
        ("12:23:58", "kill", "3/3"),
    ]


def test_a_failure_the_new_container_had_before_its_startup_probe_passed_counts_towards_the_next_kill():
    """run-extra-load's blocking pod: killed at 21:45:06, its new container failed a liveness probe at
    21:45:20 ("connection refused", the second it started), then its startup probe until 21:45:33, then
    liveness at 21:45:36, and the kubelet killed it at 21:45:41: after two failures since startup. The
    kubelet skips liveness probes until the startup probe passes, and a skipped probe does not break
    the count: the failure at 21:45:20 is the first of three."""
    pod = "liveness-lab-blocking-7c76b4cdd9-djl9c"
    markers = counted(event_records("run-extra-load", pod), container_ends("run-extra-load", pod))
    start = parse_time("2026-11-23T21:44:47Z")
    after_first_kill = [(round(m.t - start), m.kind, m.label) for m in markers if m.t > parse_time("2026-11-23T21:45:06Z")]
    assert after_first_kill == [(33, "failure", "1/3"), (49, "failure", "2/3"), (54, "unreported", "3/3"), (54, "kill", "3/3")]
    assert "the kubelet counts it with the failures after the startup probe passed" in describe(markers[4], start, LABELS)


def test_a_failure_long_after_the_previous_one_starts_a_new_count():
    """The same records without the kill at 21:45:41 (as if the pod had recovered): the failure at
    21:45:36 comes 16 s after the one at 21:45:20, more than 1.5 periods: a success must have come
    between (it is never an event), so it is 1/3 again."""
    pod = "liveness-lab-blocking-7c76b4cdd9-djl9c"
    records = [r for r in event_records("run-extra-load", pod) if not (r["reason"] == "Killing" and r["count"] == 2)]
    markers = counted(records, container_ends("run-extra-load", pod))
    assert [m.label for m in markers if m.t > parse_time("2026-11-23T21:45:06Z")] == ["1/3", "1/3"]


def test_failures_no_kill_followed_count_up_from_1():
    """run-disturbed: two liveness failures of a blocking pod, then the pod was replaced: 1/3, 2/3."""
    markers = counted(event_records("run-disturbed"))
    assert [(m.kind, m.label) for m in markers] == [("failure", "1/3"), ("failure", "2/3")]


def test_the_hover_text_says_which_failure_of_the_threshold_it_is_with_the_kubelets_message():
    """run-alone: the swarm started 21:35:09.5; the blocking pod's second liveness failure at 21:35:23."""
    pod = "liveness-lab-blocking-7c76b4cdd9-s984z"
    markers = counted(event_records("run-alone", pod))
    second = next(m for m in markers if m.label == "2/3")
    text = describe(second, second.t - 8.5, LABELS)
    assert text == (
        'liveness failure 2/3 at +8.5 s: Liveness probe failed: Get "http://10.244.0.20:8080/livez": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    )
    kill = next(m for m in markers if m.kind == "kill")
    assert describe(kill, second.t - 8.5, LABELS).startswith("liveness kill after 3/3 at +13.5 s: Container service failed liveness")


def test_without_the_probes_settings_nothing_is_numbered_or_inferred():
    markers = counted(event_records("run-pass", BLOCKING), container_ends("run-pass", BLOCKING), probe=None)
    assert {m.label for m in markers} == {""}
    assert not [m for m in markers if m.kind == "unreported"]
    assert len([m for m in markers if m.kind == "failure"]) == 4  # the four the events reported


def test_a_watch_on_a_fresh_cluster_sees_every_update_and_the_same_25th_warning():
    """Every update of the blocking pod's events as a watch delivered them (fixtures/events-watch.json:
    none missed between two lists), on a fresh kind cluster with Kubernetes v1.37 during `scripts/demo.sh
    --hold 60 --quiet 30`: the 25th Warning update (04:53:47) is the last one; the liveness event's
    last count, 4 at 04:53:45, is the first failure of the second kill (04:53:55), whose other two
    failures no event reported, while its Killing event still came."""
    watch = json.loads((FIXTURES / "events-watch.json").read_text())["items"]
    records = [event_record(w["object"]) for w in watch]
    warnings, counts, last_warning = 0, {}, None
    for r in records:
        if r["type"] == "Warning":
            warnings += r["count"] - counts.get(r["uid"], 0)
            counts[r["uid"]] = r["count"]
            last_warning = r["last"]
    assert warnings == 25 and _hms(last_warning) == "04:53:47"
    kills = [r for r in records if r["reason"] == "Killing"]
    assert [(r["count"], _hms(r["last"])) for r in kills] == [(1, "04:53:10"), (2, "04:53:55")]
    markers = counted(records)
    assert summary(markers) == [
        ("04:53:00", "failure", "1/3"),
        ("04:53:05", "failure", "2/3"),
        ("04:53:10", "failure", "3/3"),
        ("04:53:10", "kill", "3/3"),
        ("04:53:45", "failure", "1/3"),
        ("04:53:50", "unreported", "2/3"),
        ("04:53:55", "unreported", "3/3"),
        ("04:53:55", "kill", "3/3"),
    ]
