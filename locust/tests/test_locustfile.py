"""The locustfile swarms real service instances: every variant's requests succeed."""

import csv
import json
import subprocess
import sys

import pytest
from conftest import LOCUST_DIR, locust_cmd, run_env

from liveness_lab.base import variants
from liveness_lab.locust_ext.demo_shape import phases


def headless(services, csv_prefix, users, seconds, *args):
    """A headless Locust run of the locustfile against SERVICES, all its users started at once: its
    per-request rows of CSV_PREFIX_stats.csv (Locust exits 1 when any request failed: its files say)."""
    proc = subprocess.run(
        locust_cmd(
            "--headless", "-u", str(users), "-r", str(users), "-t", f"{seconds}s", "--csv", str(csv_prefix), "--only-summary", *args
        ),
        cwd=LOCUST_DIR,
        env=run_env(services, LIVENESS_LAB_PODS_TAB="off"),
        capture_output=True,
        text=True,
        timeout=90,
    )
    stats = csv_prefix.parent / f"{csv_prefix.name}_stats.csv"
    assert stats.is_file(), proc.stdout + proc.stderr
    return proc, {r["Name"]: r for r in csv.DictReader(open(stats))}


def test_each_variant_answers_every_request_in_a_15_second_headless_run(services, tmp_path):
    # 3 users per variant at 2 req/s of 200 ms: under a blocking pod's 4 event loops, so nothing fails.
    proc, rows = headless(services, tmp_path / "run", 6, 15, "--latency-ms", "200", "--rate-per-user", "2", "BlockingUser", "ReactiveUser")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for variant in ("blocking", "reactive"):
        row = rows[variants.request_name(variant)]
        assert int(row["Request Count"]) >= 30, row
        assert int(row["Failure Count"]) == 0, row
        assert 190 <= float(row["Median Response Time"]) < 1000, row


def test_a_request_waiting_longer_than_the_request_timeout_fails_and_a_longer_timeout_lets_it_finish(services, tmp_path):
    # Requests of 3 s: Locust gives up on each at 1 s, and waits for them with 5 s (a scenario's timeout_s).
    counts = {}
    for timeout in ("1", "5"):
        _, rows = headless(services, tmp_path / timeout, 2, 8, "--latency-ms", "3000", "--request-timeout-s", timeout, "ReactiveUser")
        row = rows[variants.request_name("reactive")]
        counts[timeout] = (int(row["Request Count"]), int(row["Failure Count"]))
    assert counts["1"][0] >= 4 and counts["1"][1] == counts["1"][0], counts
    assert counts["5"][0] >= 2 and counts["5"][1] == 0, counts


def test_hosts_default_to_the_in_cluster_services_and_switch_to_the_nodeports():
    assert variants.target_host("blocking", {}) == "http://liveness-lab-blocking:8080"
    assert variants.target_host("reactive", {"LIVENESS_LAB_TARGET": "host"}) == "http://127.0.0.1:30081"
    env = {"LIVENESS_LAB_TARGET": "host", "LIVENESS_LAB_VIRTUAL_HOST": "http://127.0.0.1:18083/"}
    assert variants.target_host("virtual", env) == "http://127.0.0.1:18083"
    with pytest.raises(ValueError):
        variants.target_host("reactive", {"LIVENESS_LAB_TARGET": "elsewhere"})


def test_the_locustfile_has_one_user_class_per_variant_of_the_table():
    # On the host: every variant of chart/values.yaml, enabled or not.
    proc = subprocess.run(locust_cmd("--list"), cwd=LOCUST_DIR, env=run_env({}), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split()[2:] == [variants.user_class(v) for v in variants.VARIANTS], proc.stdout
    assert "BlockingUser" in proc.stdout and "ReactiveUser" in proc.stdout


def test_in_the_cluster_the_user_classes_and_hosts_follow_the_charts_variant_list():
    deployed = [
        {"name": "slow-one", "mode": "reactive", "nodePort": 30090, "url": "http://rel-slow-one:8080"},
        {"name": "blocking", "mode": "blocking", "nodePort": 30080, "url": "http://rel-blocking:8080"},
    ]
    table = variants.load({"LIVENESS_LAB_VARIANTS": json.dumps(deployed)})
    assert [v.name for v in table] == ["blocking", "slow-one"]  # by nodePort, as reports list them
    assert table[1].url == "http://rel-slow-one:8080"
    proc = subprocess.run(
        [sys.executable, "-c", "import locustfile; print(locustfile.SlowOneUser.host, locustfile.BlockingUser.host)"],
        cwd=LOCUST_DIR,
        env=run_env({}, LIVENESS_LAB_VARIANTS=json.dumps(deployed), LIVENESS_LAB_TARGET="cluster"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["http://rel-slow-one:8080", "http://rel-blocking:8080"]


def test_demo_shape_ramps_holds_cools_down_and_stays_quiet_before_it_ends(monkeypatch):
    env = {
        "LIVENESS_LAB_USERS": "40",
        "LIVENESS_LAB_RAMP_S": "10",
        "LIVENESS_LAB_HOLD_S": "60",
        "LIVENESS_LAB_COOLDOWN_S": "5",
        "LIVENESS_LAB_QUIET_S": "30",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    from liveness_lab.locust_ext.demo_shape import DemoShape

    shape = DemoShape()
    at = {}
    for t in (0, 9, 30, 69, 71, 90, 106):
        monkeypatch.setattr(shape, "get_run_time", lambda t=t: t)
        at[t] = shape.tick()
    assert at[0] == (40, 4.0) and at[30] == (40, 4.0) and at[69] == (40, 4.0)
    assert at[71][0] == 0 and at[90][0] == 0
    assert at[106] is None
    assert phases(env)["hold"] == 60
