"""The benchmark's logic (liveness_lab/bench/: run.py and the modules beside it; scripts/bench.sh execs it): flags, scenarios,
modes from the variant table, the one-bench lock, what it reads from /proc and the JDK's tools, and the
report built from a recorded run (fixtures/bench/: a `scripts/bench.sh --quick` of the bash bench, with the
table.md, memory.md and cpu.md it wrote), and --memory's histograms, JFR samples and report (fixtures/bench-memory/).
No JVM and no load here."""

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import yaml
from conftest import FIXTURES, LOCUST_DIR, REPO

from liveness_lab.base.exits import SETUP, SetupError
from liveness_lab.bench import heap, host, jvm, load, scenario
from liveness_lab.bench import report as bench_report
from liveness_lab.bench import run as bench
from liveness_lab.bench.host import BenchLock
from liveness_lab.bench.progress import Display
from liveness_lab.bench.run import resolve_modes
from liveness_lab.bench.scenario import Scenario, scenarios
from liveness_lab.cli import parse

RECORDED = FIXTURES / "bench"


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "liveness_lab", "bench", *args], cwd=LOCUST_DIR, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--duration", "0"], "--duration"),
        (["--duration", "ten"], "--duration"),
        (["--scenarios", "1000"], "--scenarios"),
        (["--scenarios", "0:100"], "--scenarios"),
        (["--scenarios", "1000:0"], "--scenarios"),
        (["--scenarios", "1000:100,"], "--scenarios"),
        (["--idle-connections", "-5"], "--idle-connections"),
        (["--soak", "0"], "--soak"),
        (["--modes", ","], "--modes"),
        (["--baseline", " "], "--baseline"),
        (["--service-args"], "--service-args"),
        (["--client", "wrk"], "--client"),
        (["--bogus"], "--bogus"),
        (["--memory", "--held", "0"], "--held"),
        (["--memory", "--held", "1000,"], "--held"),
        (["--memory", "--held", "many"], "--held"),
        (["--held", "1000"], "--held"),
        (["--memory", "--scenarios", "1000:100"], "--scenarios"),
        (["--memory", "--soak", "5"], "--soak"),
        (["--memory", "--duration", "5"], "--duration"),
        (["--memory", "--idle-connections", "10"], "--idle-connections"),
        (["--memory", "--client", "vegeta"], "--client"),
    ],
)
def test_a_bad_flag_is_a_usage_error_naming_it(args, flag):
    done = run_cli(*args)
    assert done.returncode == SETUP == 3, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert error and flag in error[0], done.stderr
    assert "fix: see scripts/bench.sh --help" in done.stderr


def test_help_names_every_flag_and_the_exit_codes():
    done = run_cli("--help")
    assert done.returncode == 0
    for flag in (
        "--duration",
        "--modes",
        "--scenarios",
        "--quick",
        "--idle-connections",
        "--soak",
        "--baseline",
        "--service-args",
        "--no-floor",
        "--client",
        "--memory",
        "--held",
    ):
        assert flag in done.stdout
    assert "3         usage or set-up error" in done.stdout


def test_scenarios_parse_in_order_with_their_rate():
    assert scenarios("1000:100,100:1000") == [Scenario(1000, 100), Scenario(100, 1000)]
    assert [s.rate for s in scenarios("1000:5000,100:1000,2000:100")] == [5000, 10000, 50]
    with pytest.raises(Exception, match="under 1 req/s"):
        scenarios("2000:1")


def test_quick_sets_smaller_defaults_and_flags_given_override_them():
    o = bench.options(parse(["bench", "--quick"]))
    assert (o.duration, o.idle_connections, o.scenarios) == (3, 1000, [Scenario(1000, 100), Scenario(100, 100)])
    o = bench.options(parse(["bench", "--quick", "--duration", "7", "--idle-connections", "0", "--scenarios", "500:50"]))
    assert (o.duration, o.idle_connections, o.scenarios) == (7, 0, [Scenario(500, 50)])
    o = bench.options(parse(["bench"]))
    assert (o.duration, o.idle_connections, o.scenarios) == (20, 10000, scenarios(scenario.DEFAULT_SCENARIOS))


def test_the_measured_runs_use_the_open_loop_client_unless_vegeta_is_asked_for():
    assert bench.options(parse(["bench"])).client == "openloop"
    assert bench.options(parse(["bench", "--client", "vegeta"])).client == "vegeta"


def test_service_args_may_start_with_a_dash_and_split_at_spaces():
    o = bench.options(parse(["bench", "--service-args", "--demo.netty-metrics=true -XX:+UseG1GC", "--modes", "reactive"]))
    assert o.service_args == ["--demo.netty-metrics=true", "-XX:+UseG1GC"]
    assert o.modes == ["reactive"]


def test_modes_come_from_the_variant_table():
    table = yaml.safe_load((REPO / "chart" / "values.yaml").read_text())["variants"]
    by_port = sorted(table.values(), key=lambda v: int(v["nodePort"]))
    want = list(dict.fromkeys(v["mode"] for v in by_port))
    known = bench.table_modes()
    assert known == want and "reactive" in known
    assert resolve_modes(None, 0, known) == want
    assert resolve_modes(None, 10, known) == ["reactive"]  # a soak's default
    assert resolve_modes(["reactive", "blocking"], 0, known) == ["reactive", "blocking"]


def test_an_unknown_mode_is_refused_naming_the_choices():
    with pytest.raises(SetupError) as e:
        resolve_modes(["reactive", "turbo"], 0, ["blocking", "reactive"])
    assert "unknown mode 'turbo'" in e.value.message
    assert "blocking,reactive" in e.value.fix


def test_each_mode_has_its_port_and_the_baseline_its_own():
    known = ["blocking", "reactive", "offloaded", "virtual"]
    ts = jvm.targets(["virtual", "reactive"], known, REPO / "a.jar", ("1fb73c8", REPO / "b.jar"))
    assert [(t.name, t.label, t.port) for t in ts] == [
        ("virtual", "virtual", 19083),
        ("reactive", "reactive", 19081),
        ("reactive_baseline", "reactive (1fb73c8)", 19181),
    ]
    assert ts[2].jar == REPO / "b.jar"


def test_the_floor_runs_from_the_test_classes_on_its_own_port():
    known = ["blocking", "reactive"]
    ts = jvm.targets(["reactive"], known, REPO / "a.jar", None, floor="/cp/test-classes:/cp/classes")
    assert [(t.name, t.port, t.jar, t.classpath) for t in ts] == [
        ("reactive", 19081, REPO / "a.jar", ""),
        ("floor", 19079, None, "/cp/test-classes:/cp/classes"),
    ]
    assert bench.options(parse(["bench", "--no-floor"])).floor is False and bench.options(parse(["bench"])).floor is True


def test_the_lock_refuses_a_second_bench(tmp_path):
    path = tmp_path / "cache" / "bench.lock"
    with BenchLock(path):
        with pytest.raises(SetupError, match="another scripts/bench.sh is running"):
            with BenchLock(path):
                pass
        # ...from another process too (flock(1)'s lock, as the bash bench took it, is the same lock).
        other = subprocess.run(["flock", "-n", str(path), "true"]) if shutil.which("flock") else None
        assert other is None or other.returncode != 0
    with BenchLock(path):  # given back
        pass


def test_the_lock_is_refused_while_another_process_holds_it(tmp_path):
    path = tmp_path / "bench.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(LOCUST_DIR)!r})
        from liveness_lab.bench.host import BenchLock
        with BenchLock({str(path)!r}):
            print("held", flush=True); sys.stdin.read()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SetupError):
            BenchLock(path).__enter__()
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    with BenchLock(path):
        pass


def test_proc_readers():
    netstat = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 17 19\nIpExt: InNoRoutes\nIpExt: 0\n"
    assert host.listen_overflows(netstat) == 17
    tcp = textwrap.dedent("""\
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:4A98 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
           1: 0100007F:4A98 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2 1
           2: 0100007F:D431 0100007F:4A98 06 00000000:00000000 00:00000000 00000000     0        0 3 1
        """)
    tcp6 = textwrap.dedent("""\
          sl  local_address                         remote_address                        st tx_queue rx_queue
           0: 0000000000000000FFFF00000200007F:D432 0000000000000000FFFF00000100007F:4A98 06 00000000:00000000
           1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000
        """)
    assert host.tcp_sockets([tcp, tcp6]) == [
        ("127.0.0.1", 19096, 0, "0A"),
        ("127.0.0.1", 19096, 54321, "01"),
        ("127.0.0.1", 54321, 19096, "06"),
        ("127.0.0.2", 54322, 19096, "06"),
        ("::1", 8080, 0, "0A"),
    ]
    assert host.cpu_ms() == 0
    assert host.status_field(1 << 30, "VmRSS") == 0  # no such process


def test_half_open_counts_the_handshakes_waiting_on_the_given_listeners_only():
    S = host.Socket
    sockets = [
        S("127.0.0.1", 19096, 0, "0A"),
        S("127.0.0.1", 19096, 40001, "03"),
        S("127.0.0.1", 19096, 40002, "03"),
        S("127.0.0.1", 19097, 40003, "03"),
        S("127.0.0.1", 19096, 40004, "01"),
        S("127.0.0.2", 40005, 19096, "03"),
    ]
    assert host.half_open(sockets, {19096}) == 2
    assert host.half_open(sockets, {19096, 19097}) == 3
    assert host.half_open(sockets, {8080}) == 0


def test_each_attack_gets_a_source_address_no_socket_uses():
    def sock(ip, state="06"):
        return host.Socket(ip, 40000, 19079, state)

    assert host.client_address([]) == ("127.0.0.2", 0)
    # The last runs' connections in TIME_WAIT on 127.0.0.2 and open on 127.0.0.3: the next address.
    assert host.client_address([sock("127.0.0.1"), sock("127.0.0.2"), sock("127.0.0.3", "01")]) == ("127.0.0.4", 0)
    # Every address used: the one with the fewest sockets.
    busy = [sock(a) for a in host.CLIENT_ADDRESSES for _ in range(2)]
    busy.remove(sock("127.0.0.9"))
    assert host.client_address(busy) == ("127.0.0.9", 1)


needs_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not shutil.which("taskset"), reason="the bench's loopback addresses and taskset are Linux's"
)


@needs_linux
def test_a_port_in_time_wait_is_taken_on_its_address_only():
    """What client_address relies on: bind(2) refuses a port a socket in TIME_WAIT holds on the same
    address (vegeta binds every socket before connecting) and gives it on another loopback address."""
    import errno
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        server_port = server.getsockname()[1]
        client = socket.socket()
        client.bind(("127.0.0.2", 0))
        client.connect(server.getsockname())
        port = client.getsockname()[1]
        accepted, _ = server.accept()
        client.close()  # the side that closes first holds the port in TIME_WAIT
        accepted.close()
        time.sleep(0.2)
    assert ("127.0.0.2", port, server_port, host.TIME_WAIT) in host.tcp_sockets()
    with socket.socket() as again, pytest.raises(OSError) as refused:
        again.bind(("127.0.0.2", port))
    assert refused.value.errno == errno.EADDRINUSE
    with socket.socket() as elsewhere:
        elsewhere.bind(("127.0.0.3", port))
    assert host.client_address(host.tcp_sockets())[0] != "127.0.0.2"


FAKE_VEGETA = """\
#!/usr/bin/env python3
# A stand-in for vegeta attack: one connection from -laddr to the port in $PORT, closed first (TIME_WAIT).
import os, socket, sys
laddr = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("-laddr="))
print(laddr, flush=True)
with socket.socket() as s:
    s.bind((laddr, 0))
    s.connect(("127.0.0.1", int(os.environ["PORT"])))
"""


@needs_linux
def test_the_attack_after_one_that_left_time_wait_meets_a_fresh_client(tmp_path, monkeypatch):
    import socket

    fake = tmp_path / "vegeta"
    fake.write_text(FAKE_VEGETA)
    fake.chmod(0o755)
    b = load.Load(host.Host(tmp_path, fake, service_cpu=0, loadgen_cpu=0, max_fds=1024), tmp_path, tmp_path, [], Display(None))
    with socket.create_server(("127.0.0.1", 0)) as server:
        monkeypatch.setenv("PORT", str(server.getsockname()[1]))
        used = []
        for i in range(2):
            proc = b.attack(tmp_path / "targets.txt", tmp_path / f"raw-{i}", tmp_path / f"err-{i}")
            assert proc.wait(timeout=30) == 0, (tmp_path / f"err-{i}").read_text()
            server.accept()[0].close()
            time.sleep(0.2)
            used.append((tmp_path / f"raw-{i}").read_text().strip())
    assert used[0] == b.last_address or used[1] == b.last_address
    assert used[0] != used[1]  # the first left a port in TIME_WAIT on its address
    assert all(a.startswith("127.0.0.") for a in used)


def test_sleeps_completed_counts_the_sleeps_that_ran_their_time():
    events = textwrap.dedent("""\
        jdk.ThreadSleep {
          startTime = 12:00:00.000 (2026-11-24)
          duration = 1.00 s
          time = 1.00 s
        }
        jdk.ThreadSleep {
          duration = 312 ms
          time = 1.00 s
        }
        jdk.ThreadSleep {
          duration = 99.8 ms
          time = 100 ms
        }
        """)
    assert jvm.sleeps_completed(events) == 2


def test_pauses_cell_counts_collections_and_says_when_the_longest_stop_was_under_a_millisecond():
    assert bench_report.pauses({"gc_pauses_ms": [12.4, 230.4]}) == "2 (230 ms)"
    # A concurrent collector's pauses (ZGC's 0.02-0.04 ms, Shenandoah's 0.14-0.27 ms here) are not a '0 ms' stop.
    assert bench_report.pauses({"gc_pauses_ms": [0.12, 0.71, 0.08]}) == "3 (under 1 ms)"
    assert bench_report.pauses({"gc_pauses_ms": []}) == "0"
    assert bench_report.pauses({}) == "-"


def test_gc_pauses_are_each_collections_longest_pause_in_order():
    events = textwrap.dedent("""\
        jdk.GarbageCollection {
          startTime = 15:07:51.737 (2026-11-26)
          duration = 192 ms
          gcId = 12
          name = "DefNew"
          cause = "Allocation Failure"
          sumOfPauses = 192 ms
          longestPause = 192 ms
        }
        jdk.GarbageCollection {
          startTime = 15:07:59.549 (2026-11-26)
          duration = 1.08 s
          gcId = 13
          name = "DefNew"
          sumOfPauses = 1.08 s
          longestPause = 1.08 s
        }
        """)
    assert jvm.gc_pauses(events) == [192.0, 1080.0]
    assert jvm.gc_pauses("") == []


def test_memory_figures_from_jcmd():
    nmt = textwrap.dedent("""\
        Total: reserved=2000000KB, committed=900000KB
        -                 Java Heap (reserved=1048576KB, committed=1048576KB)
        -                     Class (reserved=1000KB, committed=200KB)
        -                    Thread (reserved=30000KB, committed=3000KB)
        """)
    heap = textwrap.dedent("""\
         def new generation   total 707840K, used 123456K [0x...)
          eden space 629248K,  19% used [0x...)
         tenured generation   total 262144K, used 1000K [0x...)
         Metaspace       used 50000K, committed 51000K, reserved 1114112K
          class space    used 6000K, committed 6500K, reserved 1048576K
        """)
    assert jvm.memory_figures(nmt, heap, 4321) == {"Java Heap": 1048576, "Class": 200, "Thread": 3000, "heap used": 124456, "RSS": 4321}


def test_the_collector_is_the_one_the_jvm_runs_with():
    picked = textwrap.dedent("""\
            ccstr ShenandoahGCMode                         = satb                {product} {default}
             bool UseAdaptiveSizePolicyWithSystemGC        = false               {product} {default}
             bool UseG1GC                                  = false               {product} {default}
             bool UseMaximumCompactionOnSystemGC           = true                {product} {default}
             bool UseSerialGC                              = true                {product} {ergonomic}
             bool UseShenandoahGC                          = false               {product} {default}
        """)
    given = (
        picked.replace("= satb ", "= generational ")
        .replace("UseSerialGC                              = true", "UseSerialGC                              = false")
        .replace("UseShenandoahGC                          = false", "UseShenandoahGC                          = true")
    )
    assert jvm.collector(picked) == "Serial"
    assert jvm.collector(given) == "Shenandoah (generational)"
    assert jvm.collector("") == "unknown"


def test_the_floor_line_says_which_layer_the_floor_ran():
    assert "bare Reactor Netty, no Spring" in jvm.floor_line(["-XX:+UseSerialGC"])
    assert "bare Reactor Netty, no Spring" in jvm.floor_line(["--floor.layer=netty"])
    line = jvm.floor_line(["--demo.x=1", "--floor.layer=webflux"])
    assert "Spring's webflux layer" in line and "no Spring" not in line


def test_the_report_of_a_recorded_run(tmp_path):
    out = tmp_path / "bench"
    shutil.copytree(RECORDED, out)
    for name in ("table.md", "memory.md", "cpu.md"):
        (out / name).unlink()
    bench_report.main(out)
    # The same tables as the bash bench wrote from these runs.
    for name in ("table.md", "memory.md", "cpu.md"):
        assert (out / name).read_text() == (RECORDED / name).read_text(), name
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = {(r["label"], r["latency_ms"]): r for r in json.loads((out / "results.json").read_text())}
    assert len(rows) == 8
    # reactive at L = 100 ms, C = 100: 3,000 answers over the window in which answers can arrive.
    r = rows[("reactive", 100)]
    assert r["achieved_rps"] == pytest.approx(3000 / ((2998775578 + 100304205 - 100200702) / 1e9))
    assert r["of_bound"] == pytest.approx(r["achieved_rps"] / 1000)
    # blocking at L = 1 s: 32 of 206 answered, 40 sleeps finished over 12.036 s.
    b = rows[("blocking", 1000)]
    assert (b["requests"], b["errors"]) == (206, 174)
    assert b["server_rps"] == pytest.approx(40 / 12.036)
    assert not (out / "floor.md").exists()  # a run without the floor has no floor table
    table = (out / "table.md").read_text()
    assert table.startswith("machine: 2 CPUs")
    assert "| reactive | 100 ms | 100 | 1,000 | 1,000 | 100.0% |" in table
    # The copy kept no profile: none is linked; one that is there is.
    assert "[top frames]" not in table
    (out / "profile-reactive-100-100.txt").write_text("hot frames\n")
    bench_report.main(out)
    assert (out / "table.md").read_text().count("[top frames](profile-reactive-100-100.txt)") == 1


def test_the_floor_table_holds_each_mode_against_the_floor_of_its_scenario(tmp_path):
    out = tmp_path / "bench"
    shutil.copytree(RECORDED, out)
    runs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    reactive = next(r for r in runs if r["mode"] == "reactive" and r["latency_ms"] == 100)
    # A floor run at L = 100 ms: half the reactive run's CPU, 10 ms less at p99.
    floor = json.loads(json.dumps(reactive)) | {"mode": "floor", "cpu_ms": reactive["cpu_ms"] // 2}
    floor["vegeta"]["latencies"]["99th"] -= 10_000_000
    # The open-loop client's second half: 3 ms over L at p99 (the recorded vegeta runs have none).
    floor["vegeta"]["latencies_second_half"] = {"50th": 100_500_000, "99th": 103_000_000, "count": 1500}
    # Two collections in the reactive run, none in the floor's.
    reactive["gc_pauses_ms"], floor["gc_pauses_ms"] = [12.4, 230.4], []
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*runs, floor]))
    bench_report.main(out)
    rows = [line for line in (out / "floor.md").read_text().splitlines() if line.startswith("| reactive | 100 ms")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].split("|")[1:-1]]
    assert cells[4] == "2.00" and cells[6] == "+10 ms"
    assert cells[7] == "2 (230 ms) (0)"
    # The reactive run has no second half recorded (vegeta), the floor's has: only the floor's cell shows one.
    shown = re.fullmatch(r"(-?\d+) ms \((-?\d+) ms \(2nd half 3 ms\)\)", cells[5])
    assert shown and int(shown[1]) - int(shown[2]) == 10, cells[5]
    # Only the scenario the floor ran in: no row for L = 1 s.
    assert "| reactive | 1000 ms" not in (out / "floor.md").read_text()


def test_each_jvm_runs_alone_started_once_the_one_before_is_stopped(tmp_path, monkeypatch):
    """Eight JVMs started at once on the services' one CPU: the first was not ready after 120 s; and each
    holds a heap of HEAP, one at a time. A measurement that fails still stops its JVM."""
    b = bench.Bench(bench.BenchOptions(scenarios=scenarios("1000:100")), None)
    b.out = tmp_path
    b.jvms = jvm.Jvms(None, tmp_path, tmp_path, [], [], memory=False)
    events = []
    b.jvms.start = lambda t: events.append(("start", t))
    b.jvms.await_ready = lambda t: events.append(("ready", t))
    b.jvms.stop = lambda t: events.append(("stop", t))
    b.measure_one = lambda t, runs, idle: events.append(("measure", t, len(runs), idle))
    b.machine = lambda ts, baseline: ""
    monkeypatch.setattr(bench_report, "main", lambda out: None)
    blocking, reactive = (jvm.Target(m, 19080 + i, REPO / "service.jar") for i, m in enumerate(("blocking", "reactive")))
    b.measure([blocking, reactive], ["blocking", "reactive"], None)
    assert events == [e for t in (blocking, reactive) for e in (("start", t), ("ready", t), ("measure", t, 1, 10000), ("stop", t))]
    events.clear()

    def fail(t, runs, idle):
        raise SetupError("the client failed", "see its log")

    b.measure_one = fail
    with pytest.raises(SetupError):
        b.measure([reactive, blocking], ["reactive", "blocking"], None)
    assert events == [("start", reactive), ("ready", reactive), ("stop", reactive)]


def test_a_machine_without_the_memory_for_one_heap_is_refused_before_a_jvm_starts(tmp_path):
    (tmp_path / "jdk" / "bin").mkdir(parents=True)
    (tmp_path / "jdk" / "bin" / "jcmd").write_text("")
    vegeta = tmp_path / "vegeta"
    vegeta.write_text("#!/bin/sh\n")
    vegeta.chmod(0o755)
    b = bench.Bench(bench.BenchOptions(), None, environ={"JAVA_HOME": str(tmp_path / "jdk"), "LIVENESS_LAB_VEGETA": str(vegeta)})
    b.meminfo = tmp_path / "meminfo"
    b.meminfo.write_text("MemTotal:       24683276 kB\nMemAvailable:    4194304 kB\n")
    with pytest.raises(SetupError) as refused:
        b.check_host()
    assert "4.0 GiB of memory available" in str(refused.value) and "scripts/cluster-down.sh" in refused.value.fix
    b.meminfo.write_text("MemTotal:       24683276 kB\nMemAvailable:   20971520 kB\n")
    b.check_host()


# --- --memory: heap per waiting request (bench/heap.py) ------------------------------------------------

HELD = FIXTURES / "bench-memory"


def test_memory_holds_the_default_counts_and_quick_fewer():
    o = bench.options(parse(["bench", "--memory"]))
    assert (o.memory, o.held) == (True, [1000, 2000, 5000])
    assert bench.options(parse(["bench", "--memory", "--quick"])).held == [100, 200]
    assert bench.options(parse(["bench", "--memory", "--quick", "--held", "300,50"])).held == [300, 50]
    assert bench.options(parse(["bench"])).memory is False


def test_only_the_memory_jvms_get_small_tlabs_for_the_sampler():
    flags = jvm.jvm_flags(memory=True, service_args=["-XX:+UseZGC"])
    assert flags[-3:] == [*jvm.MEMORY_JVM, "-XX:+UseZGC"]  # the user's flags last, so they win
    assert not set(jvm.MEMORY_JVM) & set(jvm.jvm_flags(memory=False, service_args=[]))


def test_a_histogram_is_read_without_the_collectors_fillers():
    text = textwrap.dedent("""\
        4242:
         num     #instances         #bytes  class name (module)
        -------------------------------------------------------
           1:         69738        4265648  [B (java.base@25.0.3)
           2:         13472        2502456  [Ljdk.internal.vm.FillerElement; (java.base@25.0.3)
           3:          3000          96000  org.Foo$$Lambda/0x000000004f6ca128
           4:          1000          32000  org.Foo$$Lambda/0x000000004f6c9ee8
           5:            10            160  jdk.internal.vm.FillerObject (java.base@25.0.3)
           6:             2             64  [[Ljava.lang.String; (java.base@25.0.3)
        Total         87222        6896328
        """)
    h = heap.histogram(text)
    assert h["live"] == 6896328 - 2502456 - 160 and h["filler"] == 2502456 + 160
    # One row per lambda whatever its address, Java's names for arrays.
    assert h["classes"] == {"byte[]": [69738, 4265648], "org.Foo$$Lambda": [4000, 128000], "java.lang.String[][]": [2, 64]}
    # Without its Total line (a shortened histogram), the rows.
    assert heap.histogram("\n".join(text.splitlines()[:-1]))["live"] == 4265648 + 128000 + 64
    with pytest.raises(ValueError, match="not a class histogram"):
        heap.histogram("4242:\nAttachNotSupportedException: no such process\n")


def test_recorded_histograms_name_what_a_waiting_request_holds_on_tomcat():
    """servlet-async's recorded hold (run 1 of issue 49): 1,000 connections idle, then a request waiting on each."""
    connections = heap.histogram((HELD / "histogram-servlet-async-1000-connections.txt").read_text())
    held = heap.histogram((HELD / "histogram-servlet-async-1000-held.txt").read_text())
    top = heap.grown(connections, held, 3)
    assert [name for name, _, _ in top][:2] == ["byte[]", "char[]"]
    name, nbytes, count = top[0]
    assert nbytes == held["classes"]["byte[]"][1] - connections["classes"]["byte[]"][1] and count > 0
    libs = heap.by_library(connections, held)
    assert list(libs)[0] == heap.JDK and libs["Tomcat"] > libs.get("Spring", 0) > 0
    assert heap.library("org.apache.coyote.http11.Http11Processor") == "Tomcat"
    assert heap.library("[Lio.netty.handler.codec.DefaultHeaders$HeaderEntry;") == "Netty"


def test_old_object_samples_name_the_allocating_site_outside_the_jdk():
    samples = heap.old_object_samples((HELD / "held-servlet-async-1000.txt").read_text())
    assert samples and all(n > 0 for _, _, n in samples)
    kinds = {(kind, site) for kind, site, _ in samples}
    assert ("char[]", "org.apache.catalina.connector.OutputBuffer.<init>") in kinds
    # A stack of JDK frames only keeps its top frame; sizes in kB are bytes.
    event = textwrap.dedent("""\
        jdk.OldObjectSample {
          objectSize = 16.0 kB
          object =  [
            byte[16384]
          ]
          stackTrace = [
            java.nio.HeapByteBuffer.<init>(int, int, MemorySegment) line: 71
            java.nio.ByteBuffer.allocate(int) line: 391
          ]
        }
        """)
    assert heap.old_object_samples(event) == [("byte[]", "java.nio.HeapByteBuffer.<init>", 16384)]
    ranked = heap.sites(
        [("char[]", "a.B.<init>", 16384), ("byte[]", "c.D.m", 24), ("byte[]", "c.D.m", 24), ("x.Y", "e.F.lambda$0.0x0000000036206d18", 9)]
    )
    assert ranked[0] == ("c.D.m", "byte[]", 2, 0.5)  # by samples: a sample stands for about a TLAB of allocation
    assert ("e.F.lambda$0", "x.Y", 1, 0.25) in ranked


def test_socket_queues_count_the_requests_unread_and_the_answers_come_back():
    # Server 127.0.0.1:19069 (0x4A7D): one request read (rx 0), one not (0x50 bytes unread); a client with an
    # answer waiting (rx 0x120), one without; a closed one (TIME_WAIT) that counts for nothing.
    tcp = textwrap.dedent("""\
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:4A7D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
           1: 0100007F:4A7D 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2 1
           2: 0100007F:4A7D 0100007F:D432 01 00000000:00000050 00:00000000 00000000     0        0 3 1
           3: 0100007F:D431 0100007F:4A7D 01 00000000:00000120 00:00000000 00000000     0        0 4 1
           4: 0100007F:D432 0100007F:4A7D 01 00000000:00000000 00:00000000 00000000     0        0 5 1
           5: 0100007F:D433 0100007F:4A7D 06 00000000:00000000 00:00000000 00000000     0        0 6 1
        """)
    assert heap.socket_queues([tcp], 19069) == {"server": 2, "unread": 1, "answered": 1}
    assert heap.socket_queues([tcp], 19085) == {"server": 0, "unread": 0, "answered": 0}


def test_in_flight_is_read_from_the_services_prometheus_page():
    page = '# TYPE demo_requests_in_flight gauge\ndemo_requests_in_flight{application="x",mode="servlet"} 200.0\n'
    assert heap.in_flight(page) == 200
    assert heap.in_flight(page.replace("200.0", "0.0")) == 0
    assert heap.in_flight("jvm_threads_live_threads 22.0\n") is None


def test_kib_per_waiting_request_from_the_live_sets():
    record = {
        "opened": 1000,
        "read": 200,
        "live": {"idle": 40 * 1024**2, "connections": 56 * 1024**2, "held": 76 * 1024**2, "after": 41 * 1024**2},
    }
    f = heap.figures(record)
    assert f == pytest.approx(
        {"per_connection": 16 * 1.024, "per_request": 36 * 1.024, "beyond_connection": 20 * 1024 / 200, "left_after": 1.024}
    )
    assert heap.figures(record | {"read": 0})["beyond_connection"] is None
    # Each request more: from the smallest hold to the largest, whatever the first one cost once.
    bigger = record | {"opened": 5000, "live": record["live"] | {"held": 76 * 1024**2 + 4000 * 90 * 1024}}
    assert heap.slope([bigger, record]) == pytest.approx(90)
    assert heap.slope([record]) is None


def test_the_report_of_a_recorded_memory_run(tmp_path):
    out = tmp_path / "bench"
    shutil.copytree(HELD, out)
    (out / "requests-memory.md").unlink()
    bench_report.main(out)
    assert (out / "requests-memory.md").read_text() == (HELD / "requests-memory.md").read_text()
    assert not (out / "results.json").exists() and not (out / "table.md").exists()  # no scenarios, no table
