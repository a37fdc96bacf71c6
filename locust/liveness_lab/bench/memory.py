"""What a JVM's memory does under the bench: with N idle keep-alive connections (--idle-connections: Native
Memory Tracking, the heap after a full collection, RSS), with a request waiting on each of N (--memory: its
live set from jcmd GC.class_histogram and JFR's old-object samples of who allocated it, read by heap.py),
and over a soak (--soak: RSS and the heap after a full collection every minute, errors and latency per
phase). hold_connections.py holds the connections, on the load generator's CPU."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError

from . import heap
from .host import Host, runnable_threads, tcp_texts
from .jvm import Jvms, Target
from .load import Load
from .progress import Display

HOLDER = Path(__file__).with_name("hold_connections.py")  # holds the connections, idle or each with a request
# --memory: how many requests each mode holds in turn (--held), and how long each asks to wait: the
# service's default cap (DemoProperties' latencyMaxMs), so none is answered while its heap is measured.
DEFAULT_HELD, QUICK_HELD = "1000,2000,5000", "100,200"
HOLD_LATENCY_MS = 60000
# --soak: the demo's rate (20 users at 1 request/s of 1 s), then 10 times that.
SOAK_RATES = (20, 200)


def held_counts(text: str) -> list[int]:
    """--held: comma-separated numbers of requests to hold, each above 0 (argparse type)."""
    if not re.fullmatch(r"\d+(,\d+)*", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not comma-separated numbers of requests (e.g. --held 1000,2000,5000)")
    found = [int(n) for n in text.split(",")]
    if 0 in found:
        raise argparse.ArgumentTypeError(f"'{text}': every number of requests must be above 0")
    return found


class Memory:
    """The memory measurements of one bench: IDLE_CONNECTIONS idle connections, the HELD counts of waiting
    requests in turn; the histograms and recordings in OUT, the holder's logs in LOGS, its processes in PROCS
    (stopped with the JVMs when the bench ends)."""

    def __init__(
        self,
        host: Host,
        jvms: Jvms,
        load: Load,
        display: Display,
        out: Path,
        logs: Path,
        procs: list[subprocess.Popen],
        idle_connections: int,
        held: list[int],
    ):
        self.host, self.jvms, self.load, self.display = host, jvms, load, display
        self.out, self.logs, self.procs = out, logs, procs
        self.idle_connections, self.held = idle_connections, held

    # --idle-connections -------------------------------------------------------------------------------

    def idle_memory(self, t: Target) -> dict:
        """What holding --idle-connections idle keep-alive connections costs T's JVM: the snapshots before
        and while holding them (hold_connections.py, on the load generator's CPU)."""
        pid, n = self.jvms.pids[t.name], self.idle_connections
        before = self.jvms.snapshot(pid)
        log = self.logs / f"hold-{t.name}.log"
        with open(log, "w") as f:
            holder = subprocess.Popen(
                self.host.on_loadgen(sys.executable, HOLDER, t.port, n),
                stdin=subprocess.PIPE,
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        self.procs.append(holder)
        opened = None
        deadline = time.time() + 300
        while opened is None and time.time() < deadline and holder.poll() is None:
            self.display.show(f"memory of {n:,} idle connections -> {t.label}")
            opened = next((line for line in log.read_text(errors="replace").splitlines() if line.startswith("open ")), None)
            if opened is None:
                time.sleep(1)
        if opened is None:
            LOG.warning("%s: the connections did not open in 300 s (see %s)", t.label, log)
        during = self.jvms.snapshot(pid)
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

    def request_memory(self, t: Target) -> list[dict]:
        """The live set of T's JVM idle, then with every --held count of requests waiting in turn (hold)."""
        pid = self.jvms.pids[t.name]
        # JFR's first recording in a JVM loads its classes: before the idle histogram, not in a hold's.
        self.jvms.jcmd(pid, "JFR.start", "name=first", "settings=profile", check=True)
        self.jvms.jcmd(pid, "JFR.stop", "name=first", check=True)
        idle = self.histogram(pid, f"{t.name}-idle")
        return [self.hold(t, n, idle) for n in self.held]

    def histogram(self, pid: int, name: str) -> dict:
        """jcmd GC.class_histogram (a full collection first), kept as histogram-NAME.txt, read (heap.histogram)."""
        text = self.jvms.jcmd(pid, "GC.class_histogram", check=True)
        (self.out / f"histogram-{name}.txt").write_text(text)
        try:
            return heap.histogram(text)
        except ValueError as e:
            raise SetupError(f"jcmd {pid} GC.class_histogram: {e}", f"see {self.out / f'histogram-{name}.txt'}") from None

    def hold(self, t: Target, n: int, idle: dict) -> dict:
        """N keep-alive connections held open (hold_connections.py, on the load generator's CPU), then a
        request of HOLD_LATENCY_MS waiting on each, then reset: a class histogram in each state, and JFR's
        old-object samples of the requests' allocations that were still alive at the second."""
        pid, name = self.jvms.pids[t.name], f"{t.name}-{n}"
        log = self.logs / f"hold-{name}.log"
        with open(log, "w") as err:
            holder = subprocess.Popen(
                self.host.on_loadgen(sys.executable, HOLDER, t.port, n, HOLD_LATENCY_MS),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self.procs.append(holder)
        try:
            self.display.show(f"{t.label}: opening {n:,} connections")
            opened_line = read_line(holder, "open ", 300)
            if opened_line is None:
                raise SetupError(f"{t.label}: {n:,} connections did not open in 300 s", f"see {log}")
            opened = int(opened_line.split()[1])
            connections = self.histogram(pid, f"{name}-connections")
            jfr = self.out / f"held-{name}.jfr"
            self.jvms.jcmd(pid, "JFR.start", "name=held", "settings=profile", check=True)
            sent, read = self.send_while_read(t, holder, opened, log)
            settled = self.await_quiet(t)
            self.display.show(f"{t.label}: {read:,} requests waiting, measuring")
            held = self.histogram(pid, f"{name}-held")  # its full collection also tells JFR's sampler which samples live
            answered = queues(t.port)["answered"]
            self.jvms.jcmd(pid, "JFR.stop", "name=held", f"filename={jfr}", check=True)
            samples = heap.old_object_samples(
                self.jvms.jfr("print", "--stack-depth", "64", "--events", "jdk.OldObjectSample", str(jfr)).stdout
            )
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
            line = read_line(holder, "sent ", 120)
            if line is None:
                raise SetupError(f"{t.label}: the held requests were not sent in 120 s", f"see {log}")
            sent = int(line.split()[1])
            read = self.await_read(t, sent)
            if read < sent:
                break
            step *= 2
        return sent, read

    def await_read(self, t: Target, sent: int, limit_s: int = 60) -> int:
        """How many of the SENT requests the server has read (the rest wait in its sockets' receive queues):
        all of them, or as many as it took once the count stood still for 3 s."""
        deadline, last, still_since = time.time() + limit_s, -1, time.time()
        while time.time() < deadline:
            read = sent - queues(t.port)["unread"]
            if read >= sent:
                return read
            if read != last:
                last, still_since = read, time.time()
            elif time.time() - still_since >= 3:
                return read
            self.display.show(f"{t.label}: the server has read {read:,} of {sent:,} requests")
            time.sleep(0.5)
        return last

    def await_quiet(self, t: Target, limit_s: int = 60) -> float:
        """Until T's JVM has had no thread running or ready to run (R in /proc/PID/task/*/stat) in at least 7
        of 8 looks over 2 s, at most LIMIT_S; the seconds waited. A request the server has read may not be
        waiting yet: the virtual modes' threads, queued for their one carrier, build their stacks (and the
        objects a waiting request holds) only when they run up to their sleep. Not its CPU time: a JVM that
        other processes starve of its CPU uses little of it and is not done."""
        pid, started = self.jvms.pids[t.name], time.time()
        while time.time() - started < limit_s:
            busy = 0
            for _ in range(8):
                busy += runnable_threads(pid) > 0
                time.sleep(0.25)
            if busy <= 1:
                break
            self.display.show(f"{t.label}: waiting for the requests to settle")
        return time.time() - started

    def await_drained(self, t: Target) -> bool:
        """After the reset: until the service counts no request in flight (demo_requests_in_flight; a thread
        that sleeps, or a Tomcat async request, waits out its latency, and a thread-bound mode then serves
        the requests it had not read: twice the latency), at most twice the hold's latency and a minute. The
        floor has no such meter and drops its requests with their connections: 3 s."""
        limit_s = 2 * HOLD_LATENCY_MS // 1000 + 60
        deadline = time.time() + limit_s
        while time.time() < deadline:
            self.display.show(f"{t.label}: waiting for the requests in flight to end")
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

    # --soak -----------------------------------------------------------------------------------------

    def soak_phase(self, t: Target, rate: int, minutes: int) -> dict:
        """T offered RATE req/s of 1 s for MINUTES (open loop), its memory sampled every minute into
        soak.jsonl; vegeta's report of the phase. alive: the same JVM still runs (a crash would be a
        restart in a pod)."""
        pid, name = self.jvms.pids[t.name], f"{t.name}-soak-{rate}"
        targets_file = self.load.write_targets(name, f"http://127.0.0.1:{t.port}/api/work?latencyMs=1000")
        raw = self.out / f"raw-{name}.bin"
        attack = self.load.attack(
            targets_file, raw, self.logs / f"vegeta-{name}.log", f"-rate={rate}/s", f"-duration={minutes}m", "-timeout=10s"
        )
        started, next_sample = time.time(), 0.0

        def sample(elapsed):
            nonlocal next_sample
            if elapsed >= next_sample:
                next_sample += 60
                record = {
                    "mode": t.mode,
                    "rate": rate,
                    "t": int(elapsed),
                    "alive": self.jvms.alive(pid),
                    "snapshot": self.jvms.snapshot(pid),
                }
                with open(self.out / "soak.jsonl", "a") as f:
                    f.write(json.dumps(record) + "\n")

        self.load.follow(attack, minutes * 60, f"soak of {t.label}: {rate} req/s", every=lambda elapsed: sample(time.time() - started))
        result = {
            "mode": t.mode,
            "rate": rate,
            "minutes": minutes,
            "alive": self.jvms.alive(pid),
            "vegeta": json.loads(self.load.report(raw)),
        }
        raw.unlink()
        return result


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


def queues(port: int) -> dict[str, int]:
    """The connections to the server on PORT, from both ends (heap.socket_queues)."""
    return heap.socket_queues(tcp_texts(), port)
