"""The collector's pauses before each liveness kill: how much of the seconds the kubelet counted its
probes the pod's JVM was stopped for garbage collection (issue 49: a service that never blocks, killed
because its heap is full).

The recorder reads the JVM's GC pause total with the service's counters (``metrics`` records, ``gcPauseS``:
Micrometer's ``jvm_gc_pause_seconds_sum`` over every collector and cause, seconds since the container
started). For each liveness kill, the killed container's last answered scrape before the kill and its
earliest one at most ``window`` seconds before that: the pause seconds between them over the seconds
between them. A JVM collecting back to back answers few scrapes, so the last one may come some seconds
before the kill (``last_answer_s``); a kill with no two answered scrapes of its container there is not
measured. With it, the most requests the killed container said it held in flight before the kill (its
``inFlight``, over all its answered scrapes): how many waiting requests its heap held when the collector took
over, the figure docs/benchmark.md predicts from the bytes each one holds.

The same for the variant's first container to end, killed or not (``RunFacts.gc_first``): a JVM whose heap
is full of waiting requests is ended by whichever comes first, the kubelet's third failed probe in a row or
the heap's end (-XX:+ExitOnOutOfMemoryError), and the collector's share before it is measured either way.

And, killed or not, how full the collector's last major collections left each variant's old generation
(``fullest_heap``: ``liveB`` of ``oldMaxB``, Micrometer's live data size after reclamation, beside the
requests in flight of the same scrape): a heap that holds its waiting requests with room to spare, or one
that the next collection cannot empty.

A JVM that answers no scrape cannot say how long it was stopped, and one collecting back to back answers
few (a killed run's last answered scrape can come 7-15 s before the kill). So where the
JVM logs its collections (``-Xlog:gc``, unified logging's pause lines on stdout: "GC(12) Pause Full
(Allocation Failure) 84M->83M(128M) 812.345ms"), the recorder reads the killed container's log from the
kubelet right after the restart (``gclog`` records: each pause's end, the container runtime's timestamp of
the line, and its length), and the share is the pauses' overlap with the probe's period x threshold before
the kill, with no scrape needed. A pause cut short by the kill is never logged: the share from the log is a
floor.

Where the JVM also logs each collection's CPU (``-Xlog:gc,gc+cpu``: "GC(12) User=0.79s Sys=0.01s Real=0.81s"),
the share of a CPU its collector got in its pauses before the end (``cpu_pct``: CPU seconds over the pauses'
seconds). The serial collector is one thread: a collector with its CPU gets about 100 %, one whose CPU the
rest of the machine takes gets less and each of its pauses lasts longer for the same live set (docs/lab.md,
"The collector's kill").
"""

import re
import statistics
from dataclasses import dataclass, replace

from liveness_lab.base.kube import parse_time

# Two answered scrapes closer than this say little of a share of time (the recorder scrapes every 2 s).
MIN_SPAN_S = 4.0
# The JVM logs CPU times in hundredths of a second: under a second of pauses says little of a share.
MIN_CPU_SPAN_S = 1.0
# How long the run's typical full collection lasted: its median CPU seconds in the window over the share of a
# CPU the collector had there (``typical_pause_s``). A full collection of gc-heap-full's heap costs about the
# same CPU in every run (0.29-0.36 s at the median, 0.45 s at most) and lasts that work over the collector's
# share (445 ms at 80 %, 845 ms at 40 %, 1,053 ms at 32 %). Two forms of the count of requests in flight at
# the first end were judged only where the collector had its CPU (three quarters of one; then a typical
# collection under the probe's timeout), and neither held: the count depends on the share continuously
# (docs/lab.md, "The collector's kill"). So the count is judged as a band from the heap alone, at any share,
# and this figure is reported beside it: where in the band the kill came.


@dataclass(frozen=True)
class GcBeforeKill:
    pod: str
    t: float  # the kill
    paused_s: float | None  # GC pauses between the two scrapes; None: not measured
    span_s: float | None  # seconds between the two scrapes
    last_answer_s: float | None  # seconds from the last answered scrape to the kill
    in_flight: int | None = None  # the most requests in flight the container reported before the kill
    source: str = "scrapes"  # "log": the share is the killed container's GC log's (span_s, the window)
    ended: str = "liveness"  # how the container ended: a key of base.causes.CAUSES (an exit is measured the same way)
    cpu_pct: float | None = None  # the share of a CPU the collector got in its logged pauses there; None: not logged
    work_s: float | None = None  # the CPU seconds of its logged full collections there, the median; None: none logged

    @property
    def typical_pause_s(self) -> float | None:
        """How long a typical full collection lasted with the CPU the collector got: its work over its share."""
        return None if self.work_s is None or not self.cpu_pct else round(self.work_s / (self.cpu_pct / 100.0), 3)

    @property
    def share(self) -> float | None:
        return None if self.paused_s is None or not self.span_s else self.paused_s / self.span_s


def gc_before_kills(timeline: list[dict], variant: str, kills: list[tuple[str, float]], window: float) -> list[GcBeforeKill]:
    """One GcBeforeKill per (pod, t) of KILLS, from VARIANT's answered scrapes in TIMELINE; its share from
    the killed container's GC log instead where the recorder read one with pause lines (log_before_kills)."""
    samples: dict[str, list[dict]] = {}
    for r in timeline:
        if r["kind"] != "metrics":
            continue
        for pod, m in r["pods"].items():
            if m.get("variant") == variant:
                samples.setdefault(pod, []).append(m)
    found = []
    for pod, t in kills:
        before = [m for m in samples.get(pod, []) if m["t"] < t]
        if not before:
            found.append(GcBeforeKill(pod, t, None, None, None))
            continue
        last = before[-1]
        # The same container: a restart count that moved, or a GC total that fell, began a new one.
        life = [last]
        for m in reversed(before[:-1]):
            if m["restarts"] != last["restarts"] or m.get("gcPauseS", 0) > life[-1].get("gcPauseS", float("inf")):
                break
            life.append(m)
        held = [m["inFlight"] for m in life if "inFlight" in m]
        in_flight = max(held) if held else None
        same = [m for m in life if "gcPauseS" in m and m["t"] >= last["t"] - window]
        span = same[0]["t"] - same[-1]["t"] if same else 0.0
        if span < MIN_SPAN_S:
            found.append(GcBeforeKill(pod, t, None, None, round(t - last["t"], 1) if same else None, in_flight))
            continue
        paused = round(same[0]["gcPauseS"] - same[-1]["gcPauseS"], 3)
        found.append(GcBeforeKill(pod, t, paused, round(span, 1), round(t - same[0]["t"], 1), in_flight))
    logged = log_before_kills(timeline, kills, window)
    return [
        replace(logged[(g.pod, g.t)], in_flight=g.in_flight, last_answer_s=g.last_answer_s) if (g.pod, g.t) in logged else g for g in found
    ]


# A unified-logging pause line after the runtime's timestamp: "2026-11-29T19:30:01.123456789Z [12.345s][info][gc]
# GC(12) Pause Full (Allocation Failure) 84M->83M(128M) 812.345ms" (the decorations may differ), and the
# same collection's CPU line with -Xlog:gc+cpu: "[12.345s][info][gc,cpu] GC(12) User=0.79s Sys=0.01s Real=0.81s".
PAUSE_LINE = re.compile(r"^(\S+) .*\bGC\((\d+)\) Pause (\w+).* (\d+(?:\.\d+)?)ms\s*$")
CPU_LINE = re.compile(r"\bGC\((\d+)\) User=(\d+(?:\.\d+)?)s Sys=(\d+(?:\.\d+)?)s Real=")


def log_pauses(text: str) -> list[list]:
    """[end, ms, kind] of each GC pause line in TEXT (a container log with timestamps: kube.previous_log):
    end in epoch seconds (the runtime's stamp, written as the pause ended), kind "Young", "Full"...; with a
    fourth item, the collection's CPU seconds (user and system) where its CPU line follows (-Xlog:gc+cpu)."""
    found, by_id = [], {}
    for line in text.splitlines():
        cpu = CPU_LINE.search(line)
        if cpu:
            pause = by_id.get(cpu.group(1))
            if pause is not None and len(pause) == 3:
                pause.append(round(float(cpu.group(2)) + float(cpu.group(3)), 3))
            continue
        m = PAUSE_LINE.match(line.strip())
        if not m:
            continue
        try:
            end = parse_time(m.group(1))
        except ValueError:
            continue
        if end is not None:
            pause = [round(end, 3), float(m.group(4)), m.group(3)]
            by_id[m.group(2)] = pause
            found.append(pause)
    return found


def cpu_between(pauses: list[list], start: float, end: float) -> float | None:
    """The percent of a CPU the collector got in the PAUSES ([end, ms, kind, cpu_s]) that ended between START
    and END: their CPU seconds over their length (None: under MIN_CPU_SPAN_S of pauses with a CPU line)."""
    timed = [p for p in pauses if len(p) > 3 and start < p[0] <= end]
    span = sum(p[1] for p in timed) / 1000.0
    return None if span < MIN_CPU_SPAN_S else round(100.0 * sum(p[3] for p in timed) / span, 1)


def work_between(pauses: list[list], start: float, end: float) -> float | None:
    """The median CPU seconds of the full collections among PAUSES ([end, ms, kind, cpu_s]) that ended
    between START and END (None: none with a CPU line)."""
    work = [p[3] for p in pauses if len(p) > 3 and p[2] == "Full" and start < p[0] <= end]
    return round(statistics.median(work), 3) if work else None


def paused_between(pauses: list[list], start: float, end: float) -> float:
    """Seconds of PAUSES ([end, ms, kind]) that fall between START and END."""
    total = 0.0
    for stop, ms, *_ in pauses:
        total += max(0.0, min(stop, end) - max(stop - ms / 1000.0, start))
    return total


def log_before_kills(timeline: list[dict], kills: list[tuple[str, float]], window: float) -> dict[tuple[str, float], GcBeforeKill]:
    """Per (pod, t) of KILLS whose pod's GC log the recorder read (``gclog`` records with pause lines), the
    share of the WINDOW seconds before the kill its JVM was stopped, from those lines."""
    pauses: dict[str, list[list]] = {}
    for r in timeline:
        if r["kind"] == "gclog" and r.get("pauses"):
            pauses.setdefault(r["pod"], []).extend(r["pauses"])
    found = {}
    for pod, t in kills:
        if pod in pauses:
            paused = paused_between(pauses[pod], t - window, t)
            cpu, work = cpu_between(pauses[pod], t - window, t), work_between(pauses[pod], t - window, t)
            found[(pod, t)] = GcBeforeKill(pod, t, round(paused, 3), window, None, source="log", cpu_pct=cpu, work_s=work)
    return found


def lowest_share(found: list[GcBeforeKill]) -> float | None:
    """The smallest share of time stopped for GC among the measured kills: what every kill showed at least."""
    shares = [g.share for g in found if g.share is not None]
    return min(shares) if shares else None


def first_share(first: GcBeforeKill | None) -> float | None:
    """The percent of time the first container to end was stopped for GC before its end (None: not measured)."""
    return None if first is None or first.share is None else round(100 * first.share, 1)


@dataclass(frozen=True)
class HeapHigh:
    pod: str
    t: float
    live_b: int  # the old generation's live bytes after the last major collection
    old_max_b: int  # the old generation's size
    in_flight: int | None  # the requests in flight the same scrape reported

    @property
    def pct(self) -> float:
        return 100.0 * self.live_b / self.old_max_b

    def describe(self) -> str:
        held = f" with {self.in_flight:,} requests in flight" if self.in_flight is not None else ""
        return f"{self.live_b / 2**20:.0f} MiB live of {self.old_max_b / 2**20:.0f} MiB ({self.pct:.0f} %){held}"


def fullest_heap(timeline: list[dict], variant: str) -> HeapHigh | None:
    """VARIANT's fullest old generation after a major collection in TIMELINE's answered scrapes (None: no
    scrape had the meters, or no major collection had run: a live size of 0)."""
    best = None
    for r in timeline:
        if r["kind"] != "metrics":
            continue
        for pod, m in r["pods"].items():
            if m.get("variant") != variant or not m.get("liveB") or not m.get("oldMaxB"):
                continue
            high = HeapHigh(pod, m["t"], m["liveB"], m["oldMaxB"], m.get("inFlight"))
            if best is None or high.pct > best.pct:
                best = high
    return best
