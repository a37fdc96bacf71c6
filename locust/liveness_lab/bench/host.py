"""The machine the bench runs on: what it must have (``check``: Linux, taskset, a JDK, vegeta, the memory
for one service JVM and the load generator, file descriptors), one bench at a time (``BenchLock``), the
processes it starts there, and what /proc says (RSS, threads, CPU time, sockets, the kernel's
ListenOverflows).

Linux only: taskset pins the JVMs and the load generator to CPUs, and the figures come from /proc.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import platform
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from liveness_lab.base.exits import SetupError

# What a bench needs free: one service JVM's heap (jvm.HEAP; one JVM runs at a time), the JVM's own memory
# beside it, the open-loop client's 512 MiB heap.
NEED_MEMORY_GIB = 6


@dataclass(frozen=True)
class Host:
    """This machine as check found it: the JDK, vegeta, the services' CPU and the load generator's, and how
    many files a process of the bench may open."""

    java_home: Path
    vegeta: Path
    service_cpu: int
    loadgen_cpu: int
    max_fds: int

    def on_loadgen(self, *argv) -> list[str]:
        return ["taskset", "-c", str(self.loadgen_cpu), *map(str, argv)]


def check(environ, vegeta: Path, meminfo: Path, heap: str, held: int = 0) -> Host:
    """This machine, if it has what the bench needs, else SetupError with the fix: Linux and taskset; a JDK at
    JAVA_HOME; vegeta at LIVENESS_LAB_VEGETA, else VEGETA (where scripts/bench.sh builds it); the memory
    (MEMINFO's MemAvailable) for a service JVM's HEAP and the load generator; and for --memory's largest
    count HELD (0: none) a file descriptor per connection. Raises the limit of open files first."""
    if platform.system() != "Linux":
        raise SetupError(
            "scripts/bench.sh runs on Linux only (it pins processes to CPUs with taskset)",
            "run it in a Linux VM or on a Linux machine; scripts/cluster-up.sh and scripts/demo.sh run here",
        )
    if not shutil.which("taskset"):
        raise SetupError("taskset is not installed", "apt-get install util-linux")
    java_home = environ.get("JAVA_HOME")
    if not java_home or not Path(java_home, "bin", "jcmd").is_file():
        raise SetupError(f"no JDK at JAVA_HOME='{java_home or ''}'", "run scripts/bench.sh (it finds a JDK >= 21), or set JAVA_HOME to one")
    vegeta = Path(environ.get("LIVENESS_LAB_VEGETA") or vegeta)
    if not os.access(vegeta, os.X_OK):
        raise SetupError(f"vegeta is not built ({vegeta})", "run scripts/bench.sh, which builds it")
    # One CPU for the services, the other for the load generator (on one CPU they share it).
    service_cpu, loadgen_cpu = (1, 0) if (os.cpu_count() or 1) >= 2 else (0, 0)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for want in (1048576, hard):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))
            break
    max_fds = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    available, need = status_field_meminfo("MemAvailable", meminfo), NEED_MEMORY_GIB * 1048576
    if available and available < need:
        raise SetupError(
            f"{available / 1048576:.1f} GiB of memory available: each mode's JVM takes a heap of {heap} (one at a time) and the "
            f"load generator its own, about {NEED_MEMORY_GIB} GiB",
            "stop what holds the memory (a kind cluster: scripts/cluster-down.sh), or run on a machine with more",
        )
    if held and held + 500 > max_fds:
        raise SetupError(
            f"--held {held:,}: the holder needs a file descriptor per connection, and the limit is {max_fds:,}",
            "hold fewer (--held), or raise the hard limit (ulimit -Hn, /etc/security/limits.conf)",
        )
    return Host(Path(java_home), vegeta, service_cpu, loadgen_cpu, max_fds)


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


def ended(proc: subprocess.Popen, grace_s: int = 20) -> None:
    """PROC, terminated, given GRACE_S to exit, then killed."""
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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


def status_field_meminfo(name: str, path: Path = Path("/proc/meminfo")) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
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


def vegeta_cpu_ms(usage: resource.struct_rusage) -> int:
    return int((usage.ru_utime + usage.ru_stime) * 1000)


# TCP states of /proc/net/tcp.
ESTABLISHED, SYN_RECV, TIME_WAIT = "01", "03", "06"

# How long the kernel retransmits a SYN-ACK (net.ipv4.tcp_synack_retries = 5: 1 + 2 + 4 + 8 + 16 + 32 s)
# for a handshake a listener could not yet accept, plus a margin: the longest the bench waits after a run
# for the listeners to settle (blocking's overflows go on for 51-53 s after its runs, docs/benchmark.md).
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


def tcp_texts() -> list[str]:
    """The text of /proc/net/tcp and /proc/net/tcp6, of those there are."""
    texts = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            texts.append(Path(name).read_text())
    return texts


def tcp_sockets(texts: list[str] | None = None) -> list[Socket]:
    """Every TCP socket (IPv4 and IPv6) as Socket(local address, local port, remote port, state)."""
    if texts is None:
        texts = tcp_texts()
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
    run at C = 5,000 (about 10,000 such sockets) the kernel searches most of the ephemeral range for every
    new connection (inet_csk_bind_conflict), vegeta spends its CPU in the kernel and the next target meets
    a collapsed client. Ports are taken per address, so an address no socket uses is a fresh client."""
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
