"""What a service's heap holds per waiting request (``scripts/bench.sh --memory``, memory.py's holds): the
JDK's own accounts read and the arithmetic done on them, apart from the processes that produce them.

- ``jcmd PID GC.class_histogram``: a full collection, then every class's live instances and bytes. The
  serial collector's full collection leaves part of the dead space where it lies, filled with filler
  objects (``jdk.internal.vm.FillerObject``, ``FillerElement[]``: ``MarkSweepDeadRatio``) that the
  histogram lists; they are no one's and are left out of the live set.
- ``jfr print --events jdk.OldObjectSample``: JFR's sampled allocations still alive when the recording
  stopped, each with the stack that allocated it: who made what the histogram counts.

The figures, per mode and number C of connections: the live set idle (after the warm-up), with C idle
keep-alive connections, with a request waiting on each, and after they were reset; KiB per connection,
per waiting request (its connection included: what the heap must hold per request), and per request the
server read, beyond its connection.
"""

from __future__ import annotations

import re
from collections import defaultdict

HISTOGRAM_ROW = re.compile(r"^\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)")
HISTOGRAM_TOTAL = re.compile(r"^Total\s+(\d+)\s+(\d+)\s*$")
FILLER = "jdk.internal.vm.Filler"
# A hidden class's name ends with its address (Foo$$Lambda/0x000000004f6ca128), which differs from one JVM
# to the next: without it, one name per lambda.
HIDDEN = re.compile(r"[/.]0x[0-9a-f]+$")
ARRAYS = {"B": "byte", "C": "char", "I": "int", "J": "long", "S": "short", "Z": "boolean", "D": "double", "F": "float"}

# Who a class belongs to, by its package (the first prefix that matches); the JDK's own types (arrays,
# strings, maps) are held by whoever made them: JFR's samples say who that was.
LIBRARIES = {
    "service": ("io.livenesslab.",),
    "Tomcat": ("org.apache.catalina.", "org.apache.coyote.", "org.apache.tomcat.", "org.apache.naming."),
    "Netty": ("io.netty.",),
    "Reactor": ("reactor.",),
    "Spring": ("org.springframework.",),
    "Micrometer": ("io.micrometer.",),
    "Jackson": ("com.fasterxml.jackson.", "tools.jackson."),
    "JMX": ("javax.management.", "com.sun.jmx."),
}
JDK = "JDK types (arrays, strings, maps, threads)"


def readable(name: str) -> str:
    """A histogram's class name as Java writes it: [B -> byte[], [Ljava.lang.Object; -> java.lang.Object[],
    a hidden class without its address."""
    name = HIDDEN.sub("", name)
    dims = len(name) - len(name.lstrip("["))
    if not dims:
        return name
    element = name[dims:]
    element = ARRAYS.get(element, element[1:-1] if element.startswith("L") and element.endswith(";") else element)
    return element + "[]" * dims


def library(name: str) -> str:
    """The library a class (readable or not) belongs to, else the JDK's."""
    base = readable(name).rstrip("[]")
    return next((lib for lib, prefixes in LIBRARIES.items() if base.startswith(prefixes)), JDK)


def histogram(text: str) -> dict:
    """`jcmd PID GC.class_histogram` as {"classes": {readable name: [instances, bytes]}, "live": bytes,
    "filler": bytes}: live is the Total line less the fillers (the rows' sum where there is no Total line,
    so a shortened histogram keeps its true total)."""
    classes: dict[str, list[int]] = {}
    filler, total = 0, None
    for line in text.splitlines():
        if m := HISTOGRAM_ROW.match(line):
            name, count, size = m.group(3), int(m.group(1)), int(m.group(2))
            if name.startswith(FILLER) or name.lstrip("[L").startswith(FILLER):
                filler += size
                continue
            entry = classes.setdefault(readable(name), [0, 0])
            entry[0] += count
            entry[1] += size
        elif m := HISTOGRAM_TOTAL.match(line.strip()):
            total = int(m.group(2))
    live = (total - filler) if total is not None else sum(size for _, size in classes.values())
    if not classes and total is None:
        raise ValueError("not a class histogram (jcmd GC.class_histogram): no class rows and no Total line")
    return {"classes": classes, "live": live, "filler": filler}


def grown(before: dict, after: dict, top: int = 15) -> list[tuple[str, int, int]]:
    """The classes whose live bytes grew most from BEFORE to AFTER (histogram()s): (name, bytes, instances)."""
    rows = []
    for name in set(before["classes"]) | set(after["classes"]):
        b, a = before["classes"].get(name, [0, 0]), after["classes"].get(name, [0, 0])
        rows.append((name, a[1] - b[1], a[0] - b[0]))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows[:top]


def by_library(before: dict, after: dict) -> dict[str, int]:
    """How many live bytes each library's classes gained from BEFORE to AFTER, largest first."""
    found: dict[str, int] = defaultdict(int)
    for name in set(before["classes"]) | set(after["classes"]):
        found[library(name)] += after["classes"].get(name, [0, 0])[1] - before["classes"].get(name, [0, 0])[1]
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


SIZE = re.compile(r"objectSize = ([\d.,]+) (bytes|kB|MB|GB)")
UNITS = {"bytes": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3}
OBJECT = re.compile(r"object =\s*\[\s*\n\s*(\S+)")
FRAME = re.compile(r"^\s+([\w$.<>]+)\(.*\)\s+line:")


def old_object_samples(text: str) -> list[tuple[str, str, int]]:
    """`jfr print --events jdk.OldObjectSample` as (object type, allocation site, bytes) per sample: the site
    is the first frame of the allocating stack outside the JDK (java., jdk., sun.), the method without its
    arguments; an object allocated by the JDK alone keeps its top frame."""
    found = []
    for event in text.split("jdk.OldObjectSample {")[1:]:
        size = SIZE.search(event)
        obj = OBJECT.search(event)
        frames = [m.group(1) for line in event.split("stackTrace = [", 1)[-1].splitlines() if (m := FRAME.match(line))]
        site = next((f for f in frames if not f.startswith(("java.", "jdk.", "sun."))), frames[0] if frames else "?")
        nbytes = round(float(size.group(1).replace(",", "")) * UNITS[size.group(2)]) if size else 0
        found.append((re.sub(r"\[\d+\]", "[]", obj.group(1)) if obj else "?", site, nbytes))
    return found


def sites(samples: list[tuple[str, str, int]], top: int = 10) -> list[tuple[str, str, int, float]]:
    """The allocation sites of SAMPLES (old_object_samples), by their share of the samples: (site, type,
    samples, share). JFR takes a sample when a thread's allocation buffer (TLAB) fills, so a site is sampled
    about in proportion to the bytes it allocates, however small its objects: the share of the samples
    ranks the holders by bytes. A single object larger than a TLAB is always sampled, once, so it weighs
    one sample, not its size. It ranks; the histograms measure."""
    total = len(samples) or 1
    groups: dict[tuple[str, str], int] = defaultdict(int)
    for kind, site, _ in samples:
        groups[(HIDDEN.sub("", site), HIDDEN.sub("", kind))] += 1
    rows = [(site, kind, count, count / total) for (site, kind), count in groups.items()]
    rows.sort(key=lambda r: (-r[2], r[0], r[1]))
    return rows[:top]


def socket_queues(texts: list[str], port: int) -> dict[str, int]:
    """The connections of /proc/net/tcp[6] (TEXTS) to a server on PORT, from both ends: "server" sockets
    (local port PORT, ESTABLISHED), how many of them hold bytes the server has not read ("unread": a
    request it has not taken up), and "answered": the clients' sockets (remote port PORT) with bytes
    waiting in theirs, which the holder never reads: an answer that came before the measurement was over."""
    found = {"server": 0, "unread": 0, "answered": 0}
    for text in texts:
        for line in text.splitlines()[1:]:
            f = line.split()
            if len(f) < 5 or f[3] != "01":
                continue
            local, remote = int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16)
            rx = int(f[4].split(":")[1], 16)
            if local == port:
                found["server"] += 1
                found["unread"] += rx > 0
            elif remote == port:
                found["answered"] += rx > 0
    return found


IN_FLIGHT = re.compile(r"^demo_requests_in_flight\{[^}]*\}\s+([\d.eE+-]+)", re.M)


def in_flight(prometheus: str) -> int | None:
    """demo_requests_in_flight from the service's /actuator/prometheus, None when it has none."""
    m = IN_FLIGHT.search(prometheus)
    return int(float(m.group(1))) if m else None


KIB = 1024


def figures(record: dict) -> dict:
    """One hold (a requests-memory.jsonl line) in KiB: per idle connection, per waiting request (its
    connection included: the live set with the requests waiting less the idle one, over the connections),
    per request the server read beyond its connection (None when it read none), and per connection what
    was still live after they were reset and the server had drained."""
    live, n, read = record["live"], record["opened"], record["read"]
    per = (lambda x: x / n / KIB) if n else (lambda x: None)
    return {
        "per_connection": per(live["connections"] - live["idle"]),
        "per_request": per(live["held"] - live["idle"]),
        "beyond_connection": (live["held"] - live["connections"]) / read / KIB if read else None,
        "left_after": per(live["after"] - live["idle"]),
    }


def slope(records: list[dict]) -> float | None:
    """KiB per waiting request from the smallest hold of a mode to its largest (the live set's growth over
    the connections added): what each request more costs, without what any hold costs once (caches)."""
    held = sorted((r["opened"], r["live"]["held"]) for r in records if r["opened"])
    if len(held) < 2 or held[-1][0] == held[0][0]:
        return None
    return (held[-1][1] - held[0][1]) / (held[-1][0] - held[0][0]) / KIB
