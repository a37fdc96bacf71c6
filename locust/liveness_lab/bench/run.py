"""The benchmark, ``python -m liveness_lab bench`` (scripts/bench.sh execs here): every mode of the service
against Little's law, side by side in one run.

Starts every mode of the variant table (chart/values.yaml, via liveness_lab.base.variants), each in its own
JVM on 127.0.0.1 with the same heap and one CPU (taskset + -XX:ActiveProcessorCount=1, 4 event loops),
puts the load generator (open loop, constant rate) on the other CPU, warms each mode up the same way, and
offers each scenario to each mode in turn: latency L, concurrency C, rate C/L, each run recorded by JFR.
Writes reports/bench-<timestamp>/ (results.jsonl, table.md, cpu.md, memory.md, chart.png, profile-*.jfr
and the hottest methods of each in profile-*.txt, machine.txt, logs/).

Linux only: taskset pins the JVMs and the load generator to CPUs, and the figures come from /proc (RSS,
threads, CPU time, sockets, the kernel's ListenOverflows). scripts/bench.sh builds vegeta (Go) and finds
the JDK; the jars are built here with the Maven wrapper.

Here: the options and the order of the measurements (Bench). Beside it, what it runs: host.py (the
machine: what the bench needs, the lock, /proc), build.py (the jars), jvm.py (the service JVMs, jcmd,
JFR), load.py (vegeta, the open-loop client, the warm-up), scenario.py (a scenario's run), memory.py (idle
connections, waiting requests, the soak), progress.py (the display), report.py (the tables and chart).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from liveness_lab.base import ROOT
from liveness_lab.base.console import LOG, log_file
from liveness_lab.base.exits import SetupError

from . import build, host
from . import report as bench_report
from .host import BenchLock, ended, port_range, status_field_meminfo
from .jvm import EVENT_LOOPS, HEAP, MEMORY_JVM, SURVIVOR_RATIO, YOUNG, Jvms, Target, collector, floor_line, jvm_flags, targets
from .load import QUICK_WARMUP_S, WARMUP_S, WARMUP_WORKERS, Load
from .memory import DEFAULT_HELD, HOLD_LATENCY_MS, QUICK_HELD, SOAK_RATES, Memory, held_counts
from .progress import Display
from .scenario import DEFAULT_SCENARIOS, QUICK_SCENARIOS, Scenario, ScenarioRuns, scenarios


def table_modes() -> list[str]:
    """The modes of the variant table (chart/values.yaml), each once, in its order (which gives the ports)."""
    from liveness_lab.base.variants import TABLE

    return list(dict.fromkeys(v.mode for v in TABLE))


def resolve_modes(requested: list[str] | None, soak: int, known: list[str]) -> list[str]:
    """The modes to measure: REQUESTED (--modes), each one of KNOWN; default every mode, or reactive for a soak."""
    if not known:
        raise SetupError("could not read the modes of the variant table", "check chart/values.yaml `variants:`")
    if requested is None:
        return ["reactive"] if soak else list(known)
    unknown = [m for m in requested if m not in known]
    if unknown:
        raise SetupError(f"--modes: unknown mode '{unknown[0]}'", f"choose from {','.join(known)} (the modes of chart/values.yaml)")
    return list(dict.fromkeys(requested))


@dataclass
class BenchOptions:
    duration: int = 20
    modes: list[str] | None = None
    scenarios: list[Scenario] = field(default_factory=lambda: scenarios(DEFAULT_SCENARIOS))
    quick: bool = False
    idle_connections: int = 10000
    soak: int = 0
    baseline: str | None = None
    service_args: list[str] = field(default_factory=list)
    floor: bool = True
    client: str = "openloop"
    memory: bool = False
    held: list[int] = field(default_factory=lambda: held_counts(DEFAULT_HELD))
    command: str = "scripts/bench.sh"


def options(args: argparse.Namespace, command: str = "scripts/bench.sh") -> BenchOptions:
    """The parsed flags (cli.py) as BenchOptions: --quick's smaller defaults, flags given override them."""
    quick = args.quick
    return BenchOptions(
        duration=args.duration or (3 if quick else 20),
        modes=args.modes,
        scenarios=args.scenarios or scenarios(QUICK_SCENARIOS if quick else DEFAULT_SCENARIOS),
        quick=quick,
        idle_connections=args.idle_connections if args.idle_connections is not None else (1000 if quick else 10000),
        soak=args.soak,
        baseline=args.baseline,
        service_args=(args.service_args or "").split(),
        floor=getattr(args, "floor", True),
        client=getattr(args, "client", None) or "openloop",
        memory=getattr(args, "memory", False),
        held=getattr(args, "held", None) or held_counts(QUICK_HELD if quick else DEFAULT_HELD),
        command=command,
    )


def versions(path: Path = ROOT / "scripts" / "versions.env") -> dict[str, str]:
    """KEY=VALUE lines of scripts/versions.env (the one place versions are set)."""
    found = {}
    for line in path.read_text().splitlines():
        m = re.match(r"([A-Z][A-Z0-9_]*)=(\S*)", line)
        if m:
            found[m.group(1)] = m.group(2).strip("\"'")
    return found


class Bench:
    """One bench: the machine checked, the lock taken, the jars built, then every JVM in turn, alone, through
    its measurements (measure_one), and the report."""

    def __init__(self, opts: BenchOptions, console, environ=os.environ):
        self.opts, self.console, self.environ = opts, console, environ
        self.cache = Path(environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab")
        self.versions = versions()
        self.procs: list[subprocess.Popen] = []  # every process the bench started (JVMs, attacks, holders): stop_all
        self.warmup_s = QUICK_WARMUP_S if opts.quick else WARMUP_S
        self.display = Display(console)
        self.meminfo = Path("/proc/meminfo")

    def check_host(self) -> None:
        """This machine as the bench needs it (host.check), else SetupError."""
        vegeta = self.cache / f"vegeta-{self.versions.get('VEGETA_VERSION', '')}" / "bin" / "vegeta"
        self.host = host.check(self.environ, vegeta, self.meminfo, HEAP, max(self.opts.held) if self.opts.memory else 0)

    def wire(self, test_classpath: str) -> None:
        """The parts that measure, on this host, writing to self.out, their processes in self.procs."""
        o, out, logs = self.opts, self.out, self.logs
        self.jvms = Jvms(self.host, out, logs, self.procs, o.service_args, o.memory)
        self.load = Load(self.host, out, logs, self.procs, self.display, self.warmup_s, test_classpath)
        self.runs = ScenarioRuns(self.host, self.jvms, self.load, self.display, out, logs, o.client, o.duration)
        self.memory = Memory(self.host, self.jvms, self.load, self.display, out, logs, self.procs, o.idle_connections, o.held)

    def run(self, out: Path | None = None) -> int:
        o = self.opts
        known = table_modes()
        modes = resolve_modes(o.modes, o.soak, known)
        if o.baseline and "reactive" not in known:
            raise SetupError("--baseline runs the reactive mode, which the variant table does not have", "check chart/values.yaml")
        self.check_host()
        with BenchLock(self.cache / "bench.lock"):
            self.out = out or ROOT / "reports" / f"bench-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
            self.logs = self.out / "logs"
            self.logs.mkdir(parents=True, exist_ok=True)
            with log_file(self.logs / "bench.log"):
                LOG.info("%s", o.command)
                lo, hi = port_range()
                LOG.info(
                    "file descriptors: %s; ephemeral ports: %s-%s; services on CPU %s, the load generator on CPU %s; report: %s",
                    self.host.max_fds,
                    lo,
                    hi,
                    self.host.service_cpu,
                    self.host.loadgen_cpu,
                    self.out,
                )
                jar = build.ensure_jar(self.logs)
                baseline = build.ensure_baseline_jar(self.logs, self.cache, o.baseline) if o.baseline else None
                # The floor is the reactive mode's: one more row wherever reactive is measured (not in a soak).
                test_classpath = (
                    build.ensure_test_classpath(self.logs)
                    if (o.floor and "reactive" in modes or o.client == "openloop") and not o.soak
                    else ""
                )
                floor = test_classpath if o.floor and "reactive" in modes and not o.soak else ""
                self.wire(test_classpath)
                try:
                    return self.measure(targets(modes, known, jar, baseline, floor), modes, baseline)
                finally:
                    self.stop_all()

    def measure(self, ts: list[Target], modes: list[str], baseline) -> int:
        o, out = self.opts, self.out
        runs = [s for s in o.scenarios] if not (o.soak or o.memory) else []
        idle = o.idle_connections if not (o.soak or o.memory) else 0
        steps = (
            len(ts) * (2 if o.memory else 1)
            + (len(modes) * len(SOAK_RATES) if o.soak else 0)
            + (len(ts) if idle else 0)
            + len(runs) * len(ts)
        )
        self.display.start(steps)
        for name, on in (("soak.jsonl", o.soak), ("requests-memory.jsonl", o.memory), ("memory.jsonl", idle), ("results.jsonl", runs)):
            if on:
                (out / name).write_text("")
        try:
            for t in ts:
                with self.jvms.running(t):
                    LOG.info("ready: %s", t.label)
                    self.measure_one(t, runs, idle)
        finally:
            self.display.stop()
        (out / "machine.txt").write_text(self.machine(ts, baseline))
        bench_report.main(out)
        LOG.info("done: %s", out)
        shown = [(out / name).read_text() for name in ("soak.md", "requests-memory.md", "table.md", "floor.md") if (out / name).is_file()]
        print("\n".join(shown), end="", flush=True)
        return 0

    def measure_one(self, t: Target, runs: list[Scenario], idle: int) -> None:
        """Every measurement of T's JVM, in the order the bench always takes them: the warm-up, then the
        soak, the held requests, the idle connections or the scenarios."""
        o, out = self.opts, self.out
        LOG.info(
            "warm-up of %s: %ss of 1 ms requests from %s keep-alive clients, %ss from 32 with a new connection each",
            t.label,
            self.warmup_s,
            WARMUP_WORKERS,
            self.warmup_s // 2,
        )
        self.load.warm_up(t)
        self.display.advance()
        if o.soak and not t.build:
            for rate in SOAK_RATES:
                LOG.info("soak of %s: %s req/s of 1 s for %s min", t.label, rate, o.soak)
                append_json(out / "soak-results.jsonl", self.memory.soak_phase(t, rate, o.soak))
                self.display.advance()
        if o.memory:
            LOG.info("heap of %s waiting requests -> %s", ",".join(map(str, o.held)), t.label)
            for record in self.memory.request_memory(t):
                append_json(out / "requests-memory.jsonl", record)
            self.display.advance()
        if idle:
            LOG.info("memory of %s idle keep-alive connections -> %s", idle, t.label)
            append_json(out / "memory.jsonl", self.memory.idle_memory(t))
            self.display.advance()
        for s in runs:
            LOG.info("L=%s ms C=%s (%s req/s offered) -> %s", s.latency_ms, s.concurrency, s.rate, t.label)
            append_json(out / "results.jsonl", self.runs.run_one(t, s))
            self.display.advance()
            self.runs.settle([t])

    def machine(self, targets: list[Target], baseline: tuple[str, Path] | None) -> str:
        """machine.txt: the machine, the versions, the JVMs' settings and collector, what this bench ran."""
        mem_kib = status_field_meminfo("MemTotal")
        os_name = next(
            (
                line.split("=", 1)[1].strip().strip('"')
                for line in Path("/etc/os-release").read_text().splitlines()
                if line.startswith("PRETTY_NAME=")
            ),
            platform.platform(),
        )
        java_bin = str(self.host.java_home / "bin" / "java")
        java = subprocess.run([java_bin, "-version"], capture_output=True, text=True).stderr.splitlines()[:1]
        lines = [
            f"machine: {os.cpu_count()} CPUs, {mem_kib / 1048576:.0f} GiB, {os_name}",
            f"date: {datetime.now(UTC):%Y-%m-%dT%H:%MZ}",
            f"java: {java[0] if java else '?'}",
            f"client: {self.opts.client}; vegeta: {self.versions.get('VEGETA_VERSION')}; service: "
            f"{self.versions.get('SERVICE_VERSION')}; heap {HEAP} (young {YOUNG}, survivor ratio {SURVIVOR_RATIO}); "
            f"{EVENT_LOOPS} event loops; 1 CPU per JVM; warm-up {self.warmup_s}s from {WARMUP_WORKERS} keep-alive clients + "
            f"{self.warmup_s // 2}s new connections",
        ]
        if baseline:
            lines.append(f"baseline: reactive as built at {baseline[0]} ({self.opts.baseline}), the rows marked ({baseline[0]})")
        if any(t.classpath for t in targets):
            lines.append(floor_line(self.opts.service_args))
        flags_final = subprocess.run(
            [java_bin, *jvm_flags(self.opts.memory, self.opts.service_args), "-XX:+PrintFlagsFinal", "-version"],
            capture_output=True,
            text=True,
        ).stdout
        lines.append(f"collector: {collector(flags_final)}")
        if self.opts.memory:
            lines.append(
                f"memory: {', '.join(f'{n:,}' for n in self.opts.held)} requests of {HOLD_LATENCY_MS:,} ms held in turn; "
                f"JFR's old-object samples with {' '.join(MEMORY_JVM)}"
            )
        if self.opts.service_args:
            lines.append(f"service arguments: {' '.join(self.opts.service_args)}")
        return "\n".join(lines) + "\n"

    def stop_all(self) -> None:
        """Every process the bench started (JVMs, attacks, the holder) that still runs."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            ended(proc)


def append_json(path: Path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")


def run_bench(opts: BenchOptions, console, environ=os.environ) -> int:
    """The bench; 0 when it measured what it was asked to, SETUP (3) when it could not start or go on."""
    return Bench(opts, console, environ).run()
