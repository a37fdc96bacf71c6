"""The scenarios (--scenarios): latency L and concurrency C, offered at Little's law's rate C / L; and one
measured run of a scenario against a JVM: open-loop load from the client of --client, the JVM's CPU time,
memory, threads and connections from /proc, its JFR profile, the kernel's accept-queue overflows, the
client's report; then the listeners' settling before the next run."""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError

from .host import (
    ESTABLISHED,
    SYNACK_RETRIES_S,
    TIME_WAIT,
    Host,
    cpu_ms,
    half_open,
    listen_overflows,
    status_field,
    tcp_sockets,
    vegeta_cpu_ms,
)
from .jvm import EVENT_LOOPS, Jvms, Target
from .load import Load
from .progress import Display

DEFAULT_SCENARIOS = "1000:100,1000:1000,1000:5000,1000:10000,100:1000"
QUICK_SCENARIOS = "1000:100,100:100"


@dataclass(frozen=True)
class Scenario:
    latency_ms: int
    concurrency: int

    @property
    def rate(self) -> int:
        """The offered rate, req/s: Little's law, C / L."""
        return self.concurrency * 1000 // self.latency_ms


def scenarios(text: str) -> list[Scenario]:
    """--scenarios: comma-separated LATENCY_MS:CONCURRENCY pairs, each above 0 (argparse type)."""
    if not re.fullmatch(r"\d+:\d+(,\d+:\d+)*", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not LATENCY_MS:CONCURRENCY pairs (e.g. --scenarios 1000:100,100:1000)")
    found = [Scenario(*map(int, pair.split(":"))) for pair in text.split(",")]
    for s in found:
        if s.latency_ms == 0 or s.concurrency == 0:
            raise argparse.ArgumentTypeError(f"'{s.latency_ms}:{s.concurrency}': latency and concurrency must be above 0")
        if s.rate == 0:
            raise argparse.ArgumentTypeError(f"'{s.latency_ms}:{s.concurrency}' offers under 1 req/s (C / L): raise C or lower L")
    return found


class ScenarioRuns:
    """The scenarios' runs of one bench: CLIENT (openloop or vegeta) offers each for DURATION seconds; the
    figures, profiles and reports in OUT, the clients' logs in LOGS."""

    def __init__(self, host: Host, jvms: Jvms, load: Load, display: Display, out: Path, logs: Path, client: str, duration: int):
        self.host, self.jvms, self.load, self.display = host, jvms, load, display
        self.out, self.logs, self.client, self.duration = out, logs, client, duration

    def run_one(self, t: Target, s: Scenario) -> dict:
        """One open-loop run of S against T, its figures."""
        pid, name, all_pids = self.jvms.pids[t.name], f"{t.name}-{s.latency_ms}-{s.concurrency}", list(self.jvms.pids.values())
        # A request may wait 10 latencies (at least 5 s) before it counts as an error; at most 2 x C
        # requests are in flight at once, so that a stalled server cannot exhaust the ephemeral ports,
        # and never more than the file descriptors allow (vegeta's sockets plus a margin).
        timeout = max(s.latency_ms * 10, 5000)
        inflight = min(s.concurrency * 2, self.host.max_fds - 500)
        tw = sum(1 for sock in tcp_sockets() if sock.state == TIME_WAIT)
        idle_rss, idle_threads = status_field(pid, "VmRSS"), status_field(pid, "Threads")
        targets_file = self.load.write_targets(f"{t.name}-{s.latency_ms}", f"http://127.0.0.1:{t.port}/api/work?latencyMs={s.latency_ms}")
        raw = self.out / f"raw-{name}.bin"
        # CPU of this mode's JVM and of all the bench started (they share one CPU) from the first request
        # until the last answer or timeout: the JVM's cost per answer, and whether another JVM took CPU from
        # this one (none while one runs at a time, which the bench does: the column checks it).
        self.jvms.jcmd(pid, "JFR.start", "name=bench", "settings=profile", check=True)
        cpu0, all0, t0, overflows0 = cpu_ms(pid), cpu_ms(*all_pids), time.monotonic(), listen_overflows()
        proc = self.start_client(t, s, name, targets_file, raw, timeout, inflight)
        under_load, usage = self.await_client(proc, t, s, pid)
        cpu, all_cpu = cpu_ms(pid) - cpu0, cpu_ms(*all_pids) - all0
        wall = int((time.monotonic() - t0) * 1000)
        overflows = listen_overflows() - overflows0
        self.jvms.jcmd(pid, "JFR.stop", "name=bench", f"filename={self.out / f'profile-{name}.jfr'}", check=True)
        self.display.show(f"profile of {t.label}, L={s.latency_ms} ms C={s.concurrency:,}")
        sleeps, shares, pauses = self.jvms.profile(name)
        vegeta = self.client_report(proc, t, name, raw)
        return {
            "mode": t.mode,
            "build": t.build,
            "latency_ms": s.latency_ms,
            "concurrency": s.concurrency,
            "offered_rps": s.rate,
            "duration_s": self.duration,
            "idle_rss_kib": idle_rss,
            "load_rss_kib": under_load["rss"],
            "idle_threads": idle_threads,
            "load_threads": under_load["threads"],
            "connections": under_load["conns"],
            "event_loops": EVENT_LOOPS,
            "cpu_ms": cpu,
            "others_cpu_ms": all_cpu - cpu,
            "wall_ms": wall,
            "max_in_flight": inflight,
            "time_wait_at_start": tw,
            "client": self.client,
            "client_address": self.load.last_address if self.client == "vegeta" else "127.0.0.1",
            "loadgen_cpu_ms": vegeta_cpu_ms(usage),
            "listen_overflows": overflows,
            "sleeps_completed": sleeps,
            "profile": f"profile-{name}.txt",
            "cpu_shares": shares,
            "gc_pauses_ms": pauses,
            "vegeta": vegeta,
        }

    def start_client(
        self, t: Target, s: Scenario, name: str, targets_file: Path, raw: Path, timeout: int, inflight: int
    ) -> subprocess.Popen:
        """The client of --client offering S to T for the run's duration: the open-loop client, its report
        to report-NAME.json, or vegeta, its results to RAW."""
        url = f"http://127.0.0.1:{t.port}/api/work?latencyMs={s.latency_ms}"
        if self.client == "openloop":
            return self.load.openloop(
                url,
                self.out / f"report-{name}.json",
                self.logs / f"client-{name}.log",
                rate=s.rate,
                duration=self.duration,
                timeout=timeout,
                connections=inflight,
            )
        return self.load.attack(
            targets_file,
            raw,
            self.logs / f"vegeta-{name}.log",
            f"-rate={s.rate}/s",
            f"-duration={self.duration}s",
            f"-timeout={timeout}ms",
            f"-max-workers={inflight}",
            f"-max-connections={inflight}",
        )

    def await_client(self, proc: subprocess.Popen, t: Target, s: Scenario, pid: int) -> tuple[dict, resource.struct_rusage]:
        """Until PROC (the client) ends: T's JVM (PID) under load, sampled 3/4 into the run, and the client's
        own CPU time (wait4: taskset execs it, so it is the same process): is the load generator the limit?"""
        sample_at = max(self.duration * 3 // 4, 1)
        sampled = {}

        def sample(elapsed):  # memory, threads and connections under load, 3/4 into the run
            if not sampled and elapsed >= sample_at:
                sampled.update(
                    rss=status_field(pid, "VmRSS"),
                    threads=status_field(pid, "Threads"),
                    conns=sum(1 for sock in tcp_sockets() if sock.local_port == t.port and sock.state == ESTABLISHED),
                )

        started = time.time()
        status = usage = None
        while status is None:
            self.display.show(f"L={s.latency_ms} ms C={s.concurrency:,} -> {t.label}", self.duration - (time.time() - started))
            sample(time.time() - started)
            pid_done, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid_done:
                status, usage = st, ru
            else:
                time.sleep(0.5)
        proc.returncode = os.waitstatus_to_exitcode(status)
        sample(float("inf"))
        return sampled, usage

    def client_report(self, proc: subprocess.Popen, t: Target, name: str, raw: Path) -> dict:
        """The client's report of the run (vegeta's JSON shape), kept as report-NAME.json; SetupError when
        the open-loop client failed."""
        if self.client == "openloop":
            text = (self.out / f"report-{name}.json").read_text()
            if proc.returncode or not text.strip():
                raise SetupError(
                    f"the open-loop client failed ({proc.returncode}) against {t.label}", f"see {self.logs / f'client-{name}.log'}"
                )
            vegeta = json.loads(text)
            LOG.info(
                "client: %s requests, %.1f%% answered, %s connections opened, sent late by %.0f ms at p99 (max %.0f ms)",
                vegeta["requests"],
                100 * vegeta["success"],
                vegeta["connections_opened"],
                vegeta["send_lag_99th"] / 1e6,
                vegeta["send_lag_max"] / 1e6,
            )
        else:
            vegeta = json.loads(self.load.report(raw))
            raw.unlink()
        (self.out / f"report-{name}.json").write_text(json.dumps(vegeta) + "\n")
        return vegeta

    def settle(self, ts: list[Target]) -> None:
        """Lets the last run's connections close: 3 s, then, while a listener has a handshake waiting or
        the kernel's ListenOverflows moved in the last 2 s, longer (at most SYNACK_RETRIES_S), so the next
        run's overflows are its own, not those of a JVM still draining an earlier backlog."""
        self.display.show("letting the last run's connections close")
        ports, first = {t.port for t in ts}, listen_overflows()
        time.sleep(3)
        started, last = time.monotonic(), listen_overflows()
        still_since = started - 3 if last == first else started  # still through the 3 s, or not
        while time.monotonic() - started < SYNACK_RETRIES_S:
            waiting = half_open(tcp_sockets(), ports)
            now = listen_overflows()
            if now != last:
                last, still_since = now, time.monotonic()
            if not waiting and time.monotonic() - still_since >= 2:
                break
            self.display.show(f"waiting for {waiting:,} half-open handshakes to end")
            time.sleep(0.5)
        waited = time.monotonic() - started
        if waited >= 0.5:
            LOG.info(
                "waited %.0f s more for the listeners to settle: %s accept queue overflows counted since the run, %s handshakes "
                "still half-open",
                waited,
                f"{last - first:,}",
                f"{half_open(tcp_sockets(), ports):,}",
            )
