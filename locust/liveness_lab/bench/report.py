"""The bench's report (``python -m liveness_lab bench``, scripts/bench.sh): its runs as a table and a
chart held against Little's law, and what a JFR recording's CPU samples say.

Reads REPORT_DIR/results.jsonl (one run a line: the mode, the scenario, memory and thread samples,
vegeta's JSON report and the run's CPU shares), REPORT_DIR/memory.jsonl (the idle connections' memory),
REPORT_DIR/soak*.jsonl (a --soak run's phases and samples), REPORT_DIR/requests-memory.jsonl (a --memory
run's holds) and REPORT_DIR/machine.txt; writes table.md, cpu.md, memory.md, soak.md, requests-memory.md,
results.json and chart.png there. ``cpu_shares`` reads the text of
`jfr print --events jdk.ExecutionSample` and gives the share of the samples spent in each per-request
instrument and library (CPU_PARTS): where a mode's CPU goes.

To build a report folder's files again (from locust/, in the .venv):
    python -m liveness_lab.bench.report reports/bench-<timestamp>
"""

import json
import sys
from pathlib import Path

NS_PER_MS = 1_000_000
# vegeta's share of its own CPU from which the run measured the client rather than the server.
CLIENT_BOUND = 0.9


def figures(run):
    """The figures of one run: throughput against its bounds, latency above L, errors, memory."""
    vegeta = run["vegeta"]
    latency_ms = run["latency_ms"]
    bound = run["concurrency"] * 1000 / latency_ms  # Little's law: X = C / L
    thread_bound = run["event_loops"] * 1000 / latency_ms  # blocking: X = T / L
    requests = vegeta.get("requests", 0)
    successes = round(requests * vegeta.get("success", 0))
    errors = requests - successes
    # Answers per second over the window in which answers can arrive: from the first possible answer
    # (the fastest latency) to the last one. vegeta's own "throughput" starts at the first request,
    # which would cap a 20 s run at L = 1 s at 20/21 of the bound.
    window_s = (vegeta.get("duration", 0) + vegeta.get("wait", 0) - vegeta.get("latencies", {}).get("min", 0)) / 1e9
    achieved = successes / window_s if window_s > 0 else 0.0
    lat = vegeta.get("latencies", {})
    conns = run["connections"]
    grown_kib = run["load_rss_kib"] - run["idle_rss_kib"]
    return {
        "mode": run["mode"],
        "label": label(run),
        "latency_ms": latency_ms,
        "concurrency": run["concurrency"],
        "offered_rps": bound,
        "achieved_rps": achieved,
        "of_bound": achieved / bound,
        "of_thread_bound": achieved / thread_bound,
        "p50_over_l_ms": lat.get("50th", 0) / NS_PER_MS - latency_ms,
        "p99_over_l_ms": lat.get("99th", 0) / NS_PER_MS - latency_ms,
        # The open-loop client's requests due in the run's second half: the steady state, without the
        # first seconds' connection set-up (vegeta does not report it).
        "p99_second_half_over_l_ms": (
            vegeta["latencies_second_half"]["99th"] / NS_PER_MS - latency_ms
            if vegeta.get("latencies_second_half", {}).get("count")
            else None
        ),
        "requests": requests,
        "errors": errors,
        "idle_rss_mib": run["idle_rss_kib"] / 1024,
        "load_rss_mib": run["load_rss_kib"] / 1024,
        "connections": conns,
        # Only meaningful where memory grew with the connections (a GC between samples can shrink it).
        "kib_per_connection": grown_kib / conns if conns and grown_kib > 0 else None,
        "threads": run["load_threads"],
        # CPU (older runs lack it): this JVM's share of its one CPU over the run, what it spent per
        # answer, and the other modes' share of the same CPU at the time (a backlog still draining).
        "cpu_busy": run["cpu_ms"] / run["wall_ms"] if run.get("wall_ms") else None,
        "cpu_us_per_answer": 1000 * run["cpu_ms"] / successes if run.get("wall_ms") and successes else None,
        "others_cpu_busy": run["others_cpu_ms"] / run["wall_ms"] if run.get("wall_ms") else None,
        "loadgen_cpu_busy": run["loadgen_cpu_ms"] / run["wall_ms"]
        if run.get("loadgen_cpu_ms") is not None and run.get("wall_ms")
        else None,
        # What the server itself finished, whether or not the client still waited: the sleeps of the
        # modes that sleep (JFR's jdk.ThreadSleep), per second of the run. Reactive does not sleep.
        "server_rps": run["sleeps_completed"] / (run["wall_ms"] / 1000) if run.get("sleeps_completed") and run.get("wall_ms") else None,
        "thread_bound_rps": thread_bound,
        "listen_overflows": run.get("listen_overflows"),
        # The open-loop client's own lateness: how long after its intended time a request was sent, p99
        # (part of p99 - L that is the client's, not the server's; vegeta does not report it).
        "client_late_p99_ms": vegeta["send_lag_99th"] / NS_PER_MS if "send_lag_99th" in vegeta else None,
        # The collections during the run (JFR; older runs lack them): how many, and each one's longest pause.
        "gc_pauses_ms": run.get("gc_pauses_ms"),
        "profile": run.get("profile"),
    }


# Where CPU samples go. The per-request instruments of issue 15, by the frames that do their work (not
# the pipeline handlers or filters that wrap everything after them): a sample counts for an instrument
# when any frame of its stack starts with one of its prefixes.
INSTRUMENTS = {
    "Reactor Netty server metrics": (
        "reactor.netty.http.server.MicrometerHttpServerMetricsRecorder",
        "reactor.netty.channel.MicrometerChannelMetricsRecorder",
        "reactor.netty.http.MicrometerHttpMetricsRecorder",
    ),
    "Spring observation (http.server.requests)": ("io.micrometer.observation.", "org.springframework.http.server.reactive.observation."),
    "Micrometer (any meter)": ("io.micrometer.core.",),
    "JSON (Jackson)": ("com.fasterxml.jackson.", "tools.jackson."),
    "logging": ("ch.qos.logback.", "org.slf4j.", "org.apache.logging."),
}
# And by the library of the method running when sampled (self time): each sample counts once.
LIBRARIES = {
    "service": ("io.livenesslab.",),
    "Netty": ("io.netty.",),
    "Reactor": ("reactor.",),
    "Spring": ("org.springframework.",),
    "Micrometer": ("io.micrometer.",),
    "Jackson": ("com.fasterxml.jackson.", "tools.jackson."),
    "JDK": ("java.", "jdk.", "sun."),
}
CPU_PARTS = list(INSTRUMENTS) + [f"self: {lib}" for lib in LIBRARIES] + ["self: other"]


def cpu_shares(samples_text):
    """The share of `jfr print` ExecutionSample events spent in each of CPU_PARTS, and the leaf methods
    that took the most samples."""
    stacks, frames = [], None
    for line in samples_text.splitlines():
        line = line.strip()
        if line.startswith("stackTrace = ["):
            frames = []
        elif frames is not None and line in ("]", "..."):
            stacks.append(frames)
            frames = None
        elif frames is not None:
            frames.append(line)
    total = len(stacks)
    counts = dict.fromkeys(CPU_PARTS, 0)
    for stack in stacks:
        for part, prefixes in INSTRUMENTS.items():
            counts[part] += any(f.startswith(prefixes) for f in stack)
        leaf_library = next((lib for lib, prefixes in LIBRARIES.items() if stack and stack[0].startswith(prefixes)), "other")
        counts[f"self: {leaf_library}"] += 1
    shares = {part: n / total if total else 0.0 for part, n in counts.items()}
    leaves = {}
    for stack in stacks:
        if stack:
            leaf = stack[0].split("(")[0]
            leaves[leaf] = leaves.get(leaf, 0) + 1
    top = sorted(leaves.items(), key=lambda kv: -kv[1])[:15]
    return {"samples": total, "shares": shares, "top_leaves": [(m, n / total) for m, n in top]}


def label(run):
    """How the tables name a run's JVM: its mode, and the baseline's commit for a --baseline run."""
    return run["mode"] + (f" ({run['build']})" if run.get("build") else "")


def cpu_table(runs):
    """cpu.md: per run, the share of its JVM's CPU samples in each part, and its hottest leaf methods."""
    parts = CPU_PARTS
    lines = ["| mode | L | C | CPU per answer | samples | " + " | ".join(parts) + " |", "|---|---|---|---|---|" + "---|" * len(parts)]
    for run, row in runs:
        cpu = run.get("cpu_shares")
        if not cpu or not cpu["samples"]:
            continue
        per_answer = f"{row['cpu_us_per_answer']:,.0f} µs" if row.get("cpu_us_per_answer") is not None else "-"
        lines.append(
            f"| {label(run)} | {run['latency_ms']} ms | {run['concurrency']:,} | {per_answer} | {cpu['samples']:,} | "
            + " | ".join(f"{cpu['shares'][p]:.0%}" for p in parts)
            + " |"
        )
    lines += [
        "",
        "Shares of the JVM's CPU samples (JFR, every 10 ms of Java code). An instrument's share: the samples with",
        "one of its frames on the stack (Micrometer's includes the meters of the other two). self: the library of the",
        "method running when sampled; those add up to 100 %. GC and JIT threads are not Java samples; CPU per answer",
        "includes them.",
        "",
    ]
    for run, _ in runs:
        cpu = run.get("cpu_shares")
        if cpu and cpu["samples"]:
            lines.append(f"### {label(run)}, L = {run['latency_ms']} ms, C = {run['concurrency']:,}: hottest methods")
            lines.append("")
            lines += [f"- {share:.1%} `{method}`" for method, share in cpu["top_leaves"]]
            lines.append("")
    return "\n".join(lines)


def soak_table(phases, samples):
    """soak.md: per phase, what the client saw (errors, latency over L) and whether memory stayed flat."""
    lines = [
        "| mode | offered | minutes | requests | errors | p50 - L | p99 - L (target <= 50 ms) | same JVM throughout | heap after "
        "GC, first / last / max | RSS, first / last / max |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for phase in phases:
        v = phase["vegeta"]
        lat = v.get("latencies", {})
        requests = v.get("requests", 0)
        errors = requests - round(requests * v.get("success", 0))
        mine = [x for x in samples if x["mode"] == phase["mode"] and x["rate"] == phase["rate"]]
        alive = phase["alive"] and all(x["alive"] for x in mine)

        def span(key, mine=mine):
            values = [x["snapshot"].get(key, 0) / 1024 for x in mine]
            return f"{values[0]:.0f} / {values[-1]:.0f} / {max(values):.0f} MiB" if values else "-"

        lines.append(
            f"| {phase['mode']} | {phase['rate']} req/s of 1 s | {phase['minutes']} | {requests:,} | {errors:,} "
            f"| {lat.get('50th', 0) / NS_PER_MS - 1000:,.1f} ms | {lat.get('99th', 0) / NS_PER_MS - 1000:,.1f} ms "
            f"| {'yes' if alive else 'NO'} | {span('heap used')} | {span('RSS')} |"
        )
    lines += [
        "",
        "The demo's rate is its 20 users at 1 request/s each; the second phase offers 10 times that. Memory is",
        "sampled every minute after a full GC (jcmd GC.run, a pause of a few ms that every sample pays alike).",
    ]
    return "\n".join(lines) + "\n"


def memory_table(records):
    """memory.md: what each mode's JVM spent per idle keep-alive connection, by the JVM's own accounting."""
    lines = [
        "| mode | connections | RSS per connection | heap in use after GC, per connection | native (NMT, outside the heap) per "
        "connection | where (NMT categories that grew, KiB per connection) |",
        "|---|---|---|---|---|---|",
    ]
    for m in records:
        n = m["opened"]
        if not n:
            lines.append(f"| {label(m)} | 0 ({m['open_line']}) | - | - | - | - |")
            continue
        before, during = m["before"], m["during"]
        grew = {k: (during.get(k, 0) - before.get(k, 0)) / n for k in during if k not in ("RSS", "heap used", "Java Heap", "Total")}
        native = sum(grew.values())
        top = ", ".join(f"{k} {v:.1f}" for k, v in sorted(grew.items(), key=lambda kv: -kv[1])[:4] if v > 0.05)
        lines.append(
            f"| {label(m)} | {n:,} | {(during['RSS'] - before['RSS']) / n:.1f} KiB "
            f"| {(during.get('heap used', 0) - before.get('heap used', 0)) / n:.1f} KiB | {native:.1f} KiB | {top or '-'} |"
        )
    lines += [
        "",
        "Each connection sent one request, read its answer and stayed open, idle (locust/liveness_lab/bench/hold_connections.py).",
        "Figures are the growth from before the connections to while they were held, after a full GC each time;",
        "the heap's committed size is fixed (-Xms = -Xmx), so native excludes it. Target (issue 15): <= 20 KiB per connection.",
    ]
    return "\n".join(lines) + "\n"


def kib(x) -> str:
    return "-" if x is None else f"{x:,.1f}"


def short_site(site: str) -> str:
    """org.apache.catalina.connector.OutputBuffer.<init> -> connector.OutputBuffer.<init>: the class's
    package's last part, the class and the method."""
    parts = site.split(".")
    return ".".join(parts[-3:]) if len(parts) > 3 else site


def sent_of(r) -> str:
    """' of 7 sent' where the server took fewer requests than the holder sent it (and the rest stayed idle)."""
    return f" of {r['sent']:,} sent" if r.get("sent", r["opened"]) != r["read"] else ""


def requests_memory_table(records):
    """requests-memory.md: per mode and hold (--memory), the heap a waiting request holds, and who holds it."""
    from .heap import KIB, figures, slope

    modes = list(dict.fromkeys(label(r) for r in records))
    held = sorted({r["asked"] for r in records})
    lines = [
        "| mode | " + " | ".join(f"KiB per waiting request, {n:,} held" for n in held) + " | each request more (slope) | "
        "by library, the largest hold (KiB per request) |",
        "|---|" + "---|" * len(held) + "---|---|",
    ]
    for mode in modes:
        mine = {r["asked"]: r for r in records if label(r) == mode}
        cells = []
        for n in held:
            r = mine.get(n)
            if r is None:
                cells.append("-")
                continue
            cell = kib(figures(r)["per_request"])
            if r["read"] < r["opened"]:
                cell += f" ({r['read']:,} read)"
            cells.append(cell)
        largest = mine[max(mine)]
        libs = ", ".join(f"{lib} {b / largest['opened'] / KIB:,.1f}" for lib, b in list(largest["libraries"].items())[:5] if b > 0)
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {kib(slope(list(mine.values())))} | {libs} |")
    lines += [
        "",
        "| mode | held | read by the server | KiB per idle connection | KiB per waiting request (its connection included) | "
        "of which the request, per request read | left after the reset | live set idle / connections / held / after (MiB) | "
        "what a request adds (KiB per request read) | who allocated it (JFR: sampled bytes still alive) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        f, live = figures(r), r["live"]
        read = r["read"] or 1
        grew = ", ".join(f"`{name}` {b / read / KIB:,.1f}" for name, b, _ in r["request_classes"][:4] if b > 0)
        sampled = ", ".join(f"`{short_site(site)}` {kind} {share:.0%}" for site, kind, _, share in r["sites"][:3])
        flags = ""
        if r.get("answered_early"):
            flags += f" ({r['answered_early']:,} answered before the measurement)"
        if not r.get("drained", True):
            flags += " (not drained)"
        lines.append(
            f"| {label(r)} | {r['opened']:,}{flags} | {r['read']:,}{sent_of(r)} | {kib(f['per_connection'])} | {kib(f['per_request'])} "
            f"| {kib(f['beyond_connection'])} | {kib(f['left_after'])} | "
            + " / ".join(f"{live[k] / KIB / KIB:,.1f}" for k in ("idle", "connections", "held", "after"))
            + f" | {grew or '-'} | {sampled or '-'} ({r['samples']} samples) |"
        )
    lines += [
        "",
        "Each mode held N keep-alive connections (each served one `latencyMs=0` request first), then sent a request of "
        f"{records[0]['latency_ms'] // 1000 if records else 60} s on each and never read the answers, then reset them "
        "(locust/liveness_lab/bench/hold_connections.py). Live set: `jcmd GC.class_histogram` (a full collection first), the "
        "serial collector's filler objects left out; idle: after the warm-up, before the first hold.",
        "The requests were sent 1, 2, 4, ... at a time while the server read every one: a thread-bound mode takes as many "
        "as it has threads (blocking 4 event loops, servlet Tomcat's 200), and the rest would wait unread in the kernel's "
        "socket buffers (so they stay idle connections here: a server still serves a request it has not read after its "
        "client reset the connection). "
        "KiB per waiting request: (held - idle) / N, its connection included; of which the request: (held - connections) / "
        "the requests the server read; left after: (after - idle) / N, once the server counted no request in flight "
        "(demo_requests_in_flight). Each request more: the growth from the smallest hold to the largest over the "
        "requests added, without what a first hold costs once (caches, pools).",
        "By library: the classes' packages (held - idle); JDK types are arrays, strings and maps that any library may hold. "
        "Who allocated it: JFR's old-object samples (jdk.OldObjectSample) alive at the held histogram, by the first frame "
        "outside the JDK that allocated them; JFR samples large objects more often than small ones, so this ranks, the "
        "histogram measures. The histograms: histogram-<mode>-<N>-<state>.txt.",
    ]
    return "\n".join(lines) + "\n"


def p99(r) -> str:
    """p99 - L, and that of the run's second half where the client recorded it."""
    half = r.get("p99_second_half_over_l_ms")
    return f"{r['p99_over_l_ms']:,.0f} ms" + (f" (2nd half {half:,.0f} ms)" if half is not None else "")


def pauses(r) -> str:
    """The run's collections and the longest of their pauses: '2 (230 ms)', '7 (under 1 ms)' (a concurrent
    collector's), '0', or '-' where not recorded."""
    found = r.get("gc_pauses_ms")
    if found is None:
        return "-"
    if not found:
        return "0"
    return f"{len(found)} ({max(found):,.0f} ms)" if max(found) >= 1 else f"{len(found)} (under 1 ms)"


def late(r) -> str:
    """The open-loop client's p99 lateness, in the client CPU cells, where it was recorded."""
    return f", {r['client_late_p99_ms']:,.0f} ms late" if r.get("client_late_p99_ms") is not None else ""


def table(rows, machine):
    lines = [
        "; ".join(machine),
        "",
        "| mode | L | C | offered req/s (C/L) | achieved req/s | of C/L | server finished req/s | p50 - L | p99 - L | GC pauses "
        "(longest) | errors | RSS idle / load | KiB per connection | threads | CPU busy (others) | CPU per answer | client CPU | "
        "accept queue overflows | profile |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        of = f"{r['of_bound']:.1%}"
        if r["mode"] == "blocking":
            of += f" ({r['of_thread_bound']:.0%} of T/L)"
        per_conn = f"{r['kib_per_connection']:.1f}" if r["kib_per_connection"] is not None else "-"
        busy = f"{r['cpu_busy']:.0%} ({r['others_cpu_busy']:.0%})" if r.get("cpu_busy") is not None else "-"
        per_answer = f"{r['cpu_us_per_answer']:,.0f} µs" if r.get("cpu_us_per_answer") is not None else "-"
        loadgen = f"{r['loadgen_cpu_busy']:.0%}" if r.get("loadgen_cpu_busy") is not None else "-"
        if r.get("loadgen_cpu_busy") is not None and r["loadgen_cpu_busy"] >= CLIENT_BOUND:
            loadgen += " (client-bound)"
        loadgen += late(r)
        server = f"{r['server_rps']:,.1f}" if r.get("server_rps") is not None else "-"
        if r.get("server_rps") is not None and r["mode"] == "blocking":
            server += f" ({r['server_rps'] / r['thread_bound_rps']:.0%} of T/L)"
        profile = f"[top frames]({r['profile']})" if r.get("profile") else "-"
        overflows = f"{r['listen_overflows']:,}" if r.get("listen_overflows") is not None else "-"
        lines.append(
            f"| {r['label']} | {r['latency_ms']} ms | {r['concurrency']:,} | {r['offered_rps']:,.0f} "
            f"| {r['achieved_rps']:,.0f} | {of} | {server} | {r['p50_over_l_ms']:,.0f} ms | {p99(r)} | {pauses(r)} "
            f"| {r['errors']:,} of {r['requests']:,} | {r['idle_rss_mib']:.0f} / {r['load_rss_mib']:.0f} MiB "
            f"| {per_conn} ({r['connections']:,} open) | {r['threads']} | {busy} | {per_answer} | {loadgen} | {overflows} | {profile} |"
        )
    lines += [
        "",
        "C/L: Little's law bound (throughput = concurrency / latency). T/L: blocking's own bound, T = 4 event loops.",
        "p50 - L, p99 - L: what the server added to the requested latency; 2nd half: p99 - L of the requests due in the run's "
        "second half (the open-loop client's), its connections made. Errors: timeouts (10 x L, at least 5 s) and refusals.",
        "GC pauses: the JVM's collections during the run (JFR's jdk.GarbageCollection) and the longest stop of any; on one CPU the "
        "JVM picks the serial collector, whose young collections stop every event loop while they copy the requests in flight; "
        "'under 1 ms': a concurrent collector's (--service-args).",
        "CPU busy: the mode's JVM's share of its one CPU during the run (others: the other modes' JVMs on the same CPU).",
        "CPU per answer: that JVM's CPU time over its successful answers; one CPU serves at most 1 s / (CPU per answer) req/s.",
        "Server finished: the waits the server completed per second, answered in time or not (JFR's jdk.ThreadSleep events; "
        "reactive waits on timers, so none).",
        "client CPU: the load generator's (the bench's open-loop client or vegeta, results.jsonl: client) share of its own CPU "
        f"over the run; from {CLIENT_BOUND:.0%} on the client, not the server, is the limit (client-bound); 'N ms late': the "
        "open-loop client sent 1 % of its requests N ms or more after their intended time (counted in their latency): its own "
        "delay, or a wait for a connection once all it may open (2 x C) were busy with a slow server.",
        "Accept queue overflows: connections the kernel dropped during the run because the JVM's accept queue was full (TcpExt "
        "ListenOverflows); each costs its client a SYN retransmit of 1 s or more.",
        "Profile: the run's JFR recording (profile-*.jfr, the JDK's `profile` settings) as its hottest methods and allocations "
        "(profile-*.txt).",
    ]
    return "\n".join(lines) + "\n"


def floor_table(rows):
    """floor.md: what Spring WebFlux and the actuator cost over the floor (reactive's /api/work on bare
    Reactor Netty), per scenario: CPU per answer and p99 - L of each mode's row against the floor's."""
    floors = {(r["latency_ms"], r["concurrency"]): r for r in rows if r["mode"] == "floor"}
    lines = [
        "| mode | L | C | CPU per answer (floor) | x floor (target <= 1.5) | p99 - L (floor) | over the floor at p99 | GC pauses "
        "(floor) | errors (floor) | client CPU |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f = floors.get((r["latency_ms"], r["concurrency"]))
        if not f or r is f:
            continue
        mine, theirs = r.get("cpu_us_per_answer"), f.get("cpu_us_per_answer")
        ratio = f"{mine / theirs:.2f}" if mine and theirs else "-"
        cpu = f"{mine:,.0f} µs ({theirs:,.0f} µs)" if mine and theirs else "-"
        loadgen = " / ".join((f"{x['loadgen_cpu_busy']:.0%}" if x.get("loadgen_cpu_busy") is not None else "-") + late(x) for x in (r, f))
        lines.append(
            f"| {r['label']} | {r['latency_ms']} ms | {r['concurrency']:,} | {cpu} | {ratio} "
            f"| {p99(r)} ({p99(f)}) | {r['p99_over_l_ms'] - f['p99_over_l_ms']:+,.0f} ms | {pauses(r)} ({pauses(f)}) "
            f"| {r['errors']:,} ({f['errors']:,}) | {loadgen} |"
        )
    lines += [
        "",
        "The floor: the same /api/work (the service's Latency rules, its timer on the connection's event loop, Jackson's JSON, the "
        "same event loops, heap and "
        "CPU) on bare Reactor Netty, without Spring WebFlux, the actuator, the meters or the router "
        "(service/src/test/java/io/livenesslab/service/FloorServer.java). client CPU: the mode's run / the floor's run.",
    ]
    return "\n".join(lines) + "\n"


def chart(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = sorted({(r["latency_ms"], r["concurrency"]) for r in rows}, key=lambda s: (-s[0], s[1]))
    modes = list(dict.fromkeys(r["label"] for r in rows))  # in the order the bench ran them
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    width = 0.8 / max(len(modes), 1)
    for i, mode in enumerate(modes):
        xs, ratio, p99 = [], [], []
        for j, (lat, conc) in enumerate(scenarios):
            for r in rows:
                if r["label"] == mode and (r["latency_ms"], r["concurrency"]) == (lat, conc):
                    xs.append(j + (i - (len(modes) - 1) / 2) * width)
                    ratio.append(100 * r["of_bound"])
                    p99.append(max(r["p99_over_l_ms"], 0.1))
        top.bar(xs, ratio, width, label=mode)
        bottom.bar(xs, p99, width, label=mode)
    top.axhline(100, color="black", linewidth=0.8)
    top.set_ylabel("achieved / (C / L), %")
    top.set_title("Throughput against Little's law (open loop, constant rate)")
    top.legend()
    bottom.set_yscale("log")
    bottom.set_ylabel("p99 - L, ms (log)")
    bottom.set_xticks(range(len(scenarios)))
    bottom.set_xticklabels([f"L={lat} ms\nC={conc:,}" for lat, conc in scenarios])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(out):
    out = Path(out)
    results = out / "results.jsonl"
    runs = [json.loads(line) for line in results.read_text().splitlines() if line.strip()] if results.exists() else []
    rows = [figures(run) for run in runs]
    for r in rows:  # link only the profiles that are there (a copy of the run may leave them out)
        if r["profile"] and not (out / r["profile"]).exists():
            r["profile"] = None
    machine = (out / "machine.txt").read_text().splitlines() if (out / "machine.txt").exists() else []
    if rows:  # a --soak run has none
        (out / "table.md").write_text(table(rows, machine))
        (out / "cpu.md").write_text(cpu_table(list(zip(runs, rows, strict=False))))
        if any(r["mode"] == "floor" for r in rows):
            (out / "floor.md").write_text(floor_table(rows))
        chart(rows, out / "chart.png")
    if (out / "soak-results.jsonl").exists():
        phases = [json.loads(line) for line in (out / "soak-results.jsonl").read_text().splitlines() if line.strip()]
        samples = [json.loads(line) for line in (out / "soak.jsonl").read_text().splitlines() if line.strip()]
        (out / "soak.md").write_text(soak_table(phases, samples))
    if (out / "memory.jsonl").exists():
        memory = [json.loads(line) for line in (out / "memory.jsonl").read_text().splitlines() if line.strip()]
        (out / "memory.md").write_text(memory_table(memory))
    if (out / "requests-memory.jsonl").exists():
        held = [json.loads(line) for line in (out / "requests-memory.jsonl").read_text().splitlines() if line.strip()]
        if held:
            (out / "requests-memory.md").write_text("; ".join(machine) + "\n\n" + requests_memory_table(held))
    if rows:
        (out / "results.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
