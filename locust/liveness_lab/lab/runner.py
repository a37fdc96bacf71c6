"""The lab's run over the cluster (``python -m liveness_lab lab``, what ``scripts/lab.sh`` runs): per
scenario, wait for a quiet machine (QUIET_BUSY), helm upgrade the release with its own values plus the
scenario's overlay, wait until the swarmed variants run fresh pods, Ready and settled, run the scripted
demo in this process (under the lab's cluster lock) while the scenario's actions change the release at
their times (lab.actions), put back what the actions changed, judge the run against the prediction
(lab.judge), restore the release (helm rollback to the revision before); then the matrix. Ctrl-C,
SIGTERM or an error restores the release first. A scenario that needs something of the kubelets (its
`kubelet`, lab.kubelet) runs only on a cluster whose every node has it: asked for by name, it is refused
otherwise (exit 3, saying how to bring such a cluster up); in a run of the whole catalogue it is
skipped, saying so. With --resume a pass goes on in the folder it left (--out DIR): the runs that have a
judgement there (lab.json) are kept and counted, the others run, and the matrix and the exit status cover
them all.
"""

import json
import os
import queue
import shutil
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from liveness_lab.base import ROOT, coordinates
from liveness_lab.base.console import LOG, log_file
from liveness_lab.base.exits import CANNOT_TELL, HELD, NOT_HELD, SetupError
from liveness_lab.base.scenario import Scenario, ScenarioError
from liveness_lab.base.settle import DEFAULT_SETTLE_S, SETTLE_ENV
from liveness_lab.demo import release as rel
from liveness_lab.demo.cluster_lock import ClusterLock, ConfigMapStore, lock_name
from liveness_lab.demo.options import DemoOptions, env_seconds
from liveness_lab.demo.run import Demo
from liveness_lab.report.predictions import EXIT
from liveness_lab.report.recorder import MachineCpu, kind_node_container

from . import catalogue, judge, kubelet, ledger, matrix
from .actions import ActionRunner

# Where probe changes in running pods come from (a scenario's in-place action), for the clusters that refuse
# them: Kubernetes 1.38's alpha, off by default (docs/kubernetes-versions.md).
IN_PLACE_FIX = (
    "it needs Kubernetes 1.38 or later with the feature gate MutableContainerProbes on, in the API server and the kubelets "
    "(KEP-6318, alpha): docs/kubernetes-versions.md"
)
# A scenario run takes its load's own time and at most this much more (upgrade, settling, report,
# rollback), for the lock's expiry.
SCENARIO_OVERHEAD_S = 600


# Before each scenario's upgrade the lab waits for the machine's CPUs to quiet down: the mean of the last
# QUIET_WINDOW one-second samples under QUIET_BUSY, for at most QUIET_MAX_S. A rollback's --wait ends when
# the restored pods are Ready, while their JVMs still compile and the scenario's pods drain; a pod without
# a startup probe started among them (cold-scale-out's one pod, whose liveness allows its JVM 15 s) can be
# killed in its preparation and never become Ready.
QUIET_BUSY, QUIET_WINDOW, QUIET_MAX_S = 0.5, 5, 180


def quiet_after(samples: Iterable[float], window: int = QUIET_WINDOW, busy: float = QUIET_BUSY) -> int | None:
    """How many SAMPLES (the machine's busy share, one a second) went by until the mean of the last WINDOW
    was under BUSY; None when it never was."""
    recent: deque[float] = deque(maxlen=window)
    for seen, sample in enumerate(samples, 1):
        recent.append(sample)
        if len(recent) == window and sum(recent) / window < busy:
            return seen
    return None


def scenario_max_s(scenario: Scenario) -> int:
    """The longest one run of SCENARIO may hold the cluster."""
    return round(scenario.minutes() * 60) + SCENARIO_OVERHEAD_S


@dataclass
class LabOptions:
    only: list[str] | None = None
    quick: bool = False
    group: str | None = None  # one of base.LAB_GROUPS
    repeat: int = 1
    out: str | None = None
    resume: bool = False  # go on in OUT: its judged runs kept, the others run
    load: str = "auto"  # each scenario's demo: host|cluster|auto (liveness_lab/demo/load_source.py)
    command: str = "scripts/lab.sh"


def worst(codes: list[int]) -> int:
    """Not held (1) outranks cannot tell (2), which outranks held (0)."""
    if NOT_HELD in codes:
        return NOT_HELD
    return CANNOT_TELL if CANNOT_TELL in codes else HELD


def load_where(scenario: Scenario, requested: str = "auto") -> str:
    """Where SCENARIO's Locust runs when the lab was asked for REQUESTED (--load): the scenario's own
    load.where unless it is auto; a contradiction is a set-up error (a load of 20,000 connections cannot
    run on this machine, nor a host one in the cluster)."""
    own = scenario.load["where"]
    if own == "auto" or requested == own:
        return requested
    if requested == "auto":
        return own
    raise SetupError(
        f"scenario {scenario.name} runs its load with --load {own} (its load.where), not {requested}",
        f"leave --load out, or leave {scenario.name} out (--only)",
    )


def demo_options(scenario: Scenario, folder: Path, where: str = "auto") -> DemoOptions:
    """The scripted run of SCENARIO's load into FOLDER, its Locust where WHERE (--load) and the scenario say."""
    load = scenario.load
    return DemoOptions(
        hold=load["hold"],
        ramp=load["ramp"],
        quiet=load["quiet"],
        users=load["users"],
        rate=float(load["rate"]),
        latency_ms=load.get("latency_ms"),
        request_timeout_s=load["timeout_s"],
        variants=list(scenario.variants),
        out=folder,
        load=load_where(scenario, where),
        load_why=f"scenario {scenario.name}'s load.where" if scenario.load["where"] != "auto" else None,
        command=f"scripts/lab.sh (scenario {scenario.name})",
    )


def duration(seconds: str) -> int:
    """helm's --timeout forms as seconds (10m, 600s), for subprocess time limits."""
    seconds = seconds.strip()
    mult = 60 if seconds.endswith("m") else 1
    return int(seconds.rstrip("ms") or 0) * mult


@contextmanager
def deferred_signals(signals=(signal.SIGINT, signal.SIGTERM)):
    """SIGNALS received inside are held and delivered (their handlers called) once it ends; in a thread
    other than the main one (where Python runs signal handlers), nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held, previous = [], {sig: signal.getsignal(sig) for sig in signals}
    for sig in signals:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in held[:1]:
            LOG.warning("the release is restored; now stopping (signal %s held during the rollback)", signum)
            signal.raise_signal(signum)


class Lab:
    def __init__(self, opts: LabOptions, console=None, environ=os.environ):
        self.opts, self.console, self.environ = opts, console, environ
        self.helm_timeout = environ.get("LIVENESS_LAB_HELM_TIMEOUT") or "10m"
        self.settle = env_seconds(SETTLE_ENV, DEFAULT_SETTLE_S, environ)
        self.restore_to: int | None = None
        self.claim = None
        self.api = None
        self.helm = None
        self.out: Path | None = None
        self.actions: ActionRunner | None = None  # the running scenario's, until undone
        self.kubelets: dict | None = None  # per node, what lab.kubelet read (once)
        self.skipped: list[str] = []
        self.in_place: str | None = None  # why the API server refuses probe changes in running pods ("": it takes them)

    def choose(self) -> list[Scenario]:
        try:
            catalogue.load_catalogue()  # every file loads cleanly before the cluster is touched
            chosen = catalogue.load_catalogue(only=self.opts.only, quick=self.opts.quick, group=self.opts.group)
        except ScenarioError as e:
            raise SetupError(f"a scenario is wrong: {e}", "fix the field it names (python -m liveness_lab.lab check, from locust/)") from e
        if not chosen:
            raise SetupError("no scenario chosen", "check --only, --quick and --group (each narrows the others)")
        for scenario in chosen:
            load_where(scenario, self.opts.load)  # a --load the scenario cannot run with: said before the cluster is touched
        return chosen

    def connect(self) -> None:
        try:
            self.api = rel.ClusterApi()
            if coordinates.read(self.environ).is_kind_default():
                self.api.deployments()
            else:  # --context, --namespace, --release must name what exists
                rel.check_target(self.api)
        except rel.ApiUnavailable as e:
            raise SetupError(
                f"the cluster's API does not answer ({e})", "scripts/cluster-up.sh first (or --context NAME: kubectl config get-contexts)"
            ) from e
        self.helm = rel.Helm(self.api.release, self.api.namespace, self.api.context)
        try:
            self.helm.revision()
        except (rel.HelmFailed, OSError, ValueError, KeyError) as e:
            raise SetupError(f"release {self.api.release} is not installed ({e})", "scripts/cluster-up.sh first") from e

    def kubelet_ready(self, scenario: Scenario) -> bool:
        """Whether every node's kubelet runs as SCENARIO needs (its `kubelet`); a scenario asked for by name
        (--only) on a cluster without it is a set-up error, one in a run of the whole catalogue is skipped."""
        if not scenario.kubelet:
            return True
        asked = bool(self.opts.only) and scenario.name in self.opts.only
        problem = None
        if self.kubelets is None:
            try:
                self.kubelets = kubelet.read(self.api)
                LOG.info("kubelets: %s", ", ".join(f"{n} {s}" for n, s in sorted(self.kubelets.items())))
            except kubelet.KubeletUnreadable as e:
                self.kubelets = {}
                problem = f"the kubelets' configuration could not be read ({e})"
        if problem is None and not self.kubelets:
            problem = "the kubelets' configuration could not be read (see above)"
        lacking = kubelet.unmet(scenario.kubelet, self.kubelets) if problem is None else []
        if problem is None and not lacking:
            return True
        why = problem or "; ".join(lacking)
        fix = kubelet.how_to_get(scenario.kubelet)
        if asked:
            raise SetupError(f"{scenario.name} needs kubelets with {scenario.kubelet}: {why}", f"on kind: {fix}")
        LOG.warning("skipping %s: it needs kubelets with %s (%s); on kind: %s", scenario.name, scenario.kubelet, why, fix)
        self.skipped.append(scenario.name)
        return False

    def in_place_ready(self, scenario: Scenario) -> bool:
        """Whether the API server takes probe changes in running pods, for a scenario whose actions make one
        (KEP-6318); asked once, by a dry run. As kubelet_ready: by name a set-up error, else skipped."""
        if not any(a.in_place for a in scenario.actions):
            return True
        if self.in_place is None:
            try:
                self.in_place = self.api.in_place_refusal() or ""
            except rel.ApiUnavailable as e:
                self.in_place = f"the API server could not be asked ({e})"
            LOG.info("probes changed in running pods: %s", self.in_place or "the API server takes them")
        if not self.in_place:
            return True
        fix = IN_PLACE_FIX
        if self.opts.only and scenario.name in self.opts.only:
            raise SetupError(f"{scenario.name} changes probes in running pods, which this cluster refuses: {self.in_place}", fix)
        LOG.warning(
            "skipping %s: it changes probes in running pods, which this cluster refuses (%s); %s", scenario.name, self.in_place, fix
        )
        self.skipped.append(scenario.name)
        return False

    def undo_actions(self) -> None:
        """What the running scenario's actions changed, put back (before the judge, and on any error)."""
        if self.actions is None:
            return
        runner, self.actions = self.actions, None
        runner.stop()
        try:
            runner.undo()
        except rel.ApiUnavailable as e:
            LOG.warning("could not put back what the actions changed (%s): the rollback follows", e)

    def restore(self) -> None:
        """Back to the revision before the scenario's upgrade, when one is pending. A SIGINT or SIGTERM
        during the rollback waits for it to end (deferred_signals): stopped midway, helm leaves the release
        pending-rollback and every later upgrade refuses it ("another operation is in progress");
        helm runs in a session of its own, out of reach of the terminal's Ctrl-C."""
        self.undo_actions()
        if self.restore_to is None:
            return
        revision, self.restore_to = self.restore_to, None
        LOG.info("restoring release %s to revision %s", self.api.release, revision)
        try:
            with deferred_signals():
                self.helm.run(
                    "rollback",
                    self.api.release,
                    str(revision),
                    "--wait",
                    "--timeout",
                    self.helm_timeout,
                    log=self.out / "restore.log",
                    timeout=duration(self.helm_timeout) + 60,
                    own_session=True,  # the terminal's Ctrl-C reaches its whole process group
                )
        except (rel.HelmFailed, OSError) as e:
            raise SetupError(
                f"could not restore the release to revision {revision} ({e}; log: {self.out / 'restore.log'})",
                f"helm rollback {self.api.release} {revision} -n {self.api.namespace} --kube-context {self.api.context}",
            ) from e

    def fresh_pods(self, since: float, variants: list[str]) -> None:
        """Each variant runs pods created after SINCE: those the upgrade did not replace are rolled out
        again, so no scenario inherits a restart count, a back-off or a warm JIT from the one before. Then
        the demo's own wait (rolled out, none terminating, Ready for LIVENESS_LAB_SETTLE s) follows."""
        pods = self.api.pods()
        for v in variants:
            stale = [
                p
                for p in pods.get("items", [])
                if (p["metadata"].get("labels") or {}).get(rel.COMPONENT_LABEL) == v
                and not p["metadata"].get("deletionTimestamp")
                and (rel.parse_time(p["metadata"].get("creationTimestamp")) or 0) < since
            ]
            if stale:
                LOG.info("%s: %s pod(s) from before the upgrade: rolling them out again", v, len(stale))
                self.api.restart_deployment(f"{self.api.release}-{v}")

    def fresh_locust_workers(self, since: float) -> None:
        """A Locust master the upgrade replaced (its pod created after SINCE; Ready now, helm --wait): its
        workers are rolled out again, to start against it. A worker that started beside the replacement
        could send its first connection to the old master's address, and the Service's conntrack entry kept
        every retry there until the kernel gave up, about two minutes (SYN_SENT to the deleted pod's IP; the
        lab waits 90 s for them). Their liveness probe
        restarts such a worker too, but only after its start, its failures and its stop, mid-way through
        the wait."""
        pods = [p for p in self.api.pods().get("items", []) if not p["metadata"].get("deletionTimestamp")]

        def component(p):
            return (p["metadata"].get("labels") or {}).get(rel.COMPONENT_LABEL)

        replaced = any(component(p) == "locust" and (rel.parse_time(p["metadata"].get("creationTimestamp")) or 0) >= since for p in pods)
        if replaced and any(component(p) == "locust-worker" for p in pods):
            LOG.info("the upgrade replaced the Locust master: rolling its workers out again, to connect to it")
            self.api.restart_deployment(f"{self.api.release}-locust-worker")

    def machine_node(self, docker: str = "docker") -> str | None:
        """A kind node container of the release's pods, where the Docker machine's CPU is read; None on a
        cluster that is not kind on this Docker."""
        nodes = {(p.get("spec") or {}).get("nodeName") for p in self.api.pods().get("items", [])} - {None, ""}
        return next((n for n in sorted(nodes) if kind_node_container(n, docker)), None)

    def wait_quiet(self, docker: str = "docker") -> float:
        """Until the machine's CPUs are quiet (quiet_after), at most QUIET_MAX_S; the seconds waited."""
        node = self.machine_node(docker)
        if node is None:
            return 0.0
        started, samples = time.time(), queue.Queue()
        cpu = MachineCpu(node, samples.put, docker=docker)

        def read():
            while time.time() - started < QUIET_MAX_S:
                try:
                    yield samples.get(timeout=5)
                except queue.Empty:
                    return

        try:
            seen = quiet_after(read())
        finally:
            cpu.stop()
        waited = time.time() - started
        if seen is None:
            LOG.warning("the machine's CPUs were still over %d %% busy after %.0f s: going on", QUIET_BUSY * 100, waited)
        elif seen > QUIET_WINDOW:
            LOG.info(
                "waited %.0f s for the machine's CPUs to be under %d %% busy (%s s on average)", waited, QUIET_BUSY * 100, QUIET_WINDOW
            )
        return waited

    def run_scenario(self, scenario: Scenario, folder: Path) -> int:
        folder.mkdir(parents=True, exist_ok=True)
        quiet_s = self.wait_quiet()
        overlay = folder / "values-overlay.yaml"
        with open(overlay, "w") as f:
            f.write(f"# scenario {scenario.name}: {scenario.setting or scenario.title}\n")
            yaml.safe_dump(scenario.values, f, sort_keys=False)
        t0 = time.time()
        since = int(t0)  # creationTimestamp has whole seconds
        self.restore_to = self.helm.revision()
        LOG.info(
            "%s: helm upgrade with the release's values + %s/values-overlay.yaml (restore point: revision %s)",
            scenario.name,
            folder.name,
            self.restore_to,
        )
        try:
            self.helm.run(
                "upgrade",
                self.api.release,
                str(ROOT / "chart"),
                "-f",
                str(self.out / "release-values.yaml"),
                "-f",
                str(overlay),
                "--wait",
                "--timeout",
                self.helm_timeout,
                log=folder / "helm-upgrade.log",
                timeout=duration(self.helm_timeout) + 60,
            )
        except rel.HelmFailed as e:
            raise SetupError(
                f"{scenario.name}: helm upgrade failed (log: {folder / 'helm-upgrade.log'}): {e}", "the release is restored on exit"
            ) from e
        self.fresh_pods(since, scenario.variants)
        self.fresh_locust_workers(since)
        if self.kubelets and scenario.kubelet:
            (folder / "kubelet.json").write_text(json.dumps(self.kubelets, indent=2) + "\n")
        self.actions = ActionRunner(self.api, scenario.actions) if scenario.actions else None
        demo = Demo(
            demo_options(scenario, folder, self.opts.load),
            self.console,
            self.environ,
            api=self.api,
            print_summary=False,
            during_load=self.actions,
        )
        t1 = time.time()
        LOG.info("%s: upgraded after %.0f s; the scripted demo (log: %s)", scenario.name, t1 - t0, folder / "demo.log")
        # The demo's own verdict is on the demo's claim, not on this scenario's: the judge decides.
        with log_file(folder / "demo.log"):
            try:
                demo.run()
            except SetupError as e:
                LOG.error("%s", e.message + (f"\n  fix: {e.fix}" if e.fix else ""))
        self.undo_actions()
        if not (folder / "run.json").is_file() or not (folder / "timeline.jsonl").is_file():
            tail = "\n".join((folder / "demo.log").read_text().splitlines()[-10:]) if (folder / "demo.log").is_file() else ""
            raise SetupError(f"{scenario.name}: the scripted demo recorded no run (log: {folder / 'demo.log'})\n{tail}")
        t2 = time.time()
        # The demo's own wait for a settled release is preparation too: the run starts with the load.
        t1 = max(t1, float(json.loads((folder / "run.json").read_text()).get("locust_started") or t1))
        result = judge.judge_scenario(scenario, folder)
        judge.write(result, folder)
        try:
            LOG.info("    kept in the ledger: %s", ledger.add(result, scenario, self.environ.get(ledger.LEDGER_ENV) or None))
        except OSError as e:  # the run and its judgement stay in its folder; only the ledger's copy is missing
            LOG.warning("    not kept in the ledger (%s): the run's lab.json is in %s", e, folder)
        text = result.text()
        (folder / "judgement.txt").write_text("\n".join(text) + "\n")
        for line in text:
            LOG.info("    %s", line)
        self.restore()
        t3 = time.time()
        timing = {
            "quietS": round(quiet_s),
            "prepareS": round(t1 - t0),
            "runS": round(t2 - t1),
            "restoreS": round(t3 - t2),
            "totalS": round(t3 - t0),
        }
        (folder / "timing.json").write_text(json.dumps(timing) + "\n")
        LOG.info(
            "%s: %s (%s s: prepare %s, run %s, restore %s)",
            scenario.name,
            result.outcome,
            timing["totalS"],
            timing["prepareS"],
            timing["runS"],
            timing["restoreS"],
        )
        return EXIT[result.outcome]

    def kept(self, planned: list[tuple[Scenario, Path]]) -> dict[Path, int]:
        """With --resume, the exit codes of the PLANNED runs that OUT already holds judged (their lab.json);
        a run stopped before its judgement is moved aside (<folder>.stopped) to run again."""
        if not self.opts.resume:
            return {}
        kept = {}
        for scenario, folder in planned:
            if (folder / "lab.json").is_file():
                judged = judge.read(folder)
                if judged.scenario != scenario.name:
                    raise SetupError(
                        f"--resume: {folder} holds a run of {judged.scenario}, not {scenario.name}",
                        "resume with the --only and --repeat of the pass",
                    )
                kept[folder] = EXIT[judged.outcome]
            elif folder.exists():
                aside = folder.with_name(folder.name + ".stopped")
                if aside.exists():
                    shutil.rmtree(aside)
                folder.rename(aside)
                LOG.info("%s: stopped before its judgement; moved to %s, to run again", folder.name, aside.name)
        return kept

    def run(self) -> int:
        scenarios = self.choose()
        if self.opts.resume and not (self.opts.out and (Path(self.opts.out) / "release-values.yaml").is_file()):
            raise SetupError(
                f"--resume goes on with a lab folder, and {self.opts.out or 'no --out DIR'} is none (no release-values.yaml in it)",
                "give the folder of the pass to go on with: --resume --out reports/lab-<timestamp>",
            )
        self.out = (
            Path(self.opts.out) if self.opts.out else ROOT / "reports" / time.strftime("lab-%Y%m%dT%H%M%SZ", time.gmtime())
        ).resolve()
        if not self.opts.resume and self.out.is_dir() and any(self.out.iterdir()):
            # A run's recorder adds to the timeline it finds: a new pass in an old folder mixes both runs.
            raise SetupError(
                f"--out {self.out} is not empty ({', '.join(sorted(p.name for p in self.out.iterdir())[:4])}...): "
                "this pass's runs would mix with what is there",
                f"go on with that pass: --resume --out {self.out}; or give a new folder (default: reports/lab-<timestamp>)",
            )
        self.out.mkdir(parents=True, exist_ok=True)
        with log_file(self.out / "lab.log"):
            self.connect()
            try:
                # The cluster lock for the whole lab, before the first upgrade and until the last restore; the
                # demos it runs find its token (LIVENESS_LAB_LOCK_TOKEN) and run under it.
                lock = ClusterLock(
                    ConfigMapStore(self.api.core, self.api.namespace, lock_name(self.api.release)),
                    self.api.context,
                    environ=self.environ,
                    clone=str(ROOT),
                )
                scenarios = [s for s in scenarios if self.kubelet_ready(s) and self.in_place_ready(s)]
                if not scenarios:
                    raise SetupError(f"no scenario to run here: {', '.join(self.skipped)} need what this cluster lacks (see above)")
                planned = [
                    (s, self.out / (s.name if self.opts.repeat == 1 else f"{s.name}-{i}"))
                    for i in range(1, self.opts.repeat + 1)
                    for s in scenarios
                ]
                kept = self.kept(planned)
                to_run = [s for s, folder in planned if folder not in kept]
                self.claim = lock.claim("lab.sh", max(60, sum(map(scenario_max_s, to_run))), self.opts.command)
                if not self.opts.resume:  # a resumed pass keeps the values it began with (checked above)
                    (self.out / "release-values.yaml").write_text(self.helm.values_yaml() + "\n")
                LOG.info(
                    "lab: %s scenario(s) x %s into %s: %s", len(scenarios), self.opts.repeat, self.out, " ".join(s.name for s in scenarios)
                )
                if self.opts.resume:
                    LOG.info(
                        "lab: resuming: %s of %s runs kept (%s held, %s not held, %s cannot tell), %s to run; the release's values "
                        "as the pass began (release-values.yaml)",
                        len(kept),
                        len(planned),
                        *(list(kept.values()).count(code) for code in (HELD, NOT_HELD, CANNOT_TELL)),
                        len(to_run),
                    )
                LOG.info(
                    "lab: about %s minutes on 2 cores (the loads %s, and the rollouts, reports and rollbacks measured: "
                    "%s s a scenario, %s a storm); a faster machine takes the loads' time and less of the rest",
                    round(catalogue.estimate_s(to_run) / 60),
                    round(sum(s.minutes() for s in to_run)),
                    catalogue.OVERHEAD_S["remedy"],
                    catalogue.OVERHEAD_S["storm"],
                )
                started, codes = time.time(), list(kept.values())
                for s, folder in planned:
                    if folder not in kept:
                        codes.append(self.run_scenario(s, folder))
                matrix.build(self.out)
                LOG.info("lab done in %.0f s: %s (table: %s)", time.time() - started, self.out / "matrix.html", self.out / "matrix.md")
                if self.skipped:
                    LOG.warning("skipped (they need what this cluster lacks, see above): %s", ", ".join(self.skipped))
                return worst(codes)
            finally:
                if self.restore_to is not None:
                    LOG.warning("stopped during a scenario: restoring the release first")
                    try:
                        self.restore()
                    except SetupError as e:
                        LOG.warning("%s; restore it by hand: %s", e.message, e.fix)
                if self.claim is not None:
                    self.claim.release()


def run_lab(opts: LabOptions, console=None, environ=os.environ) -> int:
    return Lab(opts, console, environ).run()
