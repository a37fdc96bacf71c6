"""CFS throttling from the kernel's own counters, every second: each container's ``cpu.stat``
(``nr_periods``, ``nr_throttled``) read inside the kind node that runs it.

cAdvisor's counters (the recorder's ``throttle`` records, through the kubelet) move when cAdvisor refreshes
them, every 10-15 s on its own schedule: a 15 s read may hold no new period or two refreshes' worth, so "the
most throttled 15 s" of a warm-up was the most throttled read, wherever its edges fell (issue 48: a flat
warm-up read 19 / 78 / 65 / 31 %). The kernel counts each 100 ms period as it ends; read once a second, the
most throttled 15 s is found exactly (a window sliding by the second), and the run's share is the same
count over the whole recording.

Read like the machine's CPU (recorder.MachineCpu): ``docker exec`` into each kind node container that runs
a variant pod, a shell loop there (report.node_loop; no tool the node image lacks: sh, find and builtins). Paths as
the kubelet makes them on either cgroup driver and version: ``.../kubelet-kubepods-burstable-pod<uid>.slice/
cri-containerd-<id>.scope/cpu.stat`` (systemd) or ``.../kubepods/burstable/pod<uid>/<id>/cpu.stat``
(cgroupfs); v1 (``cpu``) and v2 (the unified hierarchy) alike have the two counters. A node that is not a
kind container (another cluster) is not read, and the report keeps cAdvisor's reads.
"""

import re

from .node_loop import NodeLoop

# One block a second: "<path> <nr_periods> <nr_throttled>" per container cgroup of a pod, then "end".
NODE_LOOP = r"""
find /sys/fs/cgroup -name cpu.stat -path '*kubepods*pod*' 2>/dev/null | while IFS= read -r f; do
  p=; n=
  while read -r k v; do
    case $k in nr_periods) p=$v ;; nr_throttled) n=$v ;; esac
  done < "$f"
  [ -n "$p" ] && [ -n "$n" ] && printf '%s %s %s\n' "$f" "$p" "$n"
done
echo end
"""
POD_DIR = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")
# The source the report names.
SOURCE = "the kernel's cpu.stat of each container, every second"
# The most throttled window is this long (the cAdvisor reads it replaces were 15 s apart).
PEAK_WINDOW_S = 15.0


def parse_line(line: str):
    """(pod uid, container cgroup, periods, throttled) of one loop line, or None: a pod's own cgroup (not a
    container's) or anything else."""
    parts = line.rsplit(" ", 2)
    if len(parts) != 3:
        return None
    path, periods, throttled = parts
    dirs = path.split("/")[:-1]
    if len(dirs) < 2:
        return None
    m = POD_DIR.search(dirs[-2])
    if not m or POD_DIR.search(dirs[-1]):
        return None  # the container's parent must be the pod's cgroup, and the container not one itself
    try:
        return m.group(1).replace("_", "-"), dirs[-1], int(periods), int(throttled)
    except ValueError:
        return None


class NodeCgroups(NodeLoop):
    """Every container's CFS counters in kind node NODE, one block a second, handed to ON_SAMPLE({uid:
    {container: [periods, throttled]}}) from a thread of its own."""

    def __init__(self, node: str, on_sample, docker: str = "docker"):
        self.on_sample = on_sample
        super().__init__(node, NODE_LOOP, self._read, docker)

    def _read(self, lines):
        block: dict[str, dict[str, list[int]]] = {}
        for line in lines:
            line = line.rstrip("\n")
            if line == "end":
                self.on_sample(block)
                block = {}
            elif (found := parse_line(line)) is not None:
                uid, container, periods, throttled = found
                block.setdefault(uid, {})[container] = [periods, throttled]


def pod_names(timeline: list[dict]) -> dict[str, str]:
    """Pod uid -> name, from the recorder's pod snapshots (``uid``; older recordings have none)."""
    return {p["uid"]: p["name"] for r in timeline if r["kind"] == "pods" for p in r["pods"] if p.get("uid")}


def series(timeline: list[dict]) -> dict[str, list[tuple[float, int, int]]]:
    """Per pod name, [(t, periods, throttled)] counted from its first sample: each container's counters
    summed over the pod's containers, a container new since the last sample counted from 0 (a restart
    makes a new cgroup)."""
    names = pod_names(timeline)
    last: dict[tuple[str, str], list[int]] = {}
    totals: dict[str, list] = {}
    for r in timeline:
        if r["kind"] != "cgroup":
            continue
        for uid, containers in r["pods"].items():
            name = names.get(uid)
            if name is None:
                continue
            first = name not in totals
            run = totals.setdefault(name, [])
            periods, throttled = run[-1][1:] if run else (0, 0)
            for container, (p, n) in containers.items():
                before = last.get((uid, container))
                if before is None:
                    before = [p, n] if first else [0, 0]
                periods, throttled = periods + max(0, p - before[0]), throttled + max(0, n - before[1])
                last[(uid, container)] = [p, n]
            run.append((r["t"], periods, throttled))
    return totals


def throttled_share(timeline: list[dict]) -> dict[str, float]:
    """Per pod, the share of its CFS periods throttled over the recording."""
    return {pod: run[-1][2] / run[-1][1] for pod, run in series(timeline).items() if run[-1][1] > 0}


def throttled_peak(timeline: list[dict], min_periods: int, window_s: float = PEAK_WINDOW_S) -> dict[str, float]:
    """Per pod, the share of CFS periods throttled in its most throttled WINDOW_S seconds (from each sample
    to the first one WINDOW_S or more after it) in which it ran MIN_PERIODS periods or more."""
    peak = {}
    for pod, run in series(timeline).items():
        j = 0
        for i, (t, periods, throttled) in enumerate(run):
            j = max(j, i)
            while j < len(run) and run[j][0] - t < window_s:
                j += 1
            if j == len(run):
                break
            n, hits = run[j][1] - periods, run[j][2] - throttled
            if n >= min_periods:
                peak[pod] = max(peak.get(pod, 0.0), hits / n)
    return peak
