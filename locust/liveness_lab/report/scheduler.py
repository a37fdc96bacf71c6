"""The JDK's virtual-thread scheduler in the pods whose mode serves requests on virtual threads, as Spring
Boot's info endpoint reports it (``/actuator/info``, ``process.virtualThreads``: ``management.info.process.
enabled`` in the service's application.yaml; Boot 3.5+ on JDK 24+, from ``jdk.management.
VirtualThreadSchedulerMXBean``).

- ``mounted``: virtual threads running on a carrier now; at most ``parallelism`` unless a carrier is
  compensated for a pinned or blocked one;
- ``queued``: virtual threads ready to run, waiting for a carrier. A virtual thread is not preempted: one that
  computes holds its carrier until it parks, and every other one waits here, a liveness probe's included
  when Tomcat serves it on a virtual thread (spring-boot#48520);
- ``parallelism``: carriers the scheduler aims for, ``Runtime.availableProcessors()`` by default, which in a
  container is the CPU limit rounded up (a 500m limit gives 1);
- ``poolSize``: carrier threads started.

The recorder reads it with the service's counters (``vthreads`` records); on servlet-virtual the endpoint
itself runs on a virtual thread, so when the carriers are starved the reading times out too, and an
unanswered reading is evidence of the same thing.
"""

import json
from dataclasses import dataclass, field

# The modes that serve requests (or their blocking call) on virtual threads (service/.../Mode.java).
VIRTUAL_MODES = frozenset({"virtual", "servlet-virtual"})
KEYS = ("mounted", "queued", "parallelism", "poolSize")


def parse_info(body: bytes) -> dict:
    """process.virtualThreads of one /actuator/info answer, {} when it has none (Boot before 3.5, a JDK
    before 24, process info off)."""
    try:
        info = json.loads(body)
    except ValueError:
        return {}
    found = ((info.get("process") or {}).get("virtualThreads") or {}) if isinstance(info, dict) else {}
    return {k: int(found[k]) for k in KEYS if isinstance(found.get(k), int | float)}


@dataclass
class Scheduler:
    """One variant's readings over the load (from its start to its stop)."""

    variant: str
    readings: int = 0  # answered, with the scheduler's figures
    missed: int = 0  # not answered within the recorder's timeout
    queued_max: int | None = None
    mounted_max: int | None = None
    parallelism: set[int] = field(default_factory=set)

    def describe(self) -> str:
        """ "queued up to 31, mounted up to 1 of parallelism 1 (40 readings, 2 unanswered)"."""
        asked = f"{self.readings + self.missed} readings, {self.missed} unanswered"
        if self.queued_max is None:
            return f"not read ({asked})"
        par = "/".join(str(p) for p in sorted(self.parallelism)) or "?"
        return f"queued up to {self.queued_max}, mounted up to {self.mounted_max} of parallelism {par} ({asked})"

    def to_json(self) -> dict:
        return {
            "readings": self.readings,
            "missed": self.missed,
            "queuedMax": self.queued_max,
            "mountedMax": self.mounted_max,
            "parallelism": sorted(self.parallelism),
        }


def schedulers(timeline: list[dict], start: float, end: float) -> dict[str, Scheduler]:
    """Per variant, its pods' readings between START and END (the load), from the ``vthreads`` records."""
    out: dict[str, Scheduler] = {}
    for r in timeline:
        if r["kind"] != "vthreads":
            continue
        for pod in r.get("missed", {}).values():
            if start <= pod["t"] <= end:
                out.setdefault(pod["variant"], Scheduler(pod["variant"])).missed += 1
        for pod in r.get("pods", {}).values():
            if not start <= pod["t"] <= end or "queued" not in pod:
                continue
            s = out.setdefault(pod["variant"], Scheduler(pod["variant"]))
            s.readings += 1
            s.queued_max = max(s.queued_max or 0, pod["queued"])
            s.mounted_max = max(s.mounted_max or 0, pod.get("mounted", 0))
            if "parallelism" in pod:
                s.parallelism.add(pod["parallelism"])
    return out
