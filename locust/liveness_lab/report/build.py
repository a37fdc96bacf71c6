"""Builds a scripted run's report: PNG plots per variant, a self-contained report.html, summary.md and
verdict.json, from the folder scripts/demo.sh filled (run.json, locust_stats_history.csv,
locust_stats.csv, timeline.jsonl). Exits 0 for PASS, 1 for FAIL, 2 for INCONCLUSIVE.

Usage (from locust/):
    python -m liveness_lab.report.build reports/<timestamp>
"""

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from liveness_lab.base import countdown, style  # noqa: E402
from liveness_lab.base.causes import CAUSES  # noqa: E402
from liveness_lab.base.kube import is_liveness_failure, killed_by  # noqa: E402
from liveness_lab.base.variants import stack_of  # noqa: E402

from .document import Document, Image, Item, Items, Pre, Section, Table, render_html, render_markdown  # noqa: E402
from .predictions import HELD, NOT_HELD, NOT_MEASURED, NOTHING  # noqa: E402
from .recording import Phases, load_run, requested_latency_ms  # noqa: E402
from .variant import VariantAnalysis  # noqa: E402
from .verdict import Verdict, judge  # noqa: E402

# A claim line's colour in the report, by its state (its text ends with the state in words).
LINE_COLOURS = {HELD: "ok", NOT_HELD: "fail", NOT_MEASURED: "fail", NOTHING: ""}

# Light enough that every variant colour (liveness_lab.style) reads on them.
PHASE_COLOURS = {"load": "#ebebeb", "quiet": "#e3ecf7"}


def _rel(ts, start):
    return [t - start for t in ts]


def _shade(ax, ph: Phases):
    ax.axvspan(0, ph.stop - ph.start, color=PHASE_COLOURS["load"], zorder=0)
    ax.axvspan(ph.quiet - ph.start, ph.end - ph.start, color=PHASE_COLOURS["quiet"], zorder=0)


LABELS = {kind: m["label"] for kind, m in style.MARKERS.items()}


def _markers(ax, a: VariantAnalysis, start, symbols=False, unreported=True):
    """The probe events as vertical lines, drawn as the web UI's Live tab draws them (liveness_lab.style);
    SYMBOLS: each also as its symbol just above the panel, as in the tab's event strip, a failure's place
    in the countdown above it (the "2" of "2/3": failures a period apart leave room for no more; the
    event log has "2/3"). UNREPORTED: also the failures a kill implies that no event reported (hollow)."""
    events = [(m.kind, m.t, m.label.split("/")[0]) for m in a.countdown() if unreported or m.kind != "unreported"]
    events += [("restart", r.t, "") for r in a.pods.restarts]
    for kind, t, label in events:
        m = style.MARKERS[kind]
        ax.axvline(t - start, color=m["colour"], linestyle=m["dash"], linewidth=m["width"])
        if symbols:
            face = "none" if m.get("hollow") else m["colour"]
            x = ax.get_xaxis_transform()
            ax.plot(t - start, 1.04, marker=m["symbol"], color=m["colour"], markerfacecolor=face, markersize=7, clip_on=False, transform=x)
            if label and kind != "kill":
                ax.text(t - start, 1.075, label, transform=x, fontsize=6.5, ha="center", va="bottom", clip_on=False)


def plot_variant(a: VariantAnalysis, ph: Phases, path: Path, latency_ms: float) -> None:
    """Four panels on one time axis (seconds since load start): req/s, latency, failure rate, pods; in the
    variant's colour with the probe events' lines and symbols, as the web UI's Live tab draws them."""
    start, rows = ph.start, a.series
    t = _rel([r.t for r in rows], start)
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(10, 9), constrained_layout=True)
    for ax in axes:
        _shade(ax, ph)
        _markers(ax, a, start, symbols=ax is axes[0])
        ax.grid(alpha=0.3)
    # As the web UI's Live tab: the variant's colour, told apart by dash; answered = all less failed.
    colour, ref = style.variant_colour(a.variant), style.REFERENCE_COLOUR
    axes[0].plot(t, [max(0.0, r.rps - r.fps) for r in rows], color=colour, linewidth=2, label="answered req/s")
    axes[0].plot(t, [r.fps for r in rows], color=colour, linewidth=2, linestyle=":", label="failed req/s")
    axes[0].set_ylabel("requests/s")
    axes[0].legend(loc="upper right", fontsize=8)
    for key, dash in (("p50", "-"), ("p95", "--"), ("p99", "-.")):
        axes[1].plot(t, [getattr(r, key) for r in rows], color=colour, linestyle=dash, linewidth=2 if key != "p99" else 1, label=key)
    axes[1].axhline(latency_ms, color=ref, linestyle="--", linewidth=1, label="requested")
    axes[1].set_ylabel("latency (ms)")
    axes[1].legend(loc="upper right", fontsize=8)
    rate = [100.0 * r.fps / r.rps if r.rps else 0.0 for r in rows]
    axes[2].plot(t, rate, color=colour, linestyle=":", linewidth=2)
    axes[2].set_ylabel("failures (%)")
    axes[2].set_ylim(-2, 102)
    ready = a.pods.ready
    rt = _rel([x[0] for x in ready], start)
    axes[3].step(rt, [x[1] for x in ready], where="post", color=colour, linewidth=2, label="Ready pods")
    axes[3].step(rt, [x[2] for x in ready], where="post", color=ref, linestyle="--", label="pods")
    restarts, count = [], 0
    times = sorted(r.t for r in a.pods.restarts)
    for ts in [x[0] for x in ready]:
        while count < len(times) and times[count] <= ts:
            count += 1
        restarts.append(count)
    axes[3].step(rt, restarts, where="post", color="black", label="restarts (total)")
    axes[3].set_ylabel("pods")
    axes[3].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[3].legend(loc="upper right", fontsize=8)
    threshold = f" {a.settings.liveness.failure_threshold}" if a.settings and a.settings.liveness else ""
    axes[3].set_xlabel(
        "seconds since load start (grey: load, blue: quiet); liveness failure: dotted, v, hollow when no event of its own reported it,\n"
        f"numbered: its place among the{threshold} failures in a row that kill; kill: dashed, X; restart: solid, o"
    )
    axes[0].set_title(
        f"{a.variant}: {a.figures.requests} requests, {a.figures.failures} failed, {len(a.pods.restarts)} restarts",
        color=colour,
        loc="left",
        pad=20,
    )
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_small(analyses: dict[str, VariantAnalysis], ph: Phases, path: Path) -> None:
    """One small panel for the lab's matrix (a row each): requests/s per variant (failures/s dotted) with the
    same shading and liveness / restart markers as plot_variant, and the variants' Ready pods (grey, right)."""
    fig, ax = plt.subplots(figsize=(4.2, 1.7), constrained_layout=True)
    _shade(ax, ph)
    ready = ax.twinx()
    for a in analyses.values():
        colour = style.variant_colour(a.variant)
        t = _rel([r.t for r in a.series], ph.start)
        ax.plot(t, [r.rps for r in a.series], color=colour, linewidth=1.2, label=a.variant)
        ax.plot(t, [r.fps for r in a.series], color=colour, linewidth=1, linestyle=":")
        _markers(ax, a, ph.start, unreported=False)
        ready.step(
            _rel([x[0] for x in a.pods.ready], ph.start), [x[1] for x in a.pods.ready], where="post", color=colour, alpha=0.45, linewidth=2
        )
    ready.set_ylim(-0.1, max((x[2] for a in analyses.values() for x in a.pods.ready), default=1) + 0.5)
    ready.yaxis.set_major_locator(MaxNLocator(integer=True))
    ready.set_ylabel("Ready pods", fontsize=7)
    ready.tick_params(labelsize=7)
    ax.set_xlim(-5, ph.end - ph.start)
    ax.set_ylabel("req/s", fontsize=7)
    ax.tick_params(labelsize=7)
    ax.legend(loc="upper right", fontsize=6)
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_cpu(timeline, ph: Phases, path: Path) -> bool:
    samples = [(r["t"] - ph.start, 100 * r["busy"]) for r in timeline if r["kind"] == "cpu"]
    if not samples:
        return False
    fig, ax = plt.subplots(figsize=(10, 2.5), constrained_layout=True)
    _shade(ax, ph)
    ax.plot([s[0] for s in samples], [s[1] for s in samples], color="#8c564b")
    ax.set_ylim(0, 105)
    ax.set_ylabel("machine CPU busy (%)")
    ax.set_xlabel("seconds since load start")
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


def fmt_s(x):
    return "-" if x is None else f"{x:.0f} s"


def fmt_ms(x):
    return "-" if x is None else f"{x:.0f} ms"


FIGURE_ROWS = [
    ("pods", lambda a: str(len(a.pods.pods))),
    ("requests", lambda a: str(a.figures.requests)),
    ("failed requests", lambda a: f"{a.figures.failures} ({a.figures.failure_ratio:.1%})"),
    ("latency p50 / p95 / p99", lambda a: " / ".join(fmt_ms(x) for x in (a.figures.p50, a.figures.p95, a.figures.p99))),
    ("load start -> first liveness failure", lambda a: fmt_s(a.first_liveness_failure_s)),
    ("load start -> first liveness kill", lambda a: fmt_s(a.first_liveness_kill_s)),
    ("load start -> first restart", lambda a: fmt_s(a.first_restart_s)),
    ("restarts", lambda a: str(len(a.pods.restarts))),
    ("restarts by cause", lambda a: causes(a)),
    ("liveness failures", lambda a: "{} ({})".format(*a.liveness_failures())),
    ("kills for failed liveness", lambda a: str(len(a.liveness_kills))),
    ("Unhealthy events (any probe)", lambda a: str(a.probes.unhealthy)),
    ("recovery after load stop (all Ready)", lambda a: fmt_s(a.recovery_s) if a.recovery_s is not None else "not within the quiet period"),
]
EVENT_REASONS = ("Unhealthy", "Killing", "BackOff", "Started", "Evicted", "OOMKilling")


def causes(a: VariantAnalysis) -> str:
    """ "4 liveness kills, 1 startup-probe kill": the variant's restarts counted by their own cause."""
    counts = {}
    for r in a.pods.restarts:
        counts[r.cause] = counts.get(r.cause, 0) + 1
    return ", ".join(f"{n} {CAUSES[c]}" for c, n in counts.items()) or "-"


def restart_items(a: VariantAnalysis, heap=None) -> Items:
    """Each restart of the variant with its own cause and what says so; each kill the probe counter saw
    against the countdown's; the probe's own durations against its timeout; how full its old generation
    got (HEAP, report.gc.HeapHigh)."""
    start = a.phases.start
    items = [Item(f"{r.pod} ended at +{r.t - start:.1f} s: {r.describe()}", "restart:") for r in a.pods.restarts]
    items += [Item(f"{k.pod}: a {k.probe.lower()} kill at +{k.t - start:.1f} s, its restart not seen", "kill:") for k in a.pending_kills]
    for c in a.kill_checks():
        text = (
            f"{c['pod']} kill at +{c['t'] - start:.1f} s: the kubelet's counter {c['counterFailures']} failed results in a row "
            f"(threshold {c['threshold']}); the countdown {c['countdown'] or 'has no kill there (its events were dropped)'}"
        )
        items.append(Item(text if c["agree"] else text + ": they disagree, the counter wins", "counter:", "ok" if c["agree"] else "fail"))
    d, probe = a.probe_durations(), a.liveness_probe
    if d and probe:
        items.append(
            Item(
                f"the kubelet timed {d['count']} successful liveness probes during the load: mean {1000 * d['mean']:.0f} ms, "
                f"slowest {1000 * d['slowest']:.0f} ms, against a timeout of {probe.timeout_s:g} s (a failed probe is not timed)",
                "durations:",
            )
        )
    if heap is not None:
        items.append(Item(f"the old generation at its fullest after a major collection: {heap.describe()}", "heap:"))
    if not a.counter:
        items.append(Item(f"the kubelet's probe counter: {a.counter_error or 'not recorded'}; causes from the events alone", "note:"))
    return Items(items, "no restart")


def run_line(result: Verdict, run: dict) -> str:
    p, result = run["phases"], result.facts
    return (
        f"Variants {', '.join(result.analyses)}; {run['users_per_variant']} users each at {run['rate_per_user']} req/s, "
        f"{requested_latency_ms(run):.0f} ms per request; ramp {p['ramp']} s, hold {p['hold']} s, quiet {p['quiet']} s; "
        f"started {datetime.fromtimestamp(result.phases.start, UTC):%Y-%m-%d %H:%M:%S} UTC "
        f"({run.get('target', '')}, {run.get('cpus', '?')} CPUs{kubernetes_words(run)}, commit {run.get('commit', '?')})."
    )


def kubernetes_words(run: dict) -> str:
    """ ", Kubernetes v1.37.0" (the API server; its kubelets too where they run another release), or nothing
    where run.json has none (the API did not say)."""
    k = run.get("kubernetes") or {}
    if not k.get("server"):
        return ""
    others = [v for v in k.get("kubelets") or [] if v != k["server"]]
    return f", Kubernetes {k['server']}" + (f" (kubelets {', '.join(others)})" if others else "")


def settings_items(result: Verdict) -> Items:
    """Per variant, the probe settings and resources run.json recorded, with the kill window they give."""
    items, result = [], result.facts
    for v, a in result.analyses.items():
        s = a.settings
        if s is None:
            continue
        probes = "; ".join(
            f"{name} {p.describe()}" for name, p in (("liveness", s.liveness), ("readiness", s.readiness), ("startup", s.startup)) if p
        )
        limits = s.resources.get("limits", {})
        if stack_of(v) == "servlet":
            loops = f"{s.tomcat_threads} Tomcat worker threads" if s.tomcat_threads else "Tomcat worker threads: Boot's default (200)"
        else:
            loops = f"{s.event_loops} event loops" if s.event_loops else "event loops: the JVM's default"
        env = ", ".join(f"{k}={x}" for k, x in s.env.items() if k != "JAVA_TOOL_OPTIONS")
        text = f"{v}: {probes or 'no probes'}; limits {', '.join(f'{k} {x}' for k, x in limits.items()) or 'none'}; {loops}; {env}"
        if v in result.kill_windows:
            text += f"; first liveness kill expected at {result.kill_windows[v].describe()} after load start"
        items.append(Item(text))
    return Items(items)  # none recorded: the claim's kill_timing line says it could not be measured


def event_log(a: VariantAnalysis) -> Section:
    """The variant's probe, kill, back-off and start events (the first 120 lines), one line each, a liveness
    failure or kill with its countdown; and a line for each failure whose time no event gave (placed from
    an aggregated event's count, or inferred from the kill after it: base/countdown.py)."""
    marks = a.countdown()
    labelled = {(m.pod, m.t, m.kind): m.label for m in marks if m.exact and m.kind in ("failure", "kill")}

    def stamp(t):
        return f"{datetime.fromtimestamp(t, UTC):%H:%M:%S} +{t - a.phases.start:5.0f}s"

    lines = []
    for e in a.probes.events:
        if e["reason"] not in EVENT_REASONS:
            continue
        kind = "kill" if killed_by(e) == "Liveness" else "failure" if is_liveness_failure(e) else None
        label = labelled.get((e["pod"], e["last"], kind))
        mark = f" [{LABELS[kind]}{' after' if kind == 'kill' else ''} {label}]" if label else ""
        line = f"{stamp(e['last'])} {e['pod']} {e['reason']} x{e['count']}: {e['message'][:160]}{mark}"
        lines.append((e["last"], kind == "kill", line))
    for m in marks:
        if not m.exact and m.t >= a.phases.start - 1:
            lines.append((m.t, False, f"{stamp(m.t)} {m.pod} {countdown.describe(m, a.phases.start, LABELS)[:300]}"))
    lines.sort(key=lambda x: x[:2])  # a kill after the failure that made it, stamped the same second
    return Section(f"{a.variant} ({len(lines)})", [Pre([text for *_, text in lines[:120]])])


def load_rows(result: Verdict) -> list[list[str]]:
    """The figures table's served-vs-offered row, when the timeline has the service's own counts."""
    result = result.facts
    if not result.loads:
        return []
    return [
        ["served by its pods / offered by Locust"] + [result.loads[v].describe() if v in result.loads else "-" for v in result.analyses]
    ]


def scheduler_rows(result: Verdict) -> list[list[str]]:
    """The figures table's virtual-thread scheduler row (report.scheduler), when a variant runs on them."""
    found = result.facts.schedulers
    if not found:
        return []
    return [["virtual threads (Boot's /actuator/info)"] + [found[v].describe() if v in found else "-" for v in result.facts.analyses]]


def load_items(result: Verdict) -> Items:
    """Per variant the comparison with its allowance, then what was missed."""
    result = result.facts
    items = [
        Item(
            f"{v}: served {x.describe()} offered; at most {x.offered + x.allowance:,} allowed "
            f"({x.allowance:,} = one per user, for the requests cut off when Locust stops, + 5 % for its client's retries); "
            f"before the swarm: {x.before_start_in_flight} in flight, {x.before_start_served} served",
            # Not a failed check of the claim: a run that was not alone has no verdict at all.
            "NOT ALONE" if x.extra or x.busy_before else "UNREAD" if x.served is None else "ok",
            "fail" if x.extra or x.busy_before or x.served is None else "ok",
        )
        for v, x in result.loads.items()
    ]
    return Items(items + [Item(n, "note:") for n in result.load_notes])


def report_document(result: Verdict, run: dict, images: dict[str, Path] | None = None) -> Document:
    """The report's sections, for summary.md and report.html alike."""
    facts = result.facts
    an, cpu = facts.analyses, facts.cpu
    errors = [Item(f"{v}: {n} x {e}") for v, a in an.items() for e, n in a.figures.errors[:5]]
    cpu_items = [
        Item(
            "WARNING: the machine was busy over the line, so the run cannot tell."
            if cpu.starved
            else "The machine was under the line: the run's outcome is the variants' own."
        )
    ]
    cpu_items += [Item(n) for n in cpu.notes] + [Item(w, "WARNING:", "fail") for w in cpu.machine_warnings]
    cpu_items += [Item(w, "outcome:") for w in cpu.signs]
    if facts.api_errors:
        cpu_items.append(Item(f"the Kubernetes API did not answer {facts.api_errors} time(s) during the recording"))
    return Document(
        "liveness-lab scripted run",
        result.verdict,
        [
            Section(
                "",
                [
                    run_line(result, run),
                    Table(
                        [""] + list(an),
                        [[label] + [fn(a) for a in an.values()] for label, fn in FIGURE_ROWS] + load_rows(result) + scheduler_rows(result),
                    ),
                ],
            ),
            Section("Settings read from the cluster", [settings_items(result)]),
            Section("Errors (most frequent, per variant)", [Items(errors)]),
            Section("The run was disturbed: no verdict", [Items([Item(d, state="fail") for d in facts.disturbances])]),
            Section(
                "The claim (the baseline scenario, judged as the lab judges it)",
                [
                    Items(
                        [Item(x.text(), state=LINE_COLOURS[x.state]) for x in result.lines],
                        "none (no variant of either side of the claim ran: blocking or servlet; reactive, servlet-async or "
                        "servlet-virtual)",
                    ),
                    Items([Item(w, "cannot tell:", "fail") for w in result.why_cannot_tell if w not in facts.disturbances]),
                    Items([Item(n, "note:") for n in result.notes]),
                ],
            ),
            Section("Restarts and their causes", [Section(v, [restart_items(a, result.facts.heaps.get(v))]) for v, a in an.items()]),
            Section("Load the variants saw (their own request counts)", [load_items(result)]),
            Section("The machine and its CPU", [Items(cpu_items)]),
            *(Section(name, [Image(name, path)], full_report_only=True) for name, path in (images or {}).items()),
            Section("Events during the run", [event_log(a) for a in an.values()], full_report_only=True),
            Section(
                "",
                ["Raw data beside this file: run.json, locust_stats_history.csv, locust_stats.csv, timeline.jsonl, verdict.json."],
                full_report_only=True,
            ),
        ],
    )


def build(folder) -> Verdict:
    folder = Path(folder)
    data = load_run(folder)
    result = judge(data)
    facts, run = result.facts, data.run
    if facts.clocks and (facts.clocks.start or facts.clocks.end) and "clock" not in run:
        # run.json keeps what the run measured of the clocks (the recorder took the samples).
        run["clock"] = facts.clocks.to_json()
        (folder / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    images = {}
    for v, a in facts.analyses.items():
        path = folder / f"{v}.png"
        plot_variant(a, facts.phases, path, requested_latency_ms(run))
        images[v] = path
    if plot_cpu(data.timeline, facts.phases, folder / "cpu.png"):
        images["machine CPU"] = folder / "cpu.png"
    doc = report_document(result, run, images)
    (folder / "summary.md").write_text(render_markdown(doc))
    (folder / "report.html").write_text(render_html(doc))
    (folder / "verdict.json").write_text(json.dumps(result.to_json(), indent=2))
    return result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    result = build(argv[0])
    print((Path(argv[0]) / "summary.md").read_text())
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
