"""The service JVMs the bench measures: each mode of the variant table and the floor (a Target: its port, its
jar or classes), started alone on the services' CPU with the same flags (one CPU, the heap, the event
loops), ready, stopped; and the JDK's tools on them from the load generator's CPU, jcmd and JFR, with what
their output says.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError

from .host import Host, ended, status_field
from .report import cpu_shares

EVENT_LOOPS = 4
# The heap of every mode, the same for all, sized for the requests in flight: at each young collection the
# serial collector (the JVM's pick on one CPU) copies every request still waiting into a survivor space,
# and what does not fit fills the old generation until full collections stop the run. A survivor space of
# 1 GiB holds 9,800 Tomcat requests (up to 107 KiB each, `--memory`; 9.9 KiB on Reactor Netty): twice
# C = 5,000 at L = 1 s, as an open-loop client sends as many again while answers are late. Eden 2 GiB: a
# young collection every few seconds, after most requests are answered. The old generation 1 GiB: 25 times
# the idle live set. One JVM runs at a time (Jvms.running), so the machine holds one such heap.
HEAP, YOUNG, SURVIVOR_RATIO = "5g", "4g", 2
# Ports: 19080, 19081, ... in the variant table's order of modes; 19180, ... for the baseline's build;
# 19079 for the floor.
PORT_BASE, BASELINE_PORT_BASE, FLOOR_PORT = 19080, 19180, 19079
# The floor: /api/work of the reactive mode on bare Reactor Netty, no Spring (service/src/test/java/
# io/livenesslab/service/FloorServer.java), built with the service's tests, run from its classes.
FLOOR_MAIN = "io.livenesslab.service.FloorServer"
# --memory's JVMs only: small fixed TLABs, so JFR's old-object sampler (which samples on a thread's TLAB
# refill) sees the small objects of a request too; with the large TLABs of a large young generation it
# samples about 3 of 2,000 reactive requests. A TLAB's size changes how fast objects are allocated, not
# which stay alive.
MEMORY_JVM = ["-XX:-ResizeTLAB", "-XX:TLABSize=16k"]
JVM_FLAG = ("-XX:", "-D", "-X")  # a --service-args word that goes to the JVM, not to Spring


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


def floor_line(service_args: list[str]) -> str:
    """What the floor row ran: bare Reactor Netty, or one Spring layer more (--service-args --floor.layer=X)."""
    layer = next((a.split("=", 1)[1] for a in service_args if a.startswith("--floor.layer=")), "netty")
    if layer == "netty":
        return "floor: reactive's /api/work on bare Reactor Netty, no Spring (FloorServer, the service's test classes)"
    return (
        f"floor: reactive's /api/work on Reactor Netty with Spring's {layer} layer (FloorServer --floor.layer={layer}, the "
        "service's test classes)"
    )


def jvm_flags(memory: bool, service_args: list[str]) -> list[str]:
    """Every service JVM's flags: one CPU, the heap, the event loops, MEMORY_JVM for --memory, then
    --service-args' JVM flags (last, so they win)."""
    return [
        "-XX:ActiveProcessorCount=1",
        f"-Xms{HEAP}",
        f"-Xmx{HEAP}",
        f"-Xmn{YOUNG}",
        f"-XX:SurvivorRatio={SURVIVOR_RATIO}",
        f"-Dreactor.netty.ioWorkerCount={EVENT_LOOPS}",
        *(MEMORY_JVM if memory else []),
        *(a for a in service_args if a.startswith(JVM_FLAG)),
    ]


class Jvms:
    """The JVMs of one bench on HOST, their logs in LOGS, their profiles in OUT; their processes in PROCS
    with every other the bench started (stopped together when it ends)."""

    def __init__(self, host: Host, out: Path, logs: Path, procs: list[subprocess.Popen], service_args: list[str], memory: bool):
        self.host, self.out, self.logs, self.procs = host, out, logs, procs
        self.service_args, self.memory = service_args, memory
        self.pids: dict[str, int] = {}

    def start(self, t: Target) -> None:
        """T's JVM on the services' CPU; --service-args split into JVM flags (-XX:, -D, -X) and Spring's."""
        spring = [a for a in self.service_args if not a.startswith(JVM_FLAG)]
        argv = [
            "taskset",
            "-c",
            str(self.host.service_cpu),
            str(self.host.java_home / "bin" / "java"),
            *jvm_flags(self.memory, self.service_args),
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
        Spring Boot JVMs started at once on one CPU leave the first not ready after 120 s) and the
        machine's memory holds one heap at a time (HEAP)."""
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

    def alive(self, pid: int) -> bool:
        proc = next(p for p in self.procs if p.pid == pid)
        return proc.poll() is None

    def jcmd(self, pid: int, *args: str, check: bool = False) -> str:
        """The JDK's jcmd on the load generator's CPU, not the services'."""
        done = subprocess.run(self.host.on_loadgen(self.host.java_home / "bin" / "jcmd", pid, *args), capture_output=True, text=True)
        if check and done.returncode:
            LOG.warning("jcmd %s %s: %s", pid, " ".join(args), (done.stdout + done.stderr).strip()[-300:])
        return done.stdout

    def jfr(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.host.on_loadgen(self.host.java_home / "bin" / "jfr", *args), capture_output=True, text=True)

    def snapshot(self, pid: int) -> dict:
        """After a full GC, the JVM's own accounting (memory_figures): Native Memory Tracking (summary mode:
        a few % of CPU, on for every run alike), the heap in use, and RSS."""
        self.jcmd(pid, "GC.run", check=True)
        time.sleep(1)
        return memory_figures(
            self.jcmd(pid, "VM.native_memory", "summary", "scale=KB"), self.jcmd(pid, "GC.heap_info"), status_field(pid, "VmRSS")
        )

    def profile(self, name: str) -> tuple[int, dict | None, list[float]]:
        """What the JFR recording profile-NAME.jfr says, next to it: the hottest methods (CPU samples every
        10 ms, the JDK's "profile" settings) and allocations in profile-NAME.txt, the CPU shares in
        profile-NAME.cpu.json; returns the sleeps that ran their full time (sleeps_completed), the shares and
        the collections' pauses (gc_pauses)."""
        jfr = self.out / f"profile-{name}.jfr"
        views = [self.jfr("view", "--width", "160", view, str(jfr)) for view in ("hot-methods", "allocation-by-class")]
        (self.out / f"profile-{name}.txt").write_text("".join(v.stdout + v.stderr for v in views))
        samples = self.jfr("print", "--stack-depth", "64", "--events", "jdk.ExecutionSample", str(jfr))
        shares = cpu_shares(samples.stdout) if samples.returncode == 0 else None
        (self.out / f"profile-{name}.cpu.json").write_text(json.dumps(shares) + "\n")
        pauses = gc_pauses(self.jfr("print", "--events", "jdk.GarbageCollection", str(jfr)).stdout)
        return sleeps_completed(self.jfr("print", "--events", "jdk.ThreadSleep", str(jfr)).stdout), shares, pauses


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
