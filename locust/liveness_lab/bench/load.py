"""The load the bench offers a JVM, from the load generator's CPU: vegeta (a targets file per URL, attacks
from a loopback address no socket uses, its reports), the open-loop client of the measured runs
(OpenLoopClient), and the warm-up every mode gets before it is measured."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

from liveness_lab.base.console import LOG

from .host import TIME_WAIT, Host, client_address, tcp_sockets
from .jvm import Target
from .progress import Display

# The load generator of the measured runs (--client): OpenLoopClient (service/src/test/java/io/livenesslab/
# service/OpenLoopClient.java: Netty, one event loop, latency from each request's intended send time),
# built with the floor from the service's tests; or vegeta. vegeta binds every socket before connecting,
# and at C = 10,000 the kernel's search for a port to bind takes most of its CPU (docs/benchmark.md).
CLIENTS = ("openloop", "vegeta")
OPENLOOP_MAIN = "io.livenesslab.service.OpenLoopClient"
# C1 only: C2 compiling on the client's one CPU in a run's first seconds at 10,000 req/s makes it send
# seconds late and open connections in a storm; C1 compiles the code in a fraction of a second.
OPENLOOP_JVM = ["-XX:ActiveProcessorCount=1", "-XX:TieredStopAtLevel=1", "-Xms512m", "-Xmx512m"]
# The warm-up (see Load.warm_up): seconds of keep-alive clients (half that with a new connection each), clients.
WARMUP_S, QUICK_WARMUP_S, WARMUP_WORKERS = 20, 4, 1000


class Load:
    """The load generators of one bench on HOST: vegeta's targets and results in OUT, their logs in LOGS,
    their processes in PROCS (stopped with the JVMs when the bench ends); the open-loop client runs from
    TEST_CLASSPATH."""

    def __init__(
        self,
        host: Host,
        out: Path,
        logs: Path,
        procs: list[subprocess.Popen],
        display: Display,
        warmup_s: int = WARMUP_S,
        test_classpath: str = "",
    ):
        self.host, self.out, self.logs, self.procs, self.display = host, out, logs, procs, display
        self.warmup_s, self.test_classpath = warmup_s, test_classpath
        self.last_address = ""  # the source address of the last attack (client_address)

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
                self.host.on_loadgen(self.host.vegeta, "attack", f"-targets={targets_file}", f"-laddr={address}", *flags),
                stdout=out,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        self.procs.append(proc)  # stopped with the JVMs when the bench is interrupted
        return proc

    def openloop(self, url: str, report: Path, err: Path, rate: int, duration: int, timeout: int, connections: int) -> subprocess.Popen:
        """OpenLoopClient (OPENLOOP_MAIN) on the load generator's CPU, its JSON report (vegeta's shape) to
        REPORT. It connects without binding first, so the ports of closed connections cost it nothing."""
        argv = self.host.on_loadgen(
            self.host.java_home / "bin" / "java",
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
            return subprocess.run(
                [str(self.host.vegeta), "report", f"-type={kind}"], stdin=f, capture_output=True, text=True, check=True
            ).stdout

    def follow(self, proc: subprocess.Popen, seconds: float, what: str, every=None) -> None:
        """Waits for PROC (an attack of SECONDS), the progress display counting down; EVERY(elapsed) each second."""
        started = time.time()
        while proc.poll() is None:
            elapsed = time.time() - started
            self.display.show(what, seconds - elapsed)
            if every:
                every(elapsed)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)

    def warm_up(self, t: Target) -> None:
        """The same warm-up for every mode before it is measured, whatever ran before it, in two closed-loop
        phases of latencyMs=1 (each client sends its next request when its answer came):
         1. warmup_s seconds from WARMUP_WORKERS keep-alive clients: the request path, and the write path
            as it runs under load (answers queued on a connection from the timer thread, several per flush);
         2. warmup_s / 2 seconds from 32 clients with keep-alive off: a new connection per request (accept,
            pipeline set-up, close), as an open-loop client opens thousands.
        Then a pause for the compiler's queue. Closed loop, as an open-loop warm-up at 2,000 req/s is a storm,
        not a warm-up (a cold reactive JVM answers 389 req/s of it). 1 ms, as the modes that block drain
        1,000 such requests in a fraction of a second, where 1 s requests would leave a backlog that spoils
        their first run. The load of the first phase, as after 32 keep-alive clients alone the JIT compiler
        still takes 3.3-5.0 s of CPU in the next run (reactive, C = 5,000: the write path under load is not
        compiled yet), 0.9 s after both phases."""
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
        self.display.show(f"warm-up of {t.label}: a pause for the compiler", 5)
        time.sleep(5)
