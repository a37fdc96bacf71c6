"""Builds a scripted run's report: PNG plots per variant, a self-contained report.html, summary.md and
verdict.json, from the folder scripts/demo.sh filled (run.json, locust_stats_history.csv,
locust_stats.csv, timeline.jsonl). Exits 0 for PASS, 1 for FAIL, 2 for INCONCLUSIVE.

Usage (from locust/):
    python -m report.build reports/<timestamp>
"""

import base64
import html
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from .verdict import EXIT_CODES, judge, load_run  # noqa: E402

PHASE_COLOURS = {"load": "#fde7c8", "quiet": "#e8eef7"}


def _rel(ts, start):
    return [t - start for t in ts]


def _shade(ax, ph):
    ax.axvspan(0, ph["stop"] - ph["start"], color=PHASE_COLOURS["load"], zorder=0)
    ax.axvspan(ph["quiet"] - ph["start"], ph["end"] - ph["start"], color=PHASE_COLOURS["quiet"], zorder=0)


def _markers(ax, a, start):
    for f in a["livenessFailures"]:
        ax.axvline(f["t"] - start, color="#d62728", linestyle=":", linewidth=1)
    for k in a["livenessKills"]:
        ax.axvline(k["t"] - start, color="#d62728", linestyle="--", linewidth=1.2)
    for r in a["restarts"]:
        ax.axvline(r["t"] - start, color="black", linewidth=1.5)


def plot_variant(a: dict, ph: dict, path: Path, latency_ms: float) -> None:
    """Four panels on one time axis (seconds since load start): req/s, latency, failure rate, pods."""
    start, rows = ph["start"], a["series"]
    t = _rel([r["t"] for r in rows], start)
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(10, 9), constrained_layout=True)
    for ax in axes:
        _shade(ax, ph)
        _markers(ax, a, start)
        ax.grid(alpha=0.3)
    axes[0].plot(t, [r["rps"] for r in rows], color="#1f77b4", label="requests/s")
    axes[0].set_ylabel("requests/s")
    for key, colour in (("p50", "#2ca02c"), ("p95", "#ff7f0e"), ("p99", "#9467bd")):
        axes[1].plot(t, [r[key] for r in rows], color=colour, label=key)
    axes[1].axhline(latency_ms, color="grey", linestyle="--", linewidth=1, label="requested")
    axes[1].set_ylabel("latency (ms)")
    axes[1].legend(loc="upper right", fontsize=8)
    rate = [100.0 * r["fps"] / r["rps"] if r["rps"] else 0.0 for r in rows]
    axes[2].plot(t, rate, color="#d62728")
    axes[2].set_ylabel("failures (%)")
    axes[2].set_ylim(-2, 102)
    rt = _rel([x[0] for x in a["ready"]], start)
    axes[3].step(rt, [x[1] for x in a["ready"]], where="post", color="#2ca02c", label="Ready pods")
    axes[3].step(rt, [x[2] for x in a["ready"]], where="post", color="grey", linestyle="--", label="pods")
    restarts, count = [], 0
    times = sorted(r["t"] for r in a["restarts"])
    for ts in [x[0] for x in a["ready"]]:
        while count < len(times) and times[count] <= ts:
            count += 1
        restarts.append(count)
    axes[3].step(rt, restarts, where="post", color="black", label="restarts (total)")
    axes[3].set_ylabel("pods")
    axes[3].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[3].legend(loc="upper right", fontsize=8)
    axes[3].set_xlabel("seconds since load start (orange: load, blue: quiet; red: liveness failure (dotted) and kill (dashed), black: restart)")
    axes[0].set_title(f"{a['variant']}: {a['requests']} requests, {a['failures']} failed, {len(a['restarts'])} restarts")
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_cpu(timeline, ph, path: Path) -> bool:
    samples = [(r["t"] - ph["start"], 100 * r["busy"]) for r in timeline if r["kind"] == "cpu"]
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
    ("pods", lambda a: str(len(a["pods"]))),
    ("requests", lambda a: str(a["requests"])),
    ("failed requests", lambda a: f"{a['failures']} ({a['failureRatio']:.1%})"),
    ("latency p50 / p95 / p99", lambda a: f"{fmt_ms(a['p50'])} / {fmt_ms(a['p95'])} / {fmt_ms(a['p99'])}"),
    ("load start -> first liveness failure", lambda a: fmt_s(a["firstLivenessFailureS"])),
    ("load start -> first restart", lambda a: fmt_s(a["firstRestartS"])),
    ("restarts", lambda a: str(len(a["restarts"]))),
    ("liveness failures seen", lambda a: str(len(a["livenessFailures"]))),
    ("kills for failed liveness", lambda a: str(len(a["livenessKills"]))),
    ("Unhealthy events (any probe)", lambda a: str(a["unhealthy"])),
    ("recovery after load stop (all Ready)", lambda a: fmt_s(a["recoveryS"]) if a["recoveryS"] is not None else "not within the quiet period"),
]


def summary_md(result, run) -> str:
    an = result["analyses"]
    names = list(an)
    lines = [
        f"# liveness-lab scripted run: {result['verdict']}",
        "",
        f"Variants {', '.join(names)}; {run['users_per_variant']} users each at {run['rate_per_user']} req/s, "
        f"{run['latency_ms']} ms per request; ramp {run['phases']['ramp']} s, hold {run['phases']['hold']} s, "
        f"quiet {run['phases']['quiet']} s; started {datetime.fromtimestamp(result['phases']['start'], timezone.utc):%Y-%m-%d %H:%M:%S} UTC "
        f"({run.get('target', '')}, {run.get('cpus', '?')} CPUs, commit {run.get('commit', '?')}).",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for label, fn in FIGURE_ROWS:
        lines.append(f"| {label} | " + " | ".join(fn(an[v]) for v in names) + " |")
    errors = [(v, e, n) for v in names for e, n in an[v]["errors"][:5]]
    if errors:
        lines += ["", "## Errors (most frequent, per variant)", ""]
        lines += [f"- {v}: {n} x {e}" for v, e, n in errors]
    if result["disturbances"]:
        lines += ["", "## The run was disturbed: no verdict", ""] + [f"- {d}" for d in result["disturbances"]]
    lines += ["", "## Checks", ""]
    lines += [f"- {'ok  ' if ok else 'FAIL'} {who}: {text}" for who, ok, text in result["checks"]] or ["- none (neither blocking nor reactive ran)"]
    cpu = result["cpu"]
    lines += ["", "## CPU starvation check", ""]
    lines.append("- " + ("WARNING: signs of CPU starvation, read the results with care." if cpu["starved"] else "No sign of CPU starvation."))
    lines += [f"- {n}" for n in cpu["notes"]] + [f"- WARNING: {w}" for w in cpu["warnings"]]
    if result["apiErrors"]:
        lines.append(f"- the Kubernetes API did not answer {result['apiErrors']} time(s) during the recording")
    return "\n".join(lines) + "\n"


def report_html(result, run, images, summary) -> str:
    esc = html.escape
    an = result["analyses"]
    colour = {"PASS": "#2ca02c", "FAIL": "#d62728"}.get(result["verdict"], "#ff7f0e")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>liveness-lab report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.ok{color:#2ca02c}.fail{color:#d62728}"
        "img{max-width:100%}pre{white-space:pre-wrap;font-size:85%}</style></head><body>",
        f"<h1>liveness-lab scripted run: <span style='color:{colour}'>{esc(result['verdict'])}</span></h1>",
        f"<p>{esc(summary.splitlines()[2])}</p>",
        "<table><tr><th></th>" + "".join(f"<th>{esc(v)}</th>" for v in an) + "</tr>",
    ]
    for label, fn in FIGURE_ROWS:
        parts.append(f"<tr><td>{esc(label)}</td>" + "".join(f"<td>{esc(fn(an[v]))}</td>" for v in an) + "</tr>")
    parts.append("</table>")
    if result["disturbances"]:
        parts.append("<h2>The run was disturbed: no verdict</h2><ul>" + "".join(f"<li class='fail'>{esc(d)}</li>" for d in result["disturbances"]) + "</ul>")
    parts.append("<h2>Checks</h2><ul>")
    for who, ok, text in result["checks"]:
        parts.append(f"<li class='{'ok' if ok else 'fail'}'>{'ok' if ok else 'FAIL'} {esc(who)}: {esc(text)}</li>")
    cpu = result["cpu"]
    parts.append("</ul>")
    errors = [(v, e, n) for v in an for e, n in an[v]["errors"][:5]]
    if errors:
        parts.append("<h2>Errors (most frequent, per variant)</h2><ul>")
        parts += [f"<li>{esc(v)}: {n} x {esc(e)}</li>" for v, e, n in errors]
        parts.append("</ul>")
    parts.append("<h2>CPU starvation check</h2><ul>")
    parts.append(f"<li>{'WARNING: signs of CPU starvation' if cpu['starved'] else 'No sign of CPU starvation.'}</li>")
    parts += [f"<li>{esc(n)}</li>" for n in cpu["notes"]] + [f"<li class='fail'>WARNING: {esc(w)}</li>" for w in cpu["warnings"]]
    parts.append("</ul>")
    for name, png in images.items():
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(f"<h2>{esc(name)}</h2><img alt='{esc(name)}' src='data:image/png;base64,{data}'>")
    parts.append("<h2>Events during the run</h2>")
    for v, a in an.items():
        interesting = [e for e in a["events"] if e["reason"] in ("Unhealthy", "Killing", "BackOff", "Started", "Evicted", "OOMKilling")]
        parts.append(f"<h3>{esc(v)} ({len(interesting)})</h3><pre>")
        for e in interesting[:80]:
            stamp = datetime.fromtimestamp(e["last"], timezone.utc).strftime("%H:%M:%S") if e["last"] else "?"
            parts.append(esc(f"{stamp} +{e['last'] - result['phases']['start']:5.0f}s {e['pod']} {e['reason']} x{e['count']}: {e['message'][:160]}") + "\n")
        parts.append("</pre>")
    parts.append("<p>Raw data beside this file: run.json, locust_stats_history.csv, locust_stats.csv, timeline.jsonl, verdict.json.</p></body></html>")
    return "".join(parts)


def build(folder) -> dict:
    folder = Path(folder)
    data = load_run(folder)
    result = judge(data)
    run = data["run"]
    images = {}
    for v, a in result["analyses"].items():
        path = folder / f"{v}.png"
        plot_variant(a, result["phases"], path, float(run.get("latency_ms", 1000)))
        images[v] = path
    if plot_cpu(data["timeline"], result["phases"], folder / "cpu.png"):
        images["machine CPU"] = folder / "cpu.png"
    summary = summary_md(result, run)
    (folder / "summary.md").write_text(summary)
    (folder / "report.html").write_text(report_html(result, run, images, summary))
    slim = {
        "verdict": result["verdict"],
        "checks": [{"who": w, "ok": ok, "text": t} for w, ok, t in result["checks"]],
        "disturbances": result["disturbances"],
        "cpu": result["cpu"],
        "phases": result["phases"],
        "variants": {v: {k: x for k, x in a.items() if k not in ("series", "ready", "events", "_start")} for v, a in result["analyses"].items()},
    }
    (folder / "verdict.json").write_text(json.dumps(slim, indent=2))
    return result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    result = build(argv[0])
    print((Path(argv[0]) / "summary.md").read_text())
    return EXIT_CODES[result["verdict"]]


if __name__ == "__main__":
    sys.exit(main())
