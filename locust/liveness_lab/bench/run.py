"""The benchmark, ``python -m liveness_lab bench`` (scripts/bench.sh execs here): every mode of the service
against Little's law, side by side in one run.

Starts every mode of the variant table (chart/values.yaml, via liveness_lab.variants), each in its own
JVM on 127.0.0.1 with the same heap and one CPU (taskset + -XX:ActiveProcessorCount=1, 4 event loops),
puts the load generator (vegeta, open loop, constant rate) on the other CPU, warms each mode up the same
way, and offers each scenario to each mode in turn: latency L, concurrency C, rate C/L, each run
recorded by JFR. Writes reports/bench-<timestamp>/ (results.jsonl, table.md, cpu.md, memory.md,
chart.png, profile-*.jfr and the hottest methods of each in profile-*.txt, machine.txt, logs/).

Linux only: taskset pins the JVMs and vegeta to CPUs, and the figures come from /proc (RSS, threads, CPU
time, sockets, the kernel's ListenOverflows). scripts/bench.sh builds vegeta (Go) and finds the JDK; the
jars are built here with the Maven wrapper.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import json
import os
import platform
import re
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from liveness_lab.base import ROOT
from liveness_lab.base.console import LOG, log_file
from liveness_lab.base.exits import SetupError

DEFAULT_SCENARIOS = "1000:100,1000:1000,1000:5000,1000:10000,100:1000"
QUICK_SCENARIOS = "1000:100,100:100"
EVENT_LOOPS = 4
# The heap of every mode, the same for all (issue 49), sized from what a request in flight holds
# (`--memory`, docs/benchmark.md): up to 107 KiB on Tomcat (servlet-virtual), 9.9 on Reactor
# Netty. The serial collector (the JVM's pick on one CPU) copies every request still in flight into a
# survivor space at each young collection; what does not fit goes to the old generation, which fills and
# ends in full collections (with 1 GiB, 768 MiB young: servlet-async at C = 5,000 stopped 16.6 s of a 33 s
# run, reactive at 10,000 15.0 s). So a survivor space of 1 GiB holds 9,800 Tomcat requests: the 5,000 in
# flight of the goal's C = 5,000 at L = 1 s, and as many again that an open-loop client sends while answers
# are late (reactive's 10,000 take 97 MiB); eden 2 GiB, so a young collection comes every few seconds, not
# every second, and most requests are answered before it; the old generation 1 GiB, 25 times the idle
# live set (20-40 MiB). One JVM runs at a time (Bench.running), so the machine holds one such heap.
HEAP, YOUNG, SURVIVOR_RATIO = "5g", "4g", 2
# What a bench needs free: the heap, the JVM's own memory beside it, the open-loop client's 512 MiB heap.
NEED_MEMORY_GIB = 6
# Ports: 19080, 19081, ... in the variant table's order of modes; 19180, ... for the baseline's build;
# 19079 for the floor.
PORT_BASE, BASELINE_PORT_BASE, FLOOR_PORT = 19080, 19180, 19079
# The floor: /api/work of the reactive mode on bare Reactor Netty, no Spring (service/src/test/java/
# io/livenesslab/service/FloorServer.java), built with the service's tests, run from its classes.
FLOOR_MAIN = "io.livenesslab.service.FloorServer"
# The load generator of the measured runs (--client): OpenLoopClient (service/src/test/java/io/livenesslab/
# service/OpenLoopClient.java: Netty, one event loop, latency from each request's intended send time),
# built with the floor from the service's tests; or vegeta. vegeta binds every socket before connecting,
# and at C = 10,000 the kernel's search for a port to bind took most of its CPU (docs/benchmark.md).
CLIENTS = ("openloop", "vegeta")
OPENLOOP_MAIN = "io.livenesslab.service.OpenLoopClient"
# C1 only: C2 compiling on the client's one CPU in the first seconds of a run at 10,000 req/s made it send
# seconds late and open connections in a storm; with C1 the code is compiled in a fraction of a second.
OPENLOOP_JVM = ["-XX:ActiveProcessorCount=1", "-XX:TieredStopAtLevel=1", "-Xms512m", "-Xmx512m"]
# The warm-up (see warm_up): seconds of keep-alive clients (half that with a new connection each), clients.
WARMUP_S, QUICK_WARMUP_S, WARMUP_WORKERS = 20, 4, 1000
# --soak: the demo's rate (20 users at 1 request/s of 1 s), then 10 times that.
SOAK_RATES = (20, 200)
# --memory: how many requests each mode holds in turn (--held), and how long each asks to wait: the
# service's default cap (DemoProperties' latencyMaxMs), so none is answered while its heap is measured.
DEFAULT_HELD, QUICK_HELD = "1000,2000,5000", "100,200"
HOLD_LATENCY_MS = 60000
# --memory's JVMs only: small fixed TLABs, so JFR's old-object sampler (which samples on a thread's TLAB
# refill) sees the small objects of a request too; with the 768 MiB young generation's large TLABs it
# sampled 3 of 2,000 reactive requests. A TLAB's size changes how fast objects are allocated, not which
# stay alive.
MEMORY_JVM = ["-XX:-ResizeTLAB", "-XX:TLABSize=16k"]


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


def held_counts(text: str) -> list[int]:
    """--held: comma-separated numbers of requests to hold, each above 0 (argparse type)."""
    if not re.fullmatch(r"\d+(,\d+)*", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not comma-separated numbers of requests (e.g. --held 1000,2000,5000)")
    found = [int(n) for n in text.split(",")]
    if 0 in found:
        raise argparse.ArgumentTypeError(f"'{text}': every number of requests must be above 0")
    return found


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


@dataclass(frozen=True)
class Target:
    """One JVM to measure: a mode of this build, or of the baseline's (build: its short commit)."""

    mode: str
    port: int
    jar: Path | None
    build: str = ""
    classpath: str = ""  # the floor: run FLOOR_MAIN from these classes instead of a jar

    @property
    def name(self) -> str:  # in file names: reactive, reactive_baseline
        return self.mode + ("_baseline" if self.build else "")

    @property
    def label(self) -> str:  # in the tables: reactive, reactive (1fb73c8)
        return self.mode + (f" ({self.build})" if self.build else "")


def targets(modes: list[str], known: list[str], jar: Path, baseline: tuple[str, Path] | None, floor: str = "") -> list[Target]:
    """Every mode of this build, the floor (its classpath, when given), then the baseline's reactive mode."""
    found = [Target(m, PORT_BASE + known.index(m), jar) for m in modes]
    if floor:
        found.append(Target("floor", FLOOR_PORT, None, classpath=floor))
    if baseline:
        found.append(Target("reactive", BASELINE_PORT_BASE + known.index("reactive"), baseline[1], baseline[0]))
    return found


# --- One bench at a time -------------------------------------------------------------------------------


class BenchLock:
    """An exclusive flock(2) on CACHE/bench.lock for the bench's life: a second bench would share the CPUs
    and ports and spoil both. The descriptor is not inherited (Python's default), so a JVM still
    shutting down never holds it."""

    def __init__(self, path: Path):
        self.path, self.fd = Path(path), None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SetupError(f"another scripts/bench.sh is running (it holds {self.path})", "wait for it to finish, or stop it") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# --- What /proc says ------------------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def status_field(pid: int, name: str) -> int:
    """A number of /proc/PID/status (VmRSS in KiB, Threads); 0 when the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def runnable_threads(pid: int) -> int:
    """The threads of PID running or ready to run (state R, field 3 of /proc/PID/task/TID/stat)."""
    n = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                n += (task / "stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
    return n


def cpu_ms(*pids: int) -> int:
    """User + system CPU time the processes have used, in ms (fields 14 and 15 of /proc/PID/stat)."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # fields after "(comm)" start at field 3
    return ticks * 1000 // CLK_TCK


# TCP states of /proc/net/tcp.
ESTABLISHED, SYN_RECV, TIME_WAIT = "01", "03", "06"

# How long the kernel retransmits a SYN-ACK (net.ipv4.tcp_synack_retries = 5: 1 + 2 + 4 + 8 + 16 + 32 s)
# for a handshake a listener could not yet accept, plus a margin: the longest the bench waits after a run
# for the listeners to settle (after blocking's runs the overflows went on for 51-53 s, docs/benchmark.md).
SYNACK_RETRIES_S = 63 + 7


class Socket(NamedTuple):
    local_ip: str
    local_port: int
    remote_port: int
    state: str


def _ip(hex_address: str) -> str:
    """An address of /proc/net/tcp[6] (32-bit words in host order, little-endian here), IPv4-mapped IPv6
    addresses as IPv4."""
    raw = b"".join(bytes.fromhex(hex_address[i : i + 8])[::-1] for i in range(0, len(hex_address), 8))
    address = ipaddress.ip_address(raw)
    return str(getattr(address, "ipv4_mapped", None) or address)


def tcp_sockets(texts: list[str] | None = None) -> list[Socket]:
    """Every TCP socket (IPv4 and IPv6) as Socket(local address, local port, remote port, state)."""
    if texts is None:
        texts = []
        for name in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(OSError):
                texts.append(Path(name).read_text())
    found = []
    for text in texts:
        for line in text.splitlines()[1:]:
            f = line.split()
            if len(f) > 3:
                local_ip, local_port = f[1].rsplit(":", 1)
                found.append(Socket(_ip(local_ip), int(local_port, 16), int(f[2].rsplit(":", 1)[1], 16), f[3]))
    return found


# The load generator's source addresses: on Linux all of 127.0.0.0/8 is the loopback interface's.
CLIENT_ADDRESSES = [f"127.0.0.{n}" for n in range(2, 255)]


def client_address(sockets: list[Socket]) -> tuple[str, int]:
    """The source address for the next attack and how many sockets it has: the first of CLIENT_ADDRESSES
    with none (else the one with fewest). vegeta binds every socket before connecting, and bind(2) takes no
    port that a socket in TIME_WAIT (60 s after its connection closed) holds on the same address: after a
    run at C = 5,000 (about 10,000 such sockets) the kernel searched most of the ephemeral range for every
    new connection (inet_csk_bind_conflict), vegeta spent its CPU in the kernel and the next target met a
    collapsed client. Ports are taken per address, so an address no socket uses is a fresh client."""
    count: dict[str, int] = {}
    for s in sockets:
        count[s.local_ip] = count.get(s.local_ip, 0) + 1
    address = min(CLIENT_ADDRESSES, key=lambda a: count.get(a, 0))  # the first of the fewest
    return address, count.get(address, 0)


def listen_overflows(text: str | None = None) -> int:
    """The kernel's count of connections dropped because a listener's accept queue was full (TcpExt
    ListenOverflows, this network namespace). During a run only the measured JVM accepts new connections
    and the bench starts it once the earlier runs' handshakes have ended (settle), so the run's
    difference is its own: a client whose handshakes wait for SYN retransmits (1 s, 3 s, ...) measures
    the accept path, not Little's law."""
    text = Path("/proc/net/netstat").read_text() if text is None else text
    rows = [line.split() for line in text.splitlines() if line.startswith("TcpExt:")]
    return int(dict(zip(rows[0], rows[1], strict=False))["ListenOverflows"])


def half_open(sockets: list[Socket], ports) -> int:
    """The handshakes (SYN_RECV) waiting on the listeners of PORTS: while a JVM's accept queue is full
    (blocking's, long after its run), a handshake it cannot accept can count ListenOverflows again,
    whichever run is being measured then."""
    return sum(1 for sock in sockets if sock.state == SYN_RECV and sock.local_port in ports)


def port_range() -> tuple[int, int]:
    lo, hi = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    return int(lo), int(hi)


# --- What the JDK's tools say ---------------------------------------------------------------------------


def _number(text: str) -> float:
    """awk's reading of a number: its leading digits (1,002 -> 1), 0 when none."""
    m = re.match(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", text)
    return float(m.group()) if m else 0.0


def _ms(value: str, unit: str) -> float:
    x = _number(value)
    return {"s": x * 1000, "ms": x, "min": x * 60000}.get(unit, x / 1000)


def sleeps_completed(thread_sleep_text: str) -> int:
    """The jdk.ThreadSleep events (`jfr print`) whose duration reached 95 % of the time asked for: a client
    that gives up cancels offloaded's and virtual's sleeps, which then end early, so these are the work
    blocking, offloaded and virtual finished."""
    n, d = 0, 0.0
    for line in thread_sleep_text.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "duration":
            d = _ms(f[2], f[3])
        elif len(f) >= 4 and f[0] == "time" and d >= 0.95 * _ms(f[2], f[3]):
            n += 1
    return n


def gc_pauses(collections_text: str) -> list[float]:
    """The longest pause of each collection in `jfr print --events jdk.GarbageCollection`, in ms, in order:
    with the serial collector the JVM picks on one CPU each is a young collection, which stops every
    event loop while it copies the requests in flight."""
    return [_ms(f[2], f[3]) for line in collections_text.splitlines() if len(f := line.split()) >= 4 and f[0] == "longestPause"]


NMT_LINE = re.compile(r"^-\s*([A-Za-z][A-Za-z ]*[A-Za-z]) \(reserved=\d+KB, committed=(\d+)KB")
USED = re.compile(r" used (\d+)K")


def memory_figures(native_memory: str, heap_info: str, rss_kib: int) -> dict:
    """Native Memory Tracking's committed KiB per category, every generation's "used" (one line for G1;
    young and tenured for the serial collector, which the JVM picks on one CPU), not Metaspace's, and RSS."""
    found = {m.group(1): int(m.group(2)) for m in map(NMT_LINE.match, native_memory.splitlines()) if m}
    found["heap used"] = sum(
        int(m.group(1)) for line in heap_info.splitlines() if not re.search("Metaspace|class space", line) and (m := USED.search(line))
    )
    found["RSS"] = rss_kib
    return found


JVM_FLAG = ("-XX:", "-D", "-X")  # a --service-args word that goes to the JVM, not to Spring
GC_FLAG = re.compile(r"^\s*bool\s+Use(Serial|Parallel|G1|Z|Shenandoah|Epsilon)GC\s+=\s+true\b", re.M)
SHENANDOAH_MODE = re.compile(r"^\s*ccstr\s+ShenandoahGCMode\s+=\s+(\w+)", re.M)


def collector(flags_final: str) -> str:
    """The collector a JVM runs with, from its -XX:+PrintFlagsFinal: the one it was given, else the one it
    picked (Serial on one CPU); Shenandoah with its mode (satb, or generational)."""
    found = GC_FLAG.search(flags_final)
    if not found:
        return "unknown"
    name = found.group(1)
    mode = SHENANDOAH_MODE.search(flags_final) if name == "Shenandoah" else None
    return f"{name} ({mode.group(1)})" if mode else name


def floor_line(service_args: list[str]) -> str:
    """What the floor row ran: bare Reactor Netty, or one Spring layer more (--service-args --floor.layer=X)."""
    layer = next((a.split("=", 1)[1] for a in service_args if a.startswith("--floor.layer=")), "netty")
    if layer == "netty":
        return "floor: reactive's /api/work on bare Reactor Netty, no Spring (FloorServer, the service's test classes)"
    return (
        f"floor: reactive's /api/work on Reactor Netty with Spring's {layer} layer (FloorServer --floor.layer={layer}, the "
        "service's test classes)"
    )


def vegeta_cpu_ms(usage: resource.struct_rusage) -> int:
    return int((usage.ru_utime + usage.ru_stime) * 1000)


# --- The run --------------------------------------------------------------------------------------------


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
    def __init__(self, opts: BenchOptions, console, environ=os.environ):
        self.opts, self.console, self.environ = opts, console, environ
        self.cache = Path(environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab")
        self.versions = versions()
        self.procs: list[subprocess.Popen] = []
        self.last_address = ""  # the source address of the last attack (client_address)
        self.test_classpath = ""  # the floor's and OpenLoopClient's (ensure_test_classpath)
        self.pids: dict[str, int] = {}
        self.warmup_s = QUICK_WARMUP_S if opts.quick else WARMUP_S
        self.progress = self.task = None
        self.meminfo = Path("/proc/meminfo")

    # Set-up ------------------------------------------------------------------------------------------

    def check_host(self) -> None:
        if platform.system() != "Linux":
            raise SetupError(
                "scripts/bench.sh runs on Linux only (it pins processes to CPUs with taskset)",
                "run it in a Linux VM or on a Linux machine; scripts/cluster-up.sh and scripts/demo.sh run here",
            )
        if not shutil.which("taskset"):
            raise SetupError("taskset is not installed", "apt-get install util-linux")
        java_home = self.environ.get("JAVA_HOME")
        if not java_home or not Path(java_home, "bin", "jcmd").is_file():
            raise SetupError(
                f"no JDK at JAVA_HOME='{java_home or ''}'", "run scripts/bench.sh (it finds a JDK >= 21), or set JAVA_HOME to one"
            )
        self.java_home = Path(java_home)
        self.vegeta = Path(
            self.environ.get("LIVENESS_LAB_VEGETA") or self.cache / f"vegeta-{self.versions.get('VEGETA_VERSION', '')}" / "bin" / "vegeta"
        )
        if not os.access(self.vegeta, os.X_OK):
            raise SetupError(f"vegeta is not built ({self.vegeta})", "run scripts/bench.sh, which builds it")
        # One CPU for the services, the other for the load generator (on one CPU they share it).
        self.service_cpu, self.loadgen_cpu = (1, 0) if (os.cpu_count() or 1) >= 2 else (0, 0)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        for want in (1048576, hard):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))
                break
        self.max_fds = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        available, need = status_field_meminfo("MemAvailable", self.meminfo), NEED_MEMORY_GIB * 1048576
        if available and available < need:
            raise SetupError(
                f"{available / 1048576:.1f} GiB of memory available: each mode's JVM takes a heap of {HEAP} (one at a time) and the "
                f"load generator its own, about {NEED_MEMORY_GIB} GiB",
                "stop what holds the memory (a kind cluster: scripts/cluster-down.sh), or run on a machine with more",
            )
        if self.opts.memory and max(self.opts.held) + 500 > self.max_fds:
            raise SetupError(
                f"--held {max(self.opts.held):,}: the holder needs a file descriptor per connection, and the limit is {self.max_fds:,}",
                "hold fewer (--held), or raise the hard limit (ulimit -Hn, /etc/security/limits.conf)",
            )

    def step(self, name: str, argv: list[str], cwd: Path | None = None) -> None:
        """A build step with its output in logs/NAME.log, as the shell's `step` does."""
        log = self.logs / f"{name}.log"
        LOG.info("%s ... (log: %s)", name, log)
        started = time.time()
        with open(log, "w") as f:
            if subprocess.run(argv, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode:
                tail = log.read_text(errors="replace").splitlines()[-5:]
                raise SetupError(f"{name} failed: " + " | ".join(t.strip() for t in tail), f"see {log}")
        LOG.info("%s done in %.0fs", name, time.time() - started)

    def ensure_jar(self) -> Path:
        """service/target's jar, built with the Maven wrapper when missing or older than a source."""
        service = ROOT / "service"
        jar = service / "target" / "liveness-lab-service.jar"
        if jar.is_file():
            built = jar.stat().st_mtime
            sources = [service / "pom.xml", *(p for p in (service / "src").rglob("*") if p.is_file())]
            if not any(p.stat().st_mtime > built for p in sources):
                return jar
        self.step("bench-jar", [str(service / "mvnw"), "-f", str(service / "pom.xml"), "-B", "-q", "package", "-DskipTests"])
        return jar

    def ensure_test_classpath(self) -> str:
        """The classpath of the floor and the open-loop client: the service's classes and test classes
        (FloorServer and OpenLoopClient are among the tests, so they never go into the jar or the image) and
        the test scope's dependencies, from Maven (their versions: service/pom.xml's Spring Boot parent)."""
        service = ROOT / "service"
        cp_file = service / "target" / "floor.classpath"
        self.step(
            "bench-floor",
            [
                str(service / "mvnw"),
                "-f",
                str(service / "pom.xml"),
                "-B",
                "-q",
                "test-compile",
                "dependency:build-classpath",
                "-Dmdep.includeScope=test",
                f"-Dmdep.outputFile={cp_file}",
            ],
        )
        return os.pathsep.join([str(service / "target" / "test-classes"), str(service / "target" / "classes"), cp_file.read_text().strip()])

    def ensure_baseline_jar(self, ref: str) -> tuple[str, Path]:
        """The service as built at git revision REF (built once, cached by commit): (short commit, jar)."""
        git = ["git", "-C", str(ROOT)]
        found = subprocess.run([*git, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], capture_output=True, text=True)
        if found.returncode:
            raise SetupError(f"--baseline: '{ref}' is not a git revision of this clone", "e.g. --baseline HEAD~1, or a commit from git log")
        sha = found.stdout.strip()
        short = subprocess.run([*git, "rev-parse", "--short", sha], capture_output=True, text=True, check=True).stdout.strip()
        jar = self.cache / "build" / f"bench-baseline-{sha}.jar"
        if jar.is_file():
            return short, jar
        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp, "service.tar")
            self.step("bench-baseline-archive", [*git, "archive", "-o", str(archive), sha, "service"])
            self.step("bench-baseline-untar", ["tar", "-x", "-C", tmp, "-f", str(archive)])
            pom = Path(tmp, "service", "pom.xml")
            self.step("bench-baseline-jar", [str(pom.parent / "mvnw"), "-f", str(pom), "-B", "-q", "package", "-DskipTests"])
            jar.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pom.parent / "target" / "liveness-lab-service.jar", f"{jar}.tmp")
            os.replace(f"{jar}.tmp", jar)
        return short, jar

    # Processes ---------------------------------------------------------------------------------------

    def on_loadgen(self, *argv) -> list[str]:
        return ["taskset", "-c", str(self.loadgen_cpu), *map(str, argv)]

    def jcmd(self, pid: int, *args: str, check: bool = False) -> str:
        """The JDK's jcmd on the load generator's CPU, not the services'."""
        done = subprocess.run(self.on_loadgen(self.java_home / "bin" / "jcmd", pid, *args), capture_output=True, text=True)
        if check and done.returncode:
            LOG.warning("jcmd %s %s: %s", pid, " ".join(args), (done.stdout + done.stderr).strip()[-300:])
        return done.stdout

    def jfr(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.on_loadgen(self.java_home / "bin" / "jfr", *args), capture_output=True, text=True)

    def jvm_flags(self) -> list[str]:
        """Every service JVM's flags: one CPU, the heap, the event loops, then --service-args' JVM flags."""
        return [
            "-XX:ActiveProcessorCount=1",
            f"-Xms{HEAP}",
            f"-Xmx{HEAP}",
            f"-Xmn{YOUNG}",
            f"-XX:SurvivorRatio={SURVIVOR_RATIO}",
            f"-Dreactor.netty.ioWorkerCount={EVENT_LOOPS}",
            *(MEMORY_JVM if self.opts.memory else []),
            *(a for a in self.opts.service_args if a.startswith(JVM_FLAG)),
        ]

    def start(self, t: Target) -> None:
        """T's JVM on the services' CPU; --service-args split into JVM flags (-XX:, -D, -X) and Spring's."""
        spring = [a for a in self.opts.service_args if not a.startswith(JVM_FLAG)]
        argv = [
            "taskset",
            "-c",
            str(self.service_cpu),
            str(self.java_home / "bin" / "java"),
            *self.jvm_flags(),
            "-XX:NativeMemoryTracking=summary",
            *(["-cp", t.classpath, FLOOR_MAIN] if t.classpath else ["-jar", str(t.jar)]),
            f"--server.port={t.port}",
            f"--demo.mode={t.mode}",
            "--logging.level.root=WARN",
            *spring,
        ]
        with open(self.logs / f"service-{t.name}.log", "w") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        self.pids[t.name] = proc.pid

    @contextlib.contextmanager
    def running(self, t: Target):
        """T's JVM alone on the services' CPU, from its start until it is ready, then stopped when its
        measurements are done: one JVM at a time, so every mode gets the whole CPU for its start-up (eight
        Spring Boot JVMs started at once on one CPU: the first was not ready after 120 s) and
        the machine's memory holds one heap at a time (HEAP)."""
        self.start(t)
        self.await_ready(t)
        try:
            yield
        finally:
            self.stop(t)

    def await_ready(self, t: Target, limit_s: int = 120) -> None:
        deadline = time.time() + limit_s
        proc = next(p for p in self.procs if p.pid == self.pids[t.name])
        while time.time() < deadline:
            if proc.poll() is not None:
                raise SetupError(f"{t.label} exited ({proc.returncode}) before it was ready", f"see {self.logs / f'service-{t.name}.log'}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{t.port}/readyz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            time.sleep(1)
        raise SetupError(f"{t.label} did not get ready in {limit_s} s", f"see {self.logs / f'service-{t.name}.log'}")

    def stop(self, t: Target) -> None:
        proc = next(p for p in self.procs if p.pid == self.pids[t.name])
        if proc.poll() is None:
            proc.terminate()
        ended(proc)

    def stop_all(self) -> None:
        """Every process the bench started (JVMs, attacks, the holder) that still runs."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            ended(proc)

    def write_targets(self, name: str, url: str) -> Path:
        path = self.out / f"target-{name}.txt"
        path.write_text(f"GET {url}\n")
        return path

    def attack(self, targets_file: Path, raw: Path, err: Path, *flags: str, append: bool = False) -> subprocess.Popen:
        """vegeta attack on the load generator's CPU, its results to RAW, from a loopback address no socket
        uses (client_address): every attack meets a fresh client, whatever the attacks before it closed."""
        sockets = tcp_sockets()
        address, used = client_address(sockets)
        self.last_address = address
        LOG.info(
            "client source address %s (%s sockets on it; %s sockets in TIME_WAIT on the others)",
            address,
            used,
            sum(1 for sock in sockets if sock.state == TIME_WAIT and sock.local_ip != address),
        )
        with open(raw, "wb") as out, open(err, "a" if append else "w") as log:
            proc = subprocess.Popen(
                self.on_loadgen(self.vegeta, "attack", f"-targets={targets_file}", f"-laddr={address}", *flags),
                stdout=out,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        self.procs.append(proc)  # stopped with the JVMs when the bench is interrupted
        return proc

    def openloop(self, url: str, report: Path, err: Path, rate: int, duration: int, timeout: int, connections: int) -> subprocess.Popen:
        """OpenLoopClient (OPENLOOP_MAIN) on the load generator's CPU, its JSON report (vegeta's shape) to
        REPORT. It connects without binding first, so the ports of closed connections cost it nothing."""
        argv = self.on_loadgen(
            self.java_home / "bin" / "java",
            *OPENLOOP_JVM,
            "-cp",
            self.test_classpath,
            OPENLOOP_MAIN,
            f"--url={url}",
            f"--rate={rate}",
            f"--duration-s={duration}",
            f"--timeout-ms={timeout}",
            f"--max-connections={connections}",
        )
        with open(report, "w") as out, open(err, "w") as log:
            proc = subprocess.Popen(argv, stdout=out, stderr=log, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def report(self, raw: Path, kind: str = "json") -> str:
        with open(raw, "rb") as f:
            return subprocess.run([str(self.vegeta), "report", f"-type={kind}"], stdin=f, capture_output=True, text=True, check=True).stdout

    def follow(self, proc: subprocess.Popen, seconds: float, what: str, every=None) -> None:
        """Waits for PROC (an attack of SECONDS), the progress display counting down; EVERY(elapsed) each second."""
        started = time.time()
        while proc.poll() is None:
            elapsed = time.time() - started
            self.show(what, seconds - elapsed)
            if every:
                every(elapsed)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)

    # Progress ----------------------------------------------------------------------------------------

    def show(self, what: str, left_s: float | None = None) -> None:
        if self.progress is not None:
            left = "" if left_s is None else f"{max(0, int(left_s)) // 60}:{max(0, int(left_s)) % 60:02d} left"
            self.progress.update(self.task, description=what, left=left)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    # Phases ------------------------------------------------------------------------------------------

    def warm_up(self, t: Target) -> None:
        """The same warm-up for every mode before it is measured, whatever ran before it, in two closed-loop
        phases of latencyMs=1 (each client sends its next request when its answer came):
         1. warmup_s seconds from WARMUP_WORKERS keep-alive clients: the request path, and the write path
            as it runs under load (answers queued on a connection from the timer thread, several per flush);
         2. warmup_s / 2 seconds from 32 clients with keep-alive off: a new connection per request (accept,
            pipeline set-up, close), as an open-loop client opens thousands.
        Then a pause for the compiler's queue. Closed loop on purpose: an open-loop warm-up at 2,000 req/s
        was a storm, not a warm-up (a cold reactive JVM answered 389 req/s of it, 12,697 of 21,565 requests
        failed). 1 ms on purpose: the modes that block drain 1,000 such requests in a fraction of a second,
        where 1 s requests would leave a backlog that spoils their first run. Measured (reactive, C = 5,000
        next, issue 15): after 32 keep-alive clients alone, the JIT compiler still took 3.3-5.0 s of CPU
        during the run (the write path under load was not compiled yet); after these two phases, 0.9 s."""
        targets_file = self.write_targets(f"{t.name}-warmup", f"http://127.0.0.1:{t.port}/api/work?latencyMs=1")
        raw, err = self.out / f"raw-{t.name}-warmup.bin", self.logs / f"vegeta-{t.name}-warmup.log"
        phases = [
            (self.warmup_s, [f"-workers={WARMUP_WORKERS}", f"-max-workers={WARMUP_WORKERS}"]),
            (self.warmup_s // 2, ["-workers=32", "-max-workers=32", "-keepalive=false"]),
        ]
        texts, left = [], sum(seconds for seconds, _ in phases) + 5
        for i, (seconds, flags) in enumerate(phases):
            proc = self.attack(targets_file, raw, err, "-rate=0", *flags, f"-duration={seconds}s", "-timeout=5s", append=i > 0)
            self.follow(proc, left, f"warm-up of {t.label}")
            left -= seconds
            texts.append(self.report(raw, "text"))
        raw.unlink(missing_ok=True)
        (self.logs / f"warmup-{t.name}.txt").write_text("".join(texts))
        self.show(f"warm-up of {t.label}: a pause for the compiler", 5)
        time.sleep(5)

    def snapshot(self, pid: int) -> dict:
        """After a full GC, the JVM's own accounting (memory_figures): Native Memory Tracking (summary mode:
        a few % of CPU, on for every run alike), the heap in use, and RSS."""
        self.jcmd(pid, "GC.run", check=True)
        time.sleep(1)
        return memory_figures(
            self.jcmd(pid, "VM.native_memory", "summary", "scale=KB"), self.jcmd(pid, "GC.heap_info"), status_field(pid, "VmRSS")
        )

    def idle_memory(self, t: Target) -> dict:
        """What holding --idle-connections idle keep-alive connections costs T's JVM: the snapshots before
        and while holding them (hold_connections.py, on the load generator's CPU)."""
        pid, n = self.pids[t.name], self.opts.idle_connections
        before = self.snapshot(pid)
        log = self.logs / f"hold-{t.name}.log"
        with open(log, "w") as f:
            holder = subprocess.Popen(
                self.on_loadgen(sys.executable, Path(__file__).with_name("hold_connections.py"), t.port, n),
                stdin=subprocess.PIPE,
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        self.procs.append(holder)
        opened = None
        deadline = time.time() + 300
        while opened is None and time.time() < deadline and holder.poll() is None:
            self.show(f"memory of {n:,} idle connections -> {t.label}")
            opened = next((line for line in log.read_text(errors="replace").splitlines() if line.startswith("open ")), None)
            if opened is None:
                time.sleep(1)
        if opened is None:
            LOG.warning("%s: the connections did not open in 300 s (see %s)", t.label, log)
        during = self.snapshot(pid)
        holder.stdin.close()
        holder.wait()
        opened = opened or "open 0"
        return {
            "mode": t.mode,
            "build": t.build,
            "asked": n,
            "opened": int(opened.split()[1]),
            "open_line": opened,
            "before": before,
            "during": during,
        }

    # --memory: heap per waiting request ---------------------------------------------------------------

    def histogram(self, pid: int, name: str) -> dict:
        """jcmd GC.class_histogram (a full collection first), kept as histogram-NAME.txt, read (heap.histogram)."""
        from . import heap

        text = self.jcmd(pid, "GC.class_histogram", check=True)
        (self.out / f"histogram-{name}.txt").write_text(text)
        try:
            return heap.histogram(text)
        except ValueError as e:
            raise SetupError(f"jcmd {pid} GC.class_histogram: {e}", f"see {self.out / f'histogram-{name}.txt'}") from None

    @staticmethod
    def read_line(proc: subprocess.Popen, prefix: str, limit_s: float) -> str | None:
        """The first line of PROC's standard output that starts with PREFIX, within LIMIT_S, else None."""
        deadline = time.time() + limit_s
        buffered = b""
        while time.time() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buffered += chunk
            for line in buffered.decode(errors="replace").split("\n")[:-1]:  # whole lines only
                if line.startswith(prefix):
                    return line
        return None

    def queues(self, port: int) -> dict[str, int]:
        from . import heap

        texts = []
        for name in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(OSError):
                texts.append(Path(name).read_text())
        return heap.socket_queues(texts, port)

    def await_read(self, t: Target, sent: int, limit_s: int = 60) -> int:
        """How many of the SENT requests the server has read (the rest wait in its sockets' receive queues):
        all of them, or as many as it took once the count stood still for 3 s."""
        deadline, last, still_since = time.time() + limit_s, -1, time.time()
        while time.time() < deadline:
            read = sent - self.queues(t.port)["unread"]
            if read >= sent:
                return read
            if read != last:
                last, still_since = read, time.time()
            elif time.time() - still_since >= 3:
                return read
            self.show(f"{t.label}: the server has read {read:,} of {sent:,} requests")
            time.sleep(0.5)
        return last

    def await_quiet(self, t: Target, limit_s: int = 60) -> float:
        """Until T's JVM has had no thread running or ready to run (R in /proc/PID/task/*/stat) in at least 7
        of 8 looks over 2 s, at most LIMIT_S; the seconds waited. A request the server has read may not be
        waiting yet: the virtual modes' threads, queued for their one carrier, build their stacks (and the
        objects a waiting request holds) only when they run up to their sleep. Not its CPU time: a JVM that
        other processes starve of its CPU uses little of it and is not done."""
        pid, started = self.pids[t.name], time.time()
        while time.time() - started < limit_s:
            busy = 0
            for _ in range(8):
                busy += runnable_threads(pid) > 0
                time.sleep(0.25)
            if busy <= 1:
                break
            self.show(f"{t.label}: waiting for the requests to settle")
        return time.time() - started

    def send_while_read(self, t: Target, holder: subprocess.Popen, opened: int, log: Path) -> tuple[int, int]:
        """Sends the held requests 1, 2, 4, ... at a time while the server reads every one: (sent, read).
        A thread-bound mode stops reading once its threads are taken (blocking: its 4 event loops; servlet:
        Tomcat's 200 threads), and it would still serve every request it had not read after its client was
        gone (a reset leaves the request in the socket), each for the full latency, long after the hold.
        So it is sent at most twice what it takes; the connections left over stay idle, as they would wait
        unread anyway (in the kernel's buffers, not the heap)."""
        sent, read, step = 0, 0, 1
        while sent < opened:
            holder.stdin.write(f"send {min(step, opened - sent)}\n".encode())
            holder.stdin.flush()
            line = self.read_line(holder, "sent ", 120)
            if line is None:
                raise SetupError(f"{t.label}: the held requests were not sent in 120 s", f"see {log}")
            sent = int(line.split()[1])
            read = self.await_read(t, sent)
            if read < sent:
                break
            step *= 2
        return sent, read

    def await_drained(self, t: Target) -> bool:
        """After the reset: until the service counts no request in flight (demo_requests_in_flight; a thread
        that sleeps, or a Tomcat async request, waits out its latency, and a thread-bound mode then serves
        the requests it had not read: twice the latency), at most twice the hold's latency and a minute. The
        floor has no such meter and drops its requests with their connections: 3 s."""
        from . import heap

        limit_s = 2 * HOLD_LATENCY_MS // 1000 + 60
        deadline = time.time() + limit_s
        while time.time() < deadline:
            self.show(f"{t.label}: waiting for the requests in flight to end")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{t.port}/actuator/prometheus", timeout=2) as answer:
                    if heap.in_flight(answer.read().decode(errors="replace")) == 0:
                        return True
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    time.sleep(3)
                    return True
            except OSError:
                pass  # busy (a blocked event loop, every Tomcat thread asleep): ask again
            time.sleep(1)
        LOG.warning("%s: requests still in flight %s s after the reset", t.label, limit_s)
        return False

    def request_memory(self, t: Target, idle: dict) -> list[dict]:
        """Every --held count in turn (hold): the live set of T's JVM with that many requests waiting."""
        return [self.hold(t, n, idle) for n in self.opts.held]

    def hold(self, t: Target, n: int, idle: dict) -> dict:
        """N keep-alive connections held open (hold_connections.py, on the load generator's CPU), then a
        request of HOLD_LATENCY_MS waiting on each, then reset: a class histogram in each state, and JFR's
        old-object samples of the requests' allocations that were still alive at the second."""
        from . import heap

        pid, name = self.pids[t.name], f"{t.name}-{n}"
        log = self.logs / f"hold-{name}.log"
        with open(log, "w") as err:
            holder = subprocess.Popen(
                self.on_loadgen(sys.executable, Path(__file__).with_name("hold_connections.py"), t.port, n, HOLD_LATENCY_MS),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self.procs.append(holder)
        try:
            self.show(f"{t.label}: opening {n:,} connections")
            opened_line = self.read_line(holder, "open ", 300)
            if opened_line is None:
                raise SetupError(f"{t.label}: {n:,} connections did not open in 300 s", f"see {log}")
            opened = int(opened_line.split()[1])
            connections = self.histogram(pid, f"{name}-connections")
            jfr = self.out / f"held-{name}.jfr"
            self.jcmd(pid, "JFR.start", "name=held", "settings=profile", check=True)
            sent, read = self.send_while_read(t, holder, opened, log)
            settled = self.await_quiet(t)
            self.show(f"{t.label}: {read:,} requests waiting, measuring")
            held = self.histogram(pid, f"{name}-held")  # its full collection also tells JFR's sampler which samples live
            answered = self.queues(t.port)["answered"]
            self.jcmd(pid, "JFR.stop", "name=held", f"filename={jfr}", check=True)
            samples = heap.old_object_samples(self.jfr("print", "--stack-depth", "64", "--events", "jdk.OldObjectSample", str(jfr)).stdout)
        finally:
            with contextlib.suppress(OSError):
                holder.stdin.close()
            try:
                holder.wait(timeout=60)
            except subprocess.TimeoutExpired:  # still opening its connections to a server that does not answer
                holder.kill()
                holder.wait()
        drained = self.await_drained(t)
        after = self.histogram(pid, f"{name}-after")
        if answered:
            LOG.warning("%s: %s of the held requests were answered before their heap was measured", t.label, answered)
        record = {
            "mode": t.mode,
            "build": t.build,
            "asked": n,
            "opened": opened,
            "sent": sent,
            "read": read,
            "answered_early": answered,
            "settled_s": round(settled, 1),
            "drained": drained,
            "latency_ms": HOLD_LATENCY_MS,
            "live": {"idle": idle["live"], "connections": connections["live"], "held": held["live"], "after": after["live"]},
            "connection_classes": heap.grown(idle, connections, 10),
            "request_classes": heap.grown(connections, held, 15),
            "libraries": heap.by_library(idle, held),
            "samples": len(samples),
            "sites": heap.sites(samples),
        }
        LOG.info("%s held %s: %s", t.label, n, {k: None if v is None else round(v, 2) for k, v in heap.figures(record).items()})
        return record

    def profile(self, name: str) -> tuple[int, dict | None, list[float]]:
        """What the JFR recording profile-NAME.jfr says, next to it: the hottest methods (CPU samples every
        10 ms, the JDK's "profile" settings) and allocations in profile-NAME.txt, the CPU shares in
        profile-NAME.cpu.json; returns the sleeps that ran their full time (sleeps_completed), the shares and
        the collections' pauses (gc_pauses)."""
        from .report import cpu_shares

        jfr = self.out / f"profile-{name}.jfr"
        views = [self.jfr("view", "--width", "160", view, str(jfr)) for view in ("hot-methods", "allocation-by-class")]
        (self.out / f"profile-{name}.txt").write_text("".join(v.stdout + v.stderr for v in views))
        samples = self.jfr("print", "--stack-depth", "64", "--events", "jdk.ExecutionSample", str(jfr))
        shares = cpu_shares(samples.stdout) if samples.returncode == 0 else None
        (self.out / f"profile-{name}.cpu.json").write_text(json.dumps(shares) + "\n")
        pauses = gc_pauses(self.jfr("print", "--events", "jdk.GarbageCollection", str(jfr)).stdout)
        return sleeps_completed(self.jfr("print", "--events", "jdk.ThreadSleep", str(jfr)).stdout), shares, pauses

    def settle(self, ts: list[Target]) -> None:
        """Lets the last run's connections close: 3 s, then, while a listener has a handshake waiting or
        the kernel's ListenOverflows moved in the last 2 s, longer (at most SYNACK_RETRIES_S), so the next
        run's overflows are its own, not those of a JVM still draining an earlier backlog."""
        self.show("letting the last run's connections close")
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
            self.show(f"waiting for {waiting:,} half-open handshakes to end")
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

    def run_one(self, t: Target, s: Scenario) -> dict:
        """One open-loop run of S against T, its figures."""
        pid, name, all_pids = self.pids[t.name], f"{t.name}-{s.latency_ms}-{s.concurrency}", list(self.pids.values())
        # A request may wait 10 latencies (at least 5 s) before it counts as an error; at most 2 x C
        # requests are in flight at once, so that a stalled server cannot exhaust the ephemeral ports,
        # and never more than the file descriptors allow (vegeta's sockets plus a margin).
        timeout = max(s.latency_ms * 10, 5000)
        inflight = min(s.concurrency * 2, self.max_fds - 500)
        tw = sum(1 for sock in tcp_sockets() if sock.state == TIME_WAIT)
        idle_rss, idle_threads = status_field(pid, "VmRSS"), status_field(pid, "Threads")
        targets_file = self.write_targets(f"{t.name}-{s.latency_ms}", f"http://127.0.0.1:{t.port}/api/work?latencyMs={s.latency_ms}")
        raw = self.out / f"raw-{name}.bin"
        # CPU of this mode's JVM and of all the bench started (they share one CPU) from the first request
        # until the last answer or timeout: the JVM's cost per answer, and whether another JVM took CPU from
        # this one (none while one runs at a time, which the bench does: the column checks it).
        self.jcmd(pid, "JFR.start", "name=bench", "settings=profile", check=True)
        cpu0, all0, t0, overflows0 = cpu_ms(pid), cpu_ms(*all_pids), time.monotonic(), listen_overflows()
        url = f"http://127.0.0.1:{t.port}/api/work?latencyMs={s.latency_ms}"
        if self.opts.client == "openloop":
            report_file = self.out / f"report-{name}.json"
            attack = self.openloop(
                url,
                report_file,
                self.logs / f"client-{name}.log",
                rate=s.rate,
                duration=self.opts.duration,
                timeout=timeout,
                connections=inflight,
            )
        else:
            attack = self.attack(
                targets_file,
                raw,
                self.logs / f"vegeta-{name}.log",
                f"-rate={s.rate}/s",
                f"-duration={self.opts.duration}s",
                f"-timeout={timeout}ms",
                f"-max-workers={inflight}",
                f"-max-connections={inflight}",
            )
        sample_at = max(self.opts.duration * 3 // 4, 1)
        load = {}

        def sample(elapsed):  # memory, threads and connections under load, 3/4 into the run
            if not load and elapsed >= sample_at:
                load.update(
                    rss=status_field(pid, "VmRSS"),
                    threads=status_field(pid, "Threads"),
                    conns=sum(1 for sock in tcp_sockets() if sock.local_port == t.port and sock.state == ESTABLISHED),
                )

        # wait4: the client's own CPU time (taskset execs it: same process), is the load generator the limit?
        started = time.time()
        status = usage = None
        while status is None:
            self.show(f"L={s.latency_ms} ms C={s.concurrency:,} -> {t.label}", self.opts.duration - (time.time() - started))
            sample(time.time() - started)
            pid_done, st, ru = os.wait4(attack.pid, os.WNOHANG)
            if pid_done:
                status, usage = st, ru
            else:
                time.sleep(0.5)
        attack.returncode = os.waitstatus_to_exitcode(status)
        sample(float("inf"))
        cpu, all_cpu = cpu_ms(pid) - cpu0, cpu_ms(*all_pids) - all0
        wall = int((time.monotonic() - t0) * 1000)
        overflows = listen_overflows() - overflows0
        self.jcmd(pid, "JFR.stop", "name=bench", f"filename={self.out / f'profile-{name}.jfr'}", check=True)
        self.show(f"profile of {t.label}, L={s.latency_ms} ms C={s.concurrency:,}")
        sleeps, shares, pauses = self.profile(name)
        if self.opts.client == "openloop":
            text = report_file.read_text()
            if attack.returncode or not text.strip():
                raise SetupError(
                    f"the open-loop client failed ({attack.returncode}) against {t.label}", f"see {self.logs / f'client-{name}.log'}"
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
            vegeta = json.loads(self.report(raw))
            raw.unlink()
        (self.out / f"report-{name}.json").write_text(json.dumps(vegeta) + "\n")
        return {
            "mode": t.mode,
            "build": t.build,
            "latency_ms": s.latency_ms,
            "concurrency": s.concurrency,
            "offered_rps": s.rate,
            "duration_s": self.opts.duration,
            "idle_rss_kib": idle_rss,
            "load_rss_kib": load["rss"],
            "idle_threads": idle_threads,
            "load_threads": load["threads"],
            "connections": load["conns"],
            "event_loops": EVENT_LOOPS,
            "cpu_ms": cpu,
            "others_cpu_ms": all_cpu - cpu,
            "wall_ms": wall,
            "max_in_flight": inflight,
            "time_wait_at_start": tw,
            "client": self.opts.client,
            "client_address": self.last_address if self.opts.client == "vegeta" else "127.0.0.1",
            "loadgen_cpu_ms": vegeta_cpu_ms(usage),
            "listen_overflows": overflows,
            "sleeps_completed": sleeps,
            "profile": f"profile-{name}.txt",
            "cpu_shares": shares,
            "gc_pauses_ms": pauses,
            "vegeta": vegeta,
        }

    def soak_phase(self, t: Target, rate: int, minutes: int) -> dict:
        """T offered RATE req/s of 1 s for MINUTES (open loop), its memory sampled every minute into
        soak.jsonl; vegeta's report of the phase. alive: the same JVM still runs (a crash would be a
        restart in a pod)."""
        pid, name = self.pids[t.name], f"{t.name}-soak-{rate}"
        targets_file = self.write_targets(name, f"http://127.0.0.1:{t.port}/api/work?latencyMs=1000")
        raw = self.out / f"raw-{name}.bin"
        attack = self.attack(
            targets_file, raw, self.logs / f"vegeta-{name}.log", f"-rate={rate}/s", f"-duration={minutes}m", "-timeout=10s"
        )
        started, next_sample = time.time(), 0.0

        def sample(elapsed):
            nonlocal next_sample
            if elapsed >= next_sample:
                next_sample += 60
                record = {"mode": t.mode, "rate": rate, "t": int(elapsed), "alive": self.alive(pid), "snapshot": self.snapshot(pid)}
                with open(self.out / "soak.jsonl", "a") as f:
                    f.write(json.dumps(record) + "\n")

        self.follow(attack, minutes * 60, f"soak of {t.label}: {rate} req/s", every=lambda elapsed: sample(time.time() - started))
        result = {"mode": t.mode, "rate": rate, "minutes": minutes, "alive": self.alive(pid), "vegeta": json.loads(self.report(raw))}
        raw.unlink()
        return result

    def alive(self, pid: int) -> bool:
        proc = next(p for p in self.procs if p.pid == pid)
        return proc.poll() is None

    # The whole bench ---------------------------------------------------------------------------------

    def machine(self, targets: list[Target], baseline: tuple[str, Path] | None) -> str:
        mem_kib = status_field_meminfo("MemTotal")
        os_name = next(
            (
                line.split("=", 1)[1].strip().strip('"')
                for line in Path("/etc/os-release").read_text().splitlines()
                if line.startswith("PRETTY_NAME=")
            ),
            platform.platform(),
        )
        java = subprocess.run([str(self.java_home / "bin" / "java"), "-version"], capture_output=True, text=True).stderr.splitlines()[:1]
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
        flags = subprocess.run(
            [str(self.java_home / "bin" / "java"), *self.jvm_flags(), "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True
        ).stdout
        lines.append(f"collector: {collector(flags)}")
        if self.opts.memory:
            lines.append(
                f"memory: {', '.join(f'{n:,}' for n in self.opts.held)} requests of {HOLD_LATENCY_MS:,} ms held in turn; "
                f"JFR's old-object samples with {' '.join(MEMORY_JVM)}"
            )
        if self.opts.service_args:
            lines.append(f"service arguments: {' '.join(self.opts.service_args)}")
        return "\n".join(lines) + "\n"

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
                    self.max_fds,
                    lo,
                    hi,
                    self.service_cpu,
                    self.loadgen_cpu,
                    self.out,
                )
                jar = self.ensure_jar()
                baseline = self.ensure_baseline_jar(o.baseline) if o.baseline else None
                # The floor is the reactive mode's: one more row wherever reactive is measured (not in a soak).
                test_classpath = (
                    self.ensure_test_classpath() if (o.floor and "reactive" in modes or o.client == "openloop") and not o.soak else ""
                )
                self.test_classpath = test_classpath
                floor = test_classpath if o.floor and "reactive" in modes and not o.soak else ""
                try:
                    return self.measure(targets(modes, known, jar, baseline, floor), modes, baseline)
                finally:
                    self.stop_all()

    def measure(self, ts: list[Target], modes: list[str], baseline) -> int:
        from . import report as bench_report

        o, out = self.opts, self.out
        runs = [s for s in o.scenarios] if not (o.soak or o.memory) else []
        idle = o.idle_connections if not (o.soak or o.memory) else 0
        steps = (
            len(ts) * (2 if o.memory else 1)
            + (len(modes) * len(SOAK_RATES) if o.soak else 0)
            + (len(ts) if idle else 0)
            + len(runs) * len(ts)
        )
        self.start_progress(steps)
        for name, on in (("soak.jsonl", o.soak), ("requests-memory.jsonl", o.memory), ("memory.jsonl", idle), ("results.jsonl", runs)):
            if on:
                (out / name).write_text("")
        try:
            for t in ts:
                with self.running(t):
                    LOG.info("ready: %s", t.label)
                    self.measure_one(t, runs, idle)
        finally:
            self.stop_progress()
        (out / "machine.txt").write_text(self.machine(ts, baseline))
        bench_report.main(out)
        LOG.info("done: %s", out)
        shown = [(out / name).read_text() for name in ("soak.md", "requests-memory.md", "table.md", "floor.md") if (out / name).is_file()]
        print("\n".join(shown), end="", flush=True)
        return 0

    def measure_one(self, t: Target, runs: list[Scenario], idle: int) -> None:
        """Every measurement of T's JVM, in the order the bench always took them: the warm-up, then the
        soak, the held requests, the idle connections or the scenarios."""
        o, out = self.opts, self.out
        LOG.info(
            "warm-up of %s: %ss of 1 ms requests from %s keep-alive clients, %ss from 32 with a new connection each",
            t.label,
            self.warmup_s,
            WARMUP_WORKERS,
            self.warmup_s // 2,
        )
        self.warm_up(t)
        self.advance()
        if o.soak and not t.build:
            for rate in SOAK_RATES:
                LOG.info("soak of %s: %s req/s of 1 s for %s min", t.label, rate, o.soak)
                append_json(out / "soak-results.jsonl", self.soak_phase(t, rate, o.soak))
                self.advance()
        if o.memory:
            LOG.info("heap of %s waiting requests -> %s", ",".join(map(str, o.held)), t.label)
            # JFR's first recording in a JVM loads its classes: before the idle histogram, not in a hold's.
            self.jcmd(self.pids[t.name], "JFR.start", "name=first", "settings=profile", check=True)
            self.jcmd(self.pids[t.name], "JFR.stop", "name=first", check=True)
            for record in self.request_memory(t, self.histogram(self.pids[t.name], f"{t.name}-idle")):
                append_json(out / "requests-memory.jsonl", record)
            self.advance()
        if idle:
            LOG.info("memory of %s idle keep-alive connections -> %s", idle, t.label)
            append_json(out / "memory.jsonl", self.idle_memory(t))
            self.advance()
        for s in runs:
            LOG.info("L=%s ms C=%s (%s req/s offered) -> %s", s.latency_ms, s.concurrency, s.rate, t.label)
            append_json(out / "results.jsonl", self.run_one(t, s))
            self.advance()
            self.settle([t])

    def start_progress(self, steps: int) -> None:
        if self.console is not None and self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[left]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.progress.add_task("starting", total=steps, left="")
            self.progress.start()

    def stop_progress(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def ended(proc: subprocess.Popen, grace_s: int = 20) -> None:
    """PROC, terminated, given GRACE_S to exit, then killed."""
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def status_field_meminfo(name: str, path: Path = Path("/proc/meminfo")) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def append_json(path: Path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")


def run_bench(opts: BenchOptions, console, environ=os.environ) -> int:
    """The bench; 0 when it measured what it was asked to, SETUP (3) when it could not start or go on."""
    return Bench(opts, console, environ).run()
