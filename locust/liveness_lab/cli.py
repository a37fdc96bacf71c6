"""The command line of the scripted runs: ``python -m liveness_lab demo|lab|bench`` (from locust/, in the
repository's .venv), which ``scripts/demo.sh``, ``scripts/lab.sh`` and ``scripts/bench.sh`` exec into
with the same flags.
Building the parser imports nothing beyond the standard library, so ``--help`` answers anywhere.
"""

from __future__ import annotations

import argparse
import sys

from liveness_lab.base import DEFAULT_RATE, DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_USERS_PER_VARIANT, DEMO_PHASES_S, LAB_GROUPS, LOAD_WHERE
from liveness_lab.base.exits import BENCH_HELP, SETUP
from liveness_lab.base.exits import HELP as EXIT_HELP

DEMO = """\
The scripted run: swarms the chosen variants with the same offered load (ramp, hold, cool-down, then a
quiet period), records Locust's stats history and a timeline of the pods and their events, and writes
reports/<timestamp>/ with report.html, the PNG plots, summary.md and the raw data. PASS when every
blocking pod restarted after liveness failures and the reactive pods never failed a probe, never
restarted and served every request. Brings the cluster up first when it is not (scripts/cluster-up.sh).

Defaults come from the release in the cluster, as it runs now: the variants it deploys, the latency its
service answers with (DEMO_LATENCY_MS of the Deployments: the chart's latencyMs), and the probes the
kubelet runs (recorded in run.json; the kills are timed against them). So after
`helm upgrade liveness-lab chart -n liveness-lab --reuse-values --set latencyMs=500 --wait` the next run
asks for 500 ms. Change probes the same way; the flags below override the rest.

The run starts from the release as it now is: it waits until the chosen variants have rolled out, no
old pod is still terminating and every pod has been Ready for LIVENESS_LAB_SETTLE seconds (or stops
with exit 3, saying what is still wrong), so a rollout just before it never counts against a variant.
Pods that restarted before (an earlier run) are replaced first: they would carry their CrashLoopBackOff
delay and the kubelet's spent event budget into the run.

A run owns its release: it takes a lock in the release's namespace (ConfigMap <release>-run-lock,
liveness-lab-run-lock) and refuses to start while another scripted run holds it, from any clone or
machine, naming the holder and how to clear a lock left behind; it stops a swarm started in the
release's Locust web UI (or refuses, with --no-stop-swarm) and waits for the variants to be idle. Its
report compares the requests each variant's pods served with those Locust offered, and gives no verdict
over load it did not offer.

Where the load comes from (--load): `host` runs Locust on this machine against kind's NodePorts on
127.0.0.1 (http://127.0.0.1:3008x); `cluster` drives the release's own Locust master and workers
through the API server's service proxy (REST: /swarm with the same shape, the stats history fetched as
it goes), swarming the variants' Services from inside the cluster: any cluster, no NodePort needed. The
default, `auto`, is host when every chosen variant's Service is on the NodePort kind maps and 127.0.0.1
answers there, else cluster (the run says which and why). Both write the same files and the same report.

--context, --namespace and --release choose the release (default: kind's, as scripts/cluster-up.sh
makes it). On kind's own the cluster is brought up when it is not there; any other must exist: a
context, namespace or release that is not found is a set-up error (exit 3) saying which.

The defaults offer 20 req/s per variant of 1 s each: 20 requests in flight against a blocking pod's 4
event loops saturates it at once, while the reactive pod keeps 20 timers and uses little CPU, so a
2-core machine shows the effect without starving anyone (the report checks that it did not).
"""

ENV_DEMO = """\
environment (defaults):
  LIVENESS_LAB_READY_WAIT=300s   how long the release may take to settle (kubectl's forms: 300, 300s, 5m)
  LIVENESS_LAB_SETTLE=20         seconds every pod must have been Ready before the load
  LIVENESS_LAB_LATENCY_MS        the latency, when --latency-ms is not given (default: the release's)
  LIVENESS_LAB_REQUEST_TIMEOUT_S the request timeout, when --request-timeout-s is not given
  LIVENESS_LAB_LOCK_TOKEN        set by a parent run holding the cluster lock: run under its lock
  LIVENESS_LAB_LOCUST_UI          the release's Locust web UI at a URL (e.g. http://127.0.0.1:8089),
                                  instead of through the API server's service proxy
  LIVENESS_LAB_UI_TOKEN           the token the release's Locust web UI requires (default: its Secret
                                  <release>-ui, read with your credentials)
  LIVENESS_LAB_KUBE_CONTEXT=kind-liveness-lab, LIVENESS_LAB_NAMESPACE=liveness-lab,
  LIVENESS_LAB_RELEASE=liveness-lab   where the release is, when --context/--namespace/--release are not given
Progress lines go to stderr and to <out>/run.log; the summary to stdout.
"""

LAB = """\
The lab (issue 13): runs the scenario catalogue in locust/liveness_lab/lab/scenarios/ (one YAML file per probe lesson: a
chart values overlay, the variants to swarm, the load, the predicted outcome) on the kind cluster that
scripts/cluster-up.sh brought up, and writes one matrix. Per scenario: wait for a quiet machine (its
CPUs under 50 % busy over 5 s, at most 3 minutes), helm upgrade the release with its own values plus the
scenario's overlay, wait until the swarmed variants run fresh pods, Ready and settled, run the scripted
demo with the scenario's load (in this process, under the lab's cluster lock), judge the run against the
prediction, restore the release (helm rollback to the revision before), go on. A
scenario's race (a lesson that holds in some runs only: cascade, cold-scale-out, cpu-throttled-heavy) is
not required of a run; it predicts the band of runs it holds in, which the matrix judges over its runs.
Writes reports/lab-<timestamp>/: <scenario>[-<i>]/ (the demo's report, lab.json, judgement.txt,
timing.json, demo.log), matrix.md, a self-contained matrix.html and lab.log, and keeps each judged run in
the ledger, locust/ledger/ (LIVENESS_LAB_LEDGER: another folder), counted per version of its scenario's
prediction (python -m liveness_lab.lab ledger; its --write makes docs/lab.md's tables and the README's lab
figures from it, which a docs test holds them to). Ctrl-C or an error restores the release first.

Adding a scenario needs no code: a new file in locust/liveness_lab/lab/scenarios/ (its header says what goes in it;
`python -m liveness_lab.lab check` from locust/ checks them all). The catalogue: 40 scenarios, 20 remedies
(12 on WebFlux, 8 on Tomcat) and 20 restart storms (17 on WebFlux, 1 on Tomcat, 2 on both). A run is a rollout, the load (ramp + hold +
quiet), the report, the rollback: the load plus about 1.5 minutes (82 s measured on 2 cores), 2 for a storm
(130 s: its actions' rollouts and recoveries). A whole pass about 192 minutes here (207 on a cluster with the
short back-off cap, where backoff-cap-short runs too; probe-fix-in-place, 4 more, runs only where the API
server takes probe changes in running pods: Kubernetes 1.38 with MutableContainerProbes); the lab prints its
own estimate as it starts.
"""

ENV_LAB = """\
environment (defaults):
  LIVENESS_LAB_HELM_TIMEOUT=10m   how long a helm upgrade or rollback may take
  LIVENESS_LAB_SETTLE=20          seconds to let fresh JVMs settle before the load
  LIVENESS_LAB_READY_WAIT=300s, LIVENESS_LAB_LOCUST_UI, LIVENESS_LAB_UI_TOKEN, LIVENESS_LAB_KUBE_CONTEXT, LIVENESS_LAB_NAMESPACE,
  LIVENESS_LAB_RELEASE: as for demo
"""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on exit code 3 (argparse's own is 2, a verdict here)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(SETUP, f"error: {message}\n  fix: see {self.prog} --help\n")


WORKSHOP = """\
The instructor's view of a workshop (docs/workshop.md): one line per participant's release, from every
namespace that holds the workshop's ConfigMap (labels app.kubernetes.io/part-of=liveness-lab,
app.kubernetes.io/component=workshop; the chart renders it with locust.workshop.enabled), read with your
own kubeconfig: the namespace, the release, the step on screen, done/total, when its master last wrote,
and the last check's state and reason in words. A master writes at most every 15 s (at once when a check's
state changes or a step is met), so the table is that fresh; `watch -n 15 scripts/workshop.sh` keeps it
on screen. Needs list on ConfigMaps in every namespace (the organiser's kubeconfig).
"""

WORKSHOP_EXITS = """exit codes:
  0  the table was printed (no line when no namespace holds the workshop's ConfigMap: said on stderr)
  3  usage or set-up error: a bad flag, no such context, the API refused or did not answer"""


def whole(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    return int(text)


def above_zero(text: str) -> int:
    n = whole(text)
    if n == 0:
        raise argparse.ArgumentTypeError("must be above 0")
    return n


def rate(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number (e.g. 1.5)") from None
    if not x > 0:
        raise argparse.ArgumentTypeError("must be above 0")
    return x


def names(text: str) -> list[str]:
    found = [n.strip() for n in text.split(",") if n.strip()]
    if not found:
        raise argparse.ArgumentTypeError("is empty (e.g. blocking,reactive)")
    return found


def nonempty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty")
    return text


BENCH = """\
Benchmark: every mode of the service against Little's law, side by side in one run (docs/benchmark.md).
Runs every mode of the variant table (chart/values.yaml) in turn, each in its own JVM on 127.0.0.1,
alone, with the same heap (5 GiB, 4 of it young) and one CPU (taskset + -XX:ActiveProcessorCount=1, 4
event loops), puts the load generator (open loop, constant rate) on the other CPU, warms each mode up
the same way, and offers it each scenario: latency L, concurrency C, rate C/L, each run recorded by
JFR. Needs about 6 GiB of free memory. Writes
reports/bench-<timestamp>/ (results.jsonl, table.md, cpu.md, memory.md, chart.png, machine.txt,
profile-*.jfr and the hottest methods of each in profile-*.txt, logs/). With --memory, instead of the
scenarios: the heap each mode holds per waiting request (requests-memory.md, the class histograms and
JFR recordings of each hold). One bench at a time (a lock in LIVENESS_LAB_CACHE). Linux only (taskset
and /proc): on macOS run it in a Linux VM; the demo itself (scripts/cluster-up.sh, scripts/demo.sh)
runs on macOS.
"""

ENV_BENCH = """\
environment: JAVA_HOME (a JDK >= 21; scripts/bench.sh finds one), LIVENESS_LAB_CACHE (vegeta is built
there, keyed by version; the lock and the --baseline jars), LIVENESS_LAB_VEGETA (vegeta's path, set by
scripts/bench.sh).
"""


def add_bench(sub) -> argparse.ArgumentParser:
    from liveness_lab.bench.load import CLIENTS
    from liveness_lab.bench.memory import DEFAULT_HELD, HOLD_LATENCY_MS, QUICK_HELD, held_counts
    from liveness_lab.bench.scenario import DEFAULT_SCENARIOS, QUICK_SCENARIOS, scenarios

    fmt = argparse.RawDescriptionHelpFormatter
    b = sub.add_parser(
        "bench", prog="scripts/bench.sh", description=BENCH, epilog=ENV_BENCH + "\n" + BENCH_HELP, formatter_class=fmt, help="the benchmark"
    )
    b.add_argument(
        "--duration", type=above_zero, default=None, metavar="SECONDS", help="how long each mode is offered each scenario (default 20)"
    )
    b.add_argument(
        "--modes",
        type=names,
        default=None,
        metavar="LIST",
        help="comma-separated modes (default: every mode of the variant table, chart/values.yaml; reactive with --soak)",
    )
    b.add_argument(
        "--scenarios",
        type=scenarios,
        default=None,
        metavar="LIST",
        help=f"comma-separated LATENCY_MS:CONCURRENCY (default {DEFAULT_SCENARIOS})",
    )
    b.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run, not a measurement: 3 s per run, 4 s of warm-up, scenarios {QUICK_SCENARIOS}, 1000 idle connections "
        "(flags given override these)",
    )
    b.add_argument(
        "--idle-connections",
        type=whole,
        default=None,
        metavar="N",
        help="memory per connection: each mode holds N idle keep-alive connections, measured with the JVM's Native Memory "
        "Tracking, heap after GC and RSS (default 10000, 0: skip)",
    )
    b.add_argument(
        "--soak",
        type=above_zero,
        default=0,
        metavar="MINUTES",
        help="a soak instead of the scenarios: each mode (default reactive) held at the demo's rate (20 req/s of 1 s) for MINUTES, "
        "then at 10 times that for MINUTES; "
        "RSS and the heap after a full GC sampled every minute, errors and latency per phase (soak.md)",
    )
    b.add_argument(
        "--baseline",
        type=nonempty,
        default=None,
        metavar="REF",
        help="also run the reactive mode as built at git revision REF (e.g. a tag or HEAD~3), in the same run with the same warm-up, "
        'to hold a change against it ("reactive (REF)" in the tables); the jar is built once into the cache, keyed by commit',
    )
    b.add_argument(
        "--no-floor",
        dest="floor",
        action="store_false",
        help="leave out the floor: reactive's /api/work on bare Reactor Netty, no Spring (a row wherever reactive runs)",
    )
    b.add_argument(
        "--memory",
        action="store_true",
        help=f"heap per waiting request instead of the scenarios: each mode holds N keep-alive connections, then a request of "
        f"{HOLD_LATENCY_MS // 1000} s waiting on each, for each N of --held; its live set after a full collection (jcmd "
        "GC.class_histogram) idle, with the connections, with the requests and after them, the classes that grew and JFR's "
        "old-object samples naming who allocated them (requests-memory.md, histogram-*.txt)",
    )
    b.add_argument(
        "--held",
        type=held_counts,
        default=None,
        metavar="LIST",
        help=f"with --memory: comma-separated numbers of requests each mode holds, in turn (default {DEFAULT_HELD}; --quick {QUICK_HELD})",
    )
    b.add_argument(
        "--client",
        choices=CLIENTS,
        default=None,
        help="the load generator of the measured runs: openloop (default; the bench's own open-loop client on Netty, "
        "latency from each request's intended send time, service/src/test/java/.../OpenLoopClient.java) or vegeta; "
        "the warm-ups and the soak use vegeta",
    )
    b.add_argument(
        "--service-args",
        type=nonempty,
        default=None,
        metavar="ARGS",
        help="more arguments for every service JVM, after the bench's own, split at spaces: Spring settings "
        "(--demo.netty-metrics=true) or JVM flags (-XX:...), to measure what one setting costs; "
        "recorded in machine.txt",
    )
    return b


def add_target(p: argparse.ArgumentParser, load: bool = True) -> None:
    """Where the release is and where the load comes from: the options demo and lab share."""
    p.add_argument(
        "--context",
        default=None,
        metavar="NAME",
        help="kubeconfig context of the cluster (default: LIVENESS_LAB_KUBE_CONTEXT, else kind-liveness-lab)",
    )
    p.add_argument(
        "--namespace", default=None, metavar="NAME", help="namespace of the release (default: LIVENESS_LAB_NAMESPACE, else liveness-lab)"
    )
    p.add_argument(
        "--release",
        default=None,
        metavar="NAME",
        help="Helm release name (default: LIVENESS_LAB_RELEASE, else liveness-lab); the cluster lock is <release>-run-lock",
    )
    if load:
        p.add_argument(
            "--load",
            choices=LOAD_WHERE,
            default="auto",
            help="where Locust runs: host (this machine, kind's NodePorts on 127.0.0.1), cluster (the release's own "
            "master and workers, through the API server) or auto (default: host when the NodePorts answer, else cluster)",
        )


def parser(prog_demo: str = "scripts/demo.sh", prog_lab: str = "scripts/lab.sh", prog_workshop: str = "scripts/workshop.sh") -> Parser:
    fmt = argparse.RawDescriptionHelpFormatter
    top = Parser(prog="python -m liveness_lab", description="liveness-lab's scripted runs.", epilog=EXIT_HELP, formatter_class=fmt)
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    d = sub.add_parser(
        "demo", prog=prog_demo, description=DEMO, epilog=ENV_DEMO + "\n" + EXIT_HELP, formatter_class=fmt, help="the scripted run"
    )
    for flag, kind, what in (
        ("hold", above_zero, "time at full load"),
        ("ramp", whole, "time to reach full load"),
        ("quiet", whole, "time without load afterwards, to watch recovery"),
    ):
        seconds = DEMO_PHASES_S[flag]
        d.add_argument(f"--{flag}", type=kind, default=seconds, metavar="SECONDS", help=f"{what} (default {seconds})")
    d.add_argument(
        "--users",
        type=above_zero,
        default=DEFAULT_USERS_PER_VARIANT,
        metavar="N",
        help=f"users per variant (default {DEFAULT_USERS_PER_VARIANT})",
    )
    d.add_argument(
        "--rate", type=rate, default=DEFAULT_RATE, metavar="R", help=f"requests per second each user aims for (default {DEFAULT_RATE:g})"
    )
    d.add_argument(
        "--latency-ms",
        type=whole,
        default=None,
        metavar="MS",
        help="latency each request asks for (default: LIVENESS_LAB_LATENCY_MS, else the release's, DEMO_LATENCY_MS of its "
        "Deployments: the chart's latencyMs)",
    )
    d.add_argument(
        "--request-timeout-s",
        type=above_zero,
        default=None,
        metavar="SECONDS",
        help="how long a request may wait before Locust counts it failed (default: LIVENESS_LAB_REQUEST_TIMEOUT_S, else "
        f"{DEFAULT_REQUEST_TIMEOUT_S}); longer than the latency asked for",
    )
    d.add_argument(
        "--variants",
        type=names,
        default=None,
        metavar="LIST",
        help="comma-separated names from the variant table, chart/values.yaml `variants:` (default: those the release deploys); a "
        "variant off in the release must be enabled first",
    )
    d.add_argument("--out", default=None, metavar="DIR", help="report folder (default reports/<UTC timestamp>)")
    d.add_argument("--keep-pods", action="store_true", help="do not replace pods that restarted before the run")
    d.add_argument(
        "--no-stop-swarm",
        dest="stop_swarm",
        action="store_false",
        help="refuse to run while the in-cluster Locust swarms (default: stop its swarm, and say so)",
    )
    add_target(d)
    lab = sub.add_parser(
        "lab", prog=prog_lab, description=LAB, epilog=ENV_LAB + "\n" + EXIT_HELP, formatter_class=fmt, help="the scenario catalogue"
    )
    lab.add_argument(
        "--only",
        type=names,
        default=None,
        metavar="LIST",
        help="comma-separated scenario names (the files' names without .yaml); default: all",
    )
    lab.add_argument(
        "--quick",
        action="store_true",
        help="only the scenarios marked `quick: true` (baseline and servlet: CI's two, ~7 min)",
    )
    lab.add_argument(
        "--group",
        choices=LAB_GROUPS,
        default=None,
        help="only one group: the 20 restart storms (~143 min), the 20 remedies (~68 min), or the scenarios of "
        "one stack (webflux 29, ~165 min; servlet 9, ~35 min)",
    )
    lab.add_argument(
        "--repeat",
        type=above_zero,
        default=1,
        metavar="N",
        help="run the chosen scenarios N times (folders <scenario>-1 .. -N; the matrix says k of N)",
    )
    lab.add_argument("--out", default=None, metavar="DIR", help="lab folder (default reports/lab-<UTC timestamp>)")
    lab.add_argument(
        "--resume",
        action="store_true",
        help="go on with the pass in --out DIR, run with the same choice: the runs judged there are kept and counted, the "
        "others run (one stopped half-way again), and the matrix and the exit status cover them all",
    )
    add_target(lab)
    room = sub.add_parser(
        "workshop",
        prog=prog_workshop,
        description=WORKSHOP,
        epilog=WORKSHOP_EXITS,
        formatter_class=fmt,
        help="the instructor's table of a workshop's releases",
    )
    room.add_argument(
        "--context",
        default=None,
        metavar="NAME",
        help="kubeconfig context of the workshop's cluster (default: LIVENESS_LAB_KUBE_CONTEXT, else kind-liveness-lab)",
    )
    room.add_argument("--json", action="store_true", help="the rows as JSON instead of the table")
    top.subs = {"demo": d, "lab": lab, "bench": add_bench(sub), "workshop": room}
    return top


def parse(argv: list[str], prog: str | None = None) -> argparse.Namespace:
    """ARGV parsed; an unknown flag is a usage error of its subcommand (exit 3), named as the scripts
    named it: "unknown argument: --bogus"."""
    top = parser(prog_demo=prog or "scripts/demo.sh", prog_lab=prog or "scripts/lab.sh", prog_workshop=prog or "scripts/workshop.sh")
    # bench's --service-args value starts with "-" (--demo.x=y, -XX:...), which argparse takes for a flag.
    argv, i = list(argv), 1
    while argv[:1] == ["bench"] and i < len(argv) - 1:
        if argv[i] == "--service-args":
            argv[i : i + 2] = [f"--service-args={argv[i + 1]}"]
        i += 1
    args, extra = top.parse_known_args(argv)
    if extra:
        top.subs[args.command].error(f"unknown argument: {extra[0]}")
    if args.command == "bench":
        check_bench(args, top.subs["bench"])
    return args


def check_bench(args: argparse.Namespace, bench: Parser) -> None:
    """The bench's flags that cannot go together: --memory holds requests instead of offering the scenarios."""
    if args.held is not None and not args.memory:
        bench.error("--held: only with --memory (the numbers of requests it holds)")
    if args.memory:
        for flag, given in (
            ("--soak", args.soak),
            ("--scenarios", args.scenarios is not None),
            ("--duration", args.duration is not None),
            ("--idle-connections", args.idle_connections is not None),
            ("--client", args.client is not None),
        ):
            if given:
                bench.error(f"{flag} does not apply with --memory, which holds requests instead of offering the scenarios")
