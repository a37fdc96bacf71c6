"""The cluster's clock against the host's (report.clock): the measurement on a scripted server clock,
and a recorded run judged with a node clock 30 s ahead of the host's (Docker Desktop's VM after the Mac
slept): right when the offset is steady, no verdict when it moved during the run."""

import copy
from pathlib import Path

import pytest

from liveness_lab.report import clock, facts, verdict
from liveness_lab.report.recording import RunData

AHEAD_S = 30.0


class FakeClocks:
    """A host clock and a server clock OFFSET seconds ahead, each ask taking RTT seconds."""

    def __init__(self, offset: float, start: float = 1_800_000_000.37, rtt: float = 0.004):
        self.host, self.offset, self.rtt = start, offset, rtt

    def now(self):
        return self.host

    def sleep(self, s):
        self.host += s

    def server_second(self):
        self.host += self.rtt / 2
        second = int(self.host + self.offset)  # the server reads its clock halfway through the ask
        self.host += self.rtt / 2
        return second


@pytest.mark.parametrize("offset", [0.0, AHEAD_S, -7.25, 0.6])
def test_the_offset_is_measured_to_within_its_stated_uncertainty(offset):
    fake = FakeClocks(offset)
    sample = clock.measure(fake.server_second, now=fake.now, sleep=fake.sleep)
    assert abs(sample.offset - offset) <= sample.uncertainty <= 0.02


def test_an_answer_slower_than_a_second_gives_the_coarse_estimate():
    fake = FakeClocks(AHEAD_S, rtt=2.0)
    sample = clock.measure(fake.server_second, now=fake.now, sleep=fake.sleep)
    assert sample.uncertainty > 0.5 and abs(sample.offset - AHEAD_S) <= sample.uncertainty


def test_the_http_date_header_is_read_in_epoch_seconds():
    assert clock.date_header_seconds("Tue, 24 Nov 2026 15:04:05 GMT") == 1795532645


def node_clock_ahead(data: RunData, start: float, end: float) -> RunData:
    """DATA as if the cluster's clock had been START then END seconds ahead of the host's: every time the
    cluster stamped moves by the offset it had then (linearly over the recording), and the recorder's
    clock records say so."""
    out = copy.deepcopy(data)
    t0, t1 = out.timeline[0]["t"], out.timeline[-1]["t"]

    def ahead(t):
        return start + (end - start) * (t - t0) / (t1 - t0)

    for r in out.timeline:
        if r["kind"] == "event":
            r["first"] = r["first"] and r["first"] + ahead(r["first"])
            r["last"] = r["last"] and r["last"] + ahead(r["last"])
        elif r["kind"] == "pods":
            for p in r["pods"]:
                if p.get("lastTerminatedAt"):
                    p["lastTerminatedAt"] += ahead(p["lastTerminatedAt"])
    samples = [(t0, start), (t1, end)]
    out.timeline[1:1] = [
        {"t": samples[0][0], "kind": "clock", "when": "start", "sample": {"offset": start, "uncertainty": 0.004, "at": samples[0][0]}}
    ]
    out.timeline.append(
        {"t": samples[1][0], "kind": "clock", "when": "end", "sample": {"offset": end, "uncertainty": 0.004, "at": samples[1][0]}}
    )
    return out


@pytest.fixture
def passing():
    return facts.load_run(Path(__file__).parent / "fixtures" / "run-pass")


def timing(result):
    return [x.text() for x in result.lines if x.key == "kill_timing"]


def test_a_steady_node_clock_30_s_ahead_is_judged_as_on_one_clock(passing):
    same = verdict.judge(passing)
    ahead = verdict.judge(node_clock_ahead(passing, AHEAD_S, AHEAD_S))
    assert same.verdict == ahead.verdict == "PASS"
    assert timing(ahead) == timing(same) == ["blocking kill_timing: predicted first kill at 9-20 s, measured +13.3 s: held"]
    assert any("cluster clock minus host clock: start +30.000 s" in n for n in ahead.notes)
    assert ahead.to_json()["clock"]["offset"] == AHEAD_S


def test_without_the_measurement_the_same_run_would_be_misjudged(passing):
    # The defect the measurement removes: the kill lands 30 s late on the host's timetable.
    shifted = node_clock_ahead(passing, AHEAD_S, AHEAD_S)
    shifted.timeline = [r for r in shifted.timeline if r["kind"] != "clock"]
    assert verdict.judge(shifted).verdict == "FAIL"


def test_a_clock_that_jumps_mid_run_gives_no_verdict_and_names_the_offsets(passing):
    result = verdict.judge(node_clock_ahead(passing, 0.0, AHEAD_S))
    assert result.verdict == "INCONCLUSIVE" and result.exit_code == 2
    assert any("clock moved 30.0 s" in d and "start +0.0 s, end +30.0 s" in d for d in result.facts.disturbances), result.facts.disturbances


def test_a_drift_within_the_slack_keeps_the_verdict(passing):
    assert verdict.judge(node_clock_ahead(passing, AHEAD_S, AHEAD_S + 1.5)).verdict == "PASS"


def test_the_machine_cpu_is_read_from_proc_stat_inside_the_node(tmp_path):
    # A stand-in for `docker exec NODE sh -c LOOP` that prints two /proc/stat first lines: 300 of 400
    # jiffies busy between them.
    import time

    from liveness_lab.report import recorder

    docker = tmp_path / "docker"
    docker.write_text(
        "#!/bin/sh\n"
        '[ "$1" = exec ] && [ "$2" = kind-node ] || exit 9\n'
        "echo 'cpu  100 0 100 800 0 0 0 0 0 0'\n"
        "echo 'cpu  300 0 200 900 0 0 0 0 0 0'\n"
    )
    docker.chmod(0o755)
    seen = []
    cpu = recorder.MachineCpu("kind-node", seen.append, docker=str(docker))
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.05)
    cpu.stop()
    assert seen == [0.75]
    assert recorder.cpu_times("intr 1 2 3") is None


def test_gc_pause_stamps_move_onto_the_hosts_clock_with_the_events():
    # The container runtime stamps each GC log line on the node's clock, as the kubelet stamps its events:
    # a node 30 s ahead would put every pause 30 s after the kill it caused.
    from liveness_lab.report import clock

    timeline = [{"t": 1.0, "kind": "gclog", "pod": "p", "pauses": [[130.0, 500.0, "Full", 0.49], [131.0, 2.0, "Young"]]}]
    assert clock.to_host_clock(timeline, AHEAD_S)[0]["pauses"] == [[100.0, 500.0, "Full", 0.49], [101.0, 2.0, "Young"]]
