"""The scripted run (``python -m liveness_lab demo``, what ``scripts/demo.sh`` runs): swarms the chosen
variants with the same offered load (ramp, hold, cool-down, then a quiet period), records Locust's stats
history and a timeline of the pods and their events, and builds reports/<timestamp>/ (report.html, the
PNG plots, summary.md, verdict.json and the raw data). Its exit code is the verdict (base/exits.py).

The run starts from the release as it now is: its defaults (variants, latency, probes) are read from the
Deployments, and it waits until the chosen variants have rolled out, no old pod is still terminating and
every pod has been Ready for a while (``LIVENESS_LAB_SETTLE``), or stops saying why. So the pods it
judges are the ones that served its load, and a rollout just before it is never a verdict against a
variant. Its options and where each default comes from are in options.py; what it writes as it goes
(run.json, the timeline) in record.py.
"""

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Protocol

from liveness_lab.base import LOCUST_DIR, ROOT, coordinates
from liveness_lab.base.console import LOG, log_file
from liveness_lab.base.exits import SetupError
from liveness_lab.base.kube import Kube
from liveness_lab.base.settle import DEFAULT_SETTLE_S, SETTLE_ENV
from liveness_lab.report.settings import settings_by_variant

from . import release as rel
from .cluster_lock import ClusterLock, ConfigMapStore, lock_name
from .load_source import choose_load
from .locust_master import ClusterLocust, MasterUnavailable, phase_options
from .no_other_load import ensure_no_swarm, release_master, wait_variants_idle
from .options import DemoOptions, Plan, env_seconds, max_run_seconds, phase_at, resolve_plan
from .record import LiveRecorder, RunRecord, commit, cpus

# The recorder starts this long before Locust, for a baseline, and stops this long after it.
RECORDER_LEAD_S, RECORDER_TAIL_S = 5, 3


class DuringLoad(Protocol):
    """What a caller does to the cluster while the load runs (the lab's scenario actions, lab.actions):
    started with the load's start time and a RECORD(kind, **fields) that writes to the run's timeline,
    stopped when the load is over (before the recorder), or on any error."""

    def start(self, started: float, record: Callable[..., None]) -> None: ...

    def stop(self) -> None: ...


class Demo:
    """One scripted run: prepare (cluster, lock, swarm, pods, settled release), swarm, report."""

    def __init__(
        self,
        opts: DemoOptions,
        console=None,
        environ=os.environ,
        api: rel.ClusterApi | None = None,
        print_summary: bool = True,
        during_load: DuringLoad | None = None,
    ):
        self.opts, self.console, self.environ, self.print_summary = opts, console, environ, print_summary
        self.during_load, self.during_load_started = during_load, False
        self.api = api
        self.claim = None
        self.recorder: LiveRecorder | None = None
        self.locust: subprocess.Popen | ClusterLocust | None = None
        self.load, self.load_reason = "host", ""
        self.master = None  # the release's Locust master (master.LocustMaster)
        self.locust_workers = 1  # the workers the release's Locust Deployment asks for (--load cluster waits for them)

    # --- the cluster -------------------------------------------------------------------------------

    def _api(self) -> rel.ClusterApi:
        if self.api is None:
            try:
                self.api = rel.ClusterApi()
            except rel.ApiUnavailable as e:
                raise SetupError(
                    str(e), "kubectl config get-contexts, then --context NAME (kind's own, kind-liveness-lab: scripts/cluster-up.sh)"
                ) from e
        return self.api

    def read_release(self) -> rel.ReleaseDefaults:
        """The release's defaults; on kind's own context, namespace and release the cluster is brought up
        first (scripts/cluster-up.sh) when its API does not answer or the release deploys no variant (a
        variant the release leaves out is the user's to enable: resolve_plan says how). Any other
        --context, --namespace or --release must name what exists: else a set-up error saying which."""
        if not coordinates.read(self.environ).is_kind_default():
            return rel.check_target(self._api())
        defaults = None
        try:
            defaults = rel.defaults_from_deployments(self._api().deployments())
        except (rel.ApiUnavailable, SetupError) as e:
            LOG.info("the cluster does not answer (%s)", e)
        if defaults is not None and defaults.variants:
            LOG.info("cluster up, variants deployed: %s", " ".join(defaults.variants))
            return defaults
        LOG.info("cluster or variants not there: running scripts/cluster-up.sh")
        rc = subprocess.call([str(ROOT / "scripts" / "cluster-up.sh")])
        if rc != 0:
            raise SetupError(f"scripts/cluster-up.sh failed (exit {rc})", "see its output above")
        self.api = None
        try:
            return rel.defaults_from_deployments(self._api().deployments())
        except rel.ApiUnavailable as e:
            raise SetupError(f"the cluster's API does not answer after scripts/cluster-up.sh: {e}", "scripts/cluster-up.sh") from e

    def wait_settled(self, variants: list[str], ready_wait: int, settle_s: int) -> None:
        """Until the chosen variants run as the release now says (release.settle_problems), at most
        READY_WAIT seconds; then a set-up error with what is still wrong."""
        api = self._api()
        deadline = time.time() + ready_wait
        said = None
        while True:
            problems = rel.settle_problems(api.deployments(), api.pods(), variants, time.time(), settle_s)
            if not problems:
                return
            if time.time() >= deadline:
                raise SetupError(
                    f"the release has not settled after {ready_wait} s: {'; '.join(problems)}",
                    f"kubectl --context {api.context} -n {api.namespace} get pods; kubectl ... describe pods (or raise "
                    "LIVENESS_LAB_READY_WAIT)",
                )
            # Said again when what is wrong changes, not when a pod has settled a second longer.
            gist = [re.sub(r"Ready for \d+ s only", "Ready for a while only", p) for p in problems]
            if gist != said:
                LOG.info("waiting for the release as it now is: %s", "; ".join(problems))
                said = gist
            time.sleep(2)

    def prepare(self, plan: Plan) -> None:
        api = self._api()
        ready_wait = env_seconds("LIVENESS_LAB_READY_WAIT", 300, self.environ)
        settle_s = env_seconds(SETTLE_ENV, DEFAULT_SETTLE_S, self.environ)
        # Before anything changes: another run's pods are not ours to replace, nor its swarm ours to stop.
        lock = ClusterLock(
            ConfigMapStore(api.core, api.namespace, lock_name(api.release)), api.context, environ=self.environ, clone=str(ROOT)
        )
        self.claim = lock.claim("demo.sh", max_run_seconds(self.opts, len(plan.variants), ready_wait), self.opts.command)
        self.choose_load(plan)
        self.master = release_master(api, self.environ)
        ensure_no_swarm(self.master, self.opts.stop_swarm)
        if self.load == "cluster":  # the master must be able to run it, before anything waits
            self.locust_workers = rel.locust_workers(api.deployments())
            status = ClusterLocust(self.master, plan.out, self.opts.total_s).check(self.locust_workers)
            LOG.info("in-cluster Locust: %s, %s worker(s) connected", status.state, status.workers)
        if not self.opts.keep_pods:
            # A pod that restarted before carries its CrashLoopBackOff delay and the kubelet's spent event
            # budget into the run: replaced, so that every run starts from the same state.
            restarted = rel.restarted_pods(api.pods(), plan.variants)
            if restarted:
                LOG.info("replacing pods that restarted before this run: %s", " ".join(restarted))
                api.delete_pods(restarted)
        self.wait_settled(plan.variants, ready_wait, settle_s)
        wait_variants_idle(Kube(api.namespace), plan.variants)

    def choose_load(self, plan: Plan) -> None:
        """--load: host or cluster (load_source.py), said in the output."""
        services = None
        if self.opts.load != "cluster":
            try:
                services = self._api().services()
            except rel.ApiUnavailable as e:
                LOG.info("could not read the release's Services (%s)", e)
        self.load, self.load_reason = choose_load(self.opts.load, services, plan.variants, self._api().release)
        if self.opts.load_why and self.load == self.opts.load:
            self.load_reason = self.opts.load_why
        where = (
            "Locust on this machine against the NodePorts on 127.0.0.1"
            if self.load == "host"
            else "the release's own Locust master and workers, through the API server"
        )
        LOG.info("load: %s (%s): %s", self.load, self.load_reason, where)

    # --- the run -----------------------------------------------------------------------------------

    def settings(self) -> dict | None:
        """The Deployments' settings as the load starts; None when the API does not answer (the verdict
        then does not time the kills, and says so)."""
        try:
            return settings_by_variant(self._api().deployments())
        except rel.ApiUnavailable as e:
            LOG.warning("could not read the Deployments' settings (%s): the report will not time the kills", e)
            return None

    def swarm(self, plan: Plan, defaults: rel.ReleaseDefaults) -> None:
        o = self.opts
        plan.out.mkdir(parents=True, exist_ok=True)
        self.recorder = LiveRecorder(plan.out / "timeline.jsonl", o.total_s + 120)
        self.recorder.start()
        time.sleep(RECORDER_LEAD_S)
        LOG.info(
            "swarming %s: %s users each at %g req/s, %s ms (%s); ramp %ss, hold %ss, quiet %ss (~%s min)",
            " ".join(plan.variants),
            o.users,
            o.rate,
            plan.latency_ms,
            plan.latency_source,
            o.ramp,
            o.hold,
            o.quiet,
            o.total_s // 60 + 1,
        )
        settings = self.settings()
        record = RunRecord(
            variants=",".join(plan.variants),
            users_per_variant=o.users,
            rate_per_user=o.rate,
            latency_ms=plan.latency_ms,
            phases={"ramp": o.ramp, "hold": o.hold, "cooldown": o.cooldown, "quiet": o.quiet},
            locust_started=0.0,
            namespace=self._api().namespace,
            settings=settings,
            latency_source=plan.latency_source,
            cpus=cpus(),
            commit=commit(),
            release_latency_ms={v: defaults.latency_ms.get(v) for v in plan.variants},
            kubernetes=self._api().versions(),
            request_timeout_s=plan.request_timeout_s,
        )
        if self.load == "cluster":
            self.swarm_in_cluster(plan, record)
        else:
            self.swarm_on_host(plan, record)
        self.stop_during_load()
        time.sleep(RECORDER_TAIL_S)
        self.recorder.stop()
        self.recorder = None

    def start_during_load(self, started: float) -> None:
        """The caller's DuringLoad, from the load's start, writing to this run's timeline."""
        if self.during_load is None or self.recorder is None:
            return
        recorder = self.recorder.recorder
        self.during_load.start(started, lambda kind, **fields: recorder.write(kind, **fields))
        self.during_load_started = True

    def stop_during_load(self) -> None:
        if self.during_load_started:
            self.during_load_started = False
            self.during_load.stop()

    def swarm_on_host(self, plan: Plan, record: RunRecord) -> None:
        o = self.opts
        env = dict(
            self.environ,
            LIVENESS_LAB_TARGET="host",
            LIVENESS_LAB_SHAPE="demo",
            LIVENESS_LAB_PODS_TAB="off",
            LIVENESS_LAB_USERS=str(o.users * len(plan.variants)),
            LIVENESS_LAB_RAMP_S=str(o.ramp),
            LIVENESS_LAB_HOLD_S=str(o.hold),
            LIVENESS_LAB_COOLDOWN_S=str(o.cooldown),
            LIVENESS_LAB_QUIET_S=str(o.quiet),
        )
        cmd = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            "locustfile.py",
            "--headless",
            "--latency-ms",
            str(plan.latency_ms),
            "--rate-per-user",
            f"{o.rate:g}",
            "--request-timeout-s",
            f"{plan.request_timeout_s:g}",
            "--csv",
            str(plan.out / "locust"),
            "--csv-full-history",
            "--html",
            str(plan.out / "locust.html"),
            "--loglevel",
            "WARNING",
            "--only-summary",
            *plan.user_classes,
        ]
        # locust_started must be the moment Locust starts: written just before.
        record.locust_started = round(time.time(), 3)
        record.write(plan.out)
        with open(plan.out / "locust.log", "w", encoding="utf-8") as log:
            log.write(f"$ {shlex.join(cmd)}\n")
            log.flush()
            self.locust = subprocess.Popen(cmd, cwd=LOCUST_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
            self.start_during_load(record.locust_started)
            self.follow(record.locust_started, plan)
            # Locust exits 1 when any request failed: expected here (the blocking pods); the verdict decides.
            self.locust.wait()

    def swarm_in_cluster(self, plan: Plan, record: RunRecord) -> None:
        """The same shape and data from the release's Locust master (locust_master.py), its REST calls in locust.log."""
        o = self.opts
        self.master.log_path = plan.out / "locust.log"
        self.master.log_path.write_text(f"# --load cluster ({self.load_reason}): the release's Locust master, {self.master}\n")
        locust = ClusterLocust(self.master, plan.out, o.total_s)
        status = locust.prepare(self.locust_workers)
        record.target = (
            f"cluster: the release's Locust master ({status.workers} worker(s)), driven through the API server; "
            "requests to the variants' Services"
        )
        if locust.clock_offset_s is not None and abs(locust.clock_offset_s) > 1:
            LOG.warning(
                "the Locust master's clock is %+.1f s from this machine's: its stats history is on its clock", locust.clock_offset_s
            )
        options = phase_options(
            o.users * len(plan.variants), o.ramp, o.hold, o.cooldown, o.quiet, plan.latency_ms, o.rate, plan.request_timeout_s
        )
        self.locust = locust
        # locust_started: the moment of the /swarm that starts the shape, written just before.
        record.locust_started = round(time.time(), 3)
        record.write(plan.out)
        try:
            locust.start(plan.user_classes, options)
        except MasterUnavailable as e:
            raise SetupError(f"the release's Locust master did not take the swarm ({e})", f"see {plan.out / 'locust.log'}") from e
        self.start_during_load(record.locust_started)
        self.follow(record.locust_started, plan)
        for note in locust.notes:
            LOG.warning("in-cluster load: %s", note)

    def restarts_text(self, plan: Plan) -> str:
        r = self.recorder.restarts if self.recorder else {}
        return ", ".join(f"{v} {r.get(v, 0)}" for v in plan.variants)

    def follow(self, started: float, plan: Plan) -> None:
        """While Locust runs: the phase, the time left and the restarts so far, live on a terminal, and a
        line per phase in the log either way."""
        o = self.opts
        progress = task = None
        if self.console is not None and self.console.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn

            # The time left from the timetable, not rich's estimate: the run ends when its phases do.
            progress = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                TextColumn("{task.fields[left]} left"),
                TextColumn("restarts: {task.fields[restarts]}"),
                console=self.console,
                transient=True,
            )
            task = progress.add_task("ramp", total=o.total_s, left="", restarts=self.restarts_text(plan))
            progress.start()
        phase = None
        try:
            while self.locust.poll() is None:
                elapsed = time.time() - started
                now_phase = phase_at(o, elapsed)
                if now_phase != phase:
                    LOG.info("%s (%s s left); restarts so far: %s", now_phase, max(0, round(o.total_s - elapsed)), self.restarts_text(plan))
                    phase = now_phase
                if progress is not None:
                    left = max(0, int(o.total_s - elapsed))
                    progress.update(
                        task,
                        completed=min(elapsed, o.total_s),
                        description=now_phase,
                        left=f"{left // 60}:{left % 60:02d}",
                        restarts=self.restarts_text(plan),
                    )
                time.sleep(1)
        finally:
            if progress is not None:
                progress.stop()
        LOG.info("load over; restarts during the run: %s", self.restarts_text(plan))

    def report(self, plan: Plan) -> int:
        from liveness_lab.report.build import build

        history = plan.out / "locust_stats_history.csv"
        if not history.is_file() or (self.load == "cluster" and len(history.read_text().splitlines()) < 2):
            log = (plan.out / "locust.log").read_text(errors="replace").splitlines()[-8:] if (plan.out / "locust.log").is_file() else []
            raise SetupError("Locust recorded no stats: " + " | ".join(line.strip() for line in log), f"see {plan.out / 'locust.log'}")
        result = build(plan.out)
        if self.print_summary:
            print((plan.out / "summary.md").read_text(), flush=True)
        LOG.info("report: %s (summary: %s)", plan.out / "report.html", plan.out / "summary.md")
        return result.exit_code

    def cleanup(self) -> None:
        """However the run ends: the caller's actions and Locust stopped, the recorder stopped, the cluster
        lock given back."""
        self.stop_during_load()
        if self.locust is not None and self.locust.poll() is None:
            self.locust.send_signal(signal.SIGINT)
            try:
                self.locust.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.locust.kill()
        if self.recorder is not None:
            self.recorder.stop()
            self.recorder = None
        if self.claim is not None:
            self.claim.release()
            self.claim = None

    def run(self) -> int:
        try:
            defaults = self.read_release()
            plan = resolve_plan(self.opts, defaults, self.environ)
            with log_file(plan.out / "run.log"):
                LOG.debug("command: %s; plan: %s", self.opts.command, plan)
                if plan.latency_source != "release":
                    try:
                        release_ms = defaults.latency_of(plan.variants)
                    except ValueError:
                        release_ms = None
                    if release_ms is not None and release_ms != plan.latency_ms:
                        LOG.info(
                            "asking for %s ms (%s) while the release's default is %s ms", plan.latency_ms, plan.latency_source, release_ms
                        )
                self.prepare(plan)
                self.swarm(plan, defaults)
                return self.report(plan)
        finally:
            self.cleanup()


def run_demo(opts: DemoOptions, console=None, environ=os.environ) -> int:
    return Demo(opts, console, environ).run()
