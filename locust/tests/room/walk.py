"""A room, measured (issue 51): participants in their own namespaces of the kind cluster, each with their own
release, token and helm, walked through the workshop's seven steps at once, each in another order of
Skip, Reset, the shown commands and an own `helm upgrade --set latencyMs=500`; then the instructor's table.

What it measures and checks, per participant and step: how the step's change was made, whether it
succeeded (failed helm upgrades and refused Skips or Resets are counted), the seconds until the release had
settled and the check waited for a swarm, the seconds from the swarm's start to the check's verdict (met,
or not as predicted, with its reason), and every probe's handlers (one each). Across the room: nothing of
one participant reaches another (each release's Helm revisions are its own actions' only; another
participant's token is refused with 401), the instructor's table lists them all, and the machine's CPU and
memory (`docker stats` of the kind node every 10 s).

Usage (from locust/, after scripts/cluster-up.sh; the tree's .tools/bin first on PATH):
    ../.venv/bin/python tests/room/walk.py [--participants 3] [--keep] [--out reports/room-<time>]

The namespaces ws-<name> are made (restricted Pod Security, docs/workshop.md's quota, `admin` bound for
the participant, who installs as themselves with --kube-as-user) and deleted at the end unless --keep. On 2
cores the swarms of three participants and the laptop's release share the CPU (each pod's CPU request is
lowered to 25m so that they all schedule; the limits stay): the report says how busy the machine was, and
a check that does not hold is reported with its reason, not retried.
"""

from __future__ import annotations

import argparse
import base64
import json
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

LOCUST = Path(__file__).resolve().parents[2]
REPO = LOCUST.parent
sys.path.insert(0, str(LOCUST))
sys.path.insert(0, str(LOCUST / "tests"))

from e2e import kind  # noqa: E402

from liveness_lab.demo.locust_master import MasterRefused, ServiceProxy  # noqa: E402
from liveness_lab.workshop.course import load_steps  # noqa: E402

QUOTA = {
    "pods": "10",
    "requests.cpu": "1",
    "requests.memory": "2Gi",
    "limits.cpu": "7",
    "limits.memory": "5Gi",
    "services": "4",
    "services.nodeports": "0",
    "services.loadbalancers": "0",
}
LOAD = [("user_count", "40"), ("spawn_rate", "40"), ("user_classes", "BlockingUser"), ("user_classes", "ReactiveUser")]
LOAD += [("shape_class", "Default"), ("rate_per_user", "1.0"), ("latency_ms", "1000")]
STEPS = [s.name for s in load_steps()]
# How each participant makes each step's change: skip, command (the shown one), reset+command, own+skip
# (an own upgrade of latencyMs first), or none. The first participant skips, the second types, the third mixes.
PLANS = {
    "ann": dict.fromkeys(STEPS, "skip") | {"baseline": "none"},
    "bob": dict.fromkeys(STEPS, "command") | {"baseline": "none"},
    "cyd": {
        "baseline": "own",
        "tcp-probe": "skip",
        "raised-timeout": "command",
        "management-port": "reset+command",
        "reactive": "skip",
        "virtual": "command",
        "servlet": "reset+skip",
    },
}
HELMS = {"ann": kind.VERSIONS["HELM_VERSION"], "bob": "v3.22.0", "cyd": kind.VERSIONS["HELM_VERSION"]}


def helm_binary(version: str) -> str:
    if version == kind.VERSIONS["HELM_VERSION"]:
        return kind.tool("helm")
    script = f'. scripts/lib/common.sh && . scripts/lib/tools.sh && d="$LL_CACHE/helm-{version}/bin" && '
    script += f'{{ [ -x "$d/helm" ] || {{ ensure_go && build_helm "$d" {version}; }}; }} && echo "$d/helm"'
    return kind.run(["bash", "-c", f"cd {shlex.quote(str(REPO))} && {script}"], timeout=900).stdout.strip().splitlines()[-1]


@dataclass
class StepRecord:
    step: str
    how: str
    ok: bool = True
    error: str = ""
    settled_s: float | None = None
    verdict: str = ""
    reason: str = ""
    verdict_s: float | None = None
    handlers_ok: bool = True


@dataclass
class Participant:
    name: str
    helm_version: str
    helm: str = ""
    token: str = ""
    steps: list[StepRecord] = field(default_factory=list)
    own_upgrades: int = 0
    failed_upgrades: int = 0
    refused_actions: int = 0

    @property
    def namespace(self) -> str:
        return f"ws-{self.name}"


def kubectl(*args, check=True, timeout=120):
    return kind.run([kind.tool("kubectl"), "--context", kind.CONTEXT, *args], timeout=timeout, check=check)


def set_up(p: Participant) -> None:
    ns = p.namespace
    kubectl("create", "namespace", ns)
    kubectl("label", "namespace", ns, *(f"pod-security.kubernetes.io/{m}=restricted" for m in ("enforce", "warn", "audit")))
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "liveness-lab-workshop"}, "spec": {"hard": QUOTA}}
    apply_quota = [kind.tool("kubectl"), "--context", kind.CONTEXT, "apply", "-n", ns, "-f", "-"]
    subprocess.run(apply_quota, input=json.dumps(quota), text=True, check=True, capture_output=True)
    kubectl("create", "rolebinding", f"{p.name}-admin", "-n", ns, "--clusterrole=admin", f"--user={p.name}")
    p.helm = helm_binary(p.helm_version)
    # CPU requests of 25m instead of 100m: the scheduler's share only (the limits, 1 core a variant, stay),
    # so that three releases and the laptop's fit on the 2 cores of one kind node: each participant's four
    # pods reserve 100m, and a rollout's surge pod 25m more.
    values = ["--set", "nodePorts.enabled=false", "--set", "locust.workers=1"]
    values += ["--set", "resources.requests.cpu=25m", "--set", "locust.resources.requests.cpu=25m"]
    helm(p, "install", "liveness-lab", str(REPO / "chart"), *values, "--wait", "--timeout", "10m")
    secret = json.loads(kubectl("get", "secret", "liveness-lab-ui", "-n", ns, "-o", "json").stdout)
    p.token = base64.b64decode(secret["data"]["token"]).decode()


def helm(p: Participant, *args, check=True):
    cmd = [p.helm, *args, "--namespace", p.namespace, "--kube-context", kind.CONTEXT, "--kube-as-user", p.name]
    return kind.run(cmd, timeout=900, check=check)


def proxy(p: Participant, token: str | None = None) -> ServiceProxy:
    from kubernetes import config

    api_client = config.new_client_from_config(context=kind.CONTEXT)
    return ServiceProxy(api_client, p.namespace, "liveness-lab-locust-ui", token=token if token is not None else p.token)


def ui(p: Participant, method: str, path: str, form: list | None = None):
    return proxy(p).request(method, path, form=form, timeout=30)


def refused_with(p: Participant, token: str) -> int:
    """The status P's web UI answers a read with TOKEN (ServiceProxy raises on a 401: that is the answer)."""
    try:
        return proxy(p, token=token).request("GET", "/liveness-lab/workshop").status
    except MasterRefused:
        return 401


def wait_worker(p: Participant, wait_s: float = 90) -> None:
    """Until P's master has a worker, as a participant waits for the UI's worker count: a step that changes
    the variants rolls the master and the worker, which may restart once on the way."""
    deadline = time.time() + wait_s
    while time.time() < deadline:
        try:
            if ui(p, "GET", "/stats/requests").json().get("worker_count"):
                return
        except Exception:  # the master being replaced
            pass
        time.sleep(3)


def handlers_ok(p: Participant) -> bool:
    deps = json.loads(kubectl("get", "deployments", "-n", p.namespace, "-o", "json").stdout)["items"]
    kinds = ("httpGet", "tcpSocket", "grpc", "exec")
    for d in deps:
        for c in d["spec"]["template"]["spec"]["containers"]:
            for f in ("livenessProbe", "readinessProbe", "startupProbe"):
                if c.get(f) and sum(k in c[f] for k in kinds) != 1:
                    return False
    return True


def shown_command(p: Participant, step: str) -> list[str]:
    ui(p, "POST", f"/liveness-lab/workshop/steps/{step}/solution")
    state = ui(p, "GET", "/liveness-lab/workshop").json()
    solution = next(s["solution"] for s in state["steps"] if s["name"] == step) or ""
    line = solution.strip().splitlines()[0] if solution.strip() else ""
    if not line.startswith("helm upgrade "):
        return []  # "your release already runs these values"
    args = [str(REPO / "chart") if a == "chart" else a for a in shlex.split(line)]
    return args[1:]


def apply(p: Participant, step: str, how: str, rec: StepRecord) -> None:
    for part in how.split("+"):
        if part == "none":
            continue
        if part in ("skip", "reset"):
            path = f"/liveness-lab/workshop/steps/{step}/skip" if part == "skip" else "/liveness-lab/workshop/reset"
            reply = ui(p, "POST", path)
            if reply.status != 200:
                p.refused_actions += 1
                rec.ok, rec.error = False, f"{part}: {reply.status} {reply.text()[:300]}"
        elif part == "command":
            args = shown_command(p, step)
            if args:
                done = helm(p, *args, check=False)
                p.own_upgrades += 1
                if done.returncode != 0:
                    p.failed_upgrades += 1
                    rec.ok, rec.error = False, f"command: {done.stderr.strip()[-300:]}"
        elif part == "own":
            values = ["--reuse-values", "--set", "latencyMs=500", "--wait", "--timeout", "10m"]
            done = helm(p, "upgrade", "liveness-lab", str(REPO / "chart"), *values, check=False)
            p.own_upgrades += 1
            if done.returncode != 0:
                p.failed_upgrades += 1
                rec.ok, rec.error = False, f"own upgrade: {done.stderr.strip()[-300:]}"


def wait_check(p: Participant, step: str, states: tuple, wait_s: float) -> dict:
    deadline, check = time.time() + wait_s, {}
    while time.time() < deadline:
        try:
            check = ui(p, "GET", "/liveness-lab/workshop").json()["check"]
        except Exception as e:  # a master being replaced: try again
            check = {"state": "unreachable", "reason": str(e)}
        if check.get("step") == step and check.get("state") in states:
            return check
        time.sleep(3)
    return check


def walk(p: Participant, started: float, on_step=None) -> None:
    for step in STEPS:
        rec = StepRecord(step, PLANS[p.name][step])
        p.steps.append(rec)
        t0 = time.time()
        ui(p, "POST", "/stop")
        ui(p, "POST", f"/liveness-lab/workshop/steps/{step}/select")
        try:
            apply(p, step, rec.how, rec)
        except Exception as e:  # an API or proxy error: said, and the walk goes on
            rec.ok, rec.error = False, f"{type(e).__name__}: {e}"
        check = wait_check(p, step, ("waiting", "change", "load"), 600)
        rec.settled_s = round(time.time() - t0, 1)
        rec.handlers_ok = handlers_ok(p)
        if check.get("state") != "waiting":
            rec.verdict, rec.reason = check.get("state", "?"), check.get("reason", "")
            continue
        wait_worker(p)
        swarm_at = time.time()
        ui(p, "POST", "/swarm", form=LOAD)
        check = wait_check(p, step, ("met", "not as predicted", "disturbed"), 180)
        rec.verdict, rec.reason = check.get("state", "?"), check.get("reason", "")
        rec.verdict_s = round(time.time() - swarm_at, 1)
        ui(p, "POST", "/stop")
        why = "" if rec.verdict == "met" else f": {rec.reason[:160]}"
        print(f"{time.time() - started:6.0f} s  {p.name}: {step} ({rec.how}): {rec.verdict} after {rec.verdict_s} s{why}", flush=True)
        if on_step:
            on_step()


class MachineSampler(threading.Thread):
    """`docker stats` of the kind node every 10 s: CPU % (of one core) and memory in MiB."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples, self.stopped = [], False

    def run(self):
        while not self.stopped:
            node = f"{kind.VERSIONS['KIND_CLUSTER_NAME']}-control-plane"
            fmt = "{{.CPUPerc}} {{.MemUsage}}"
            out = subprocess.run(["docker", "stats", "--no-stream", "--format", fmt, node], capture_output=True, text=True).stdout.split()
            if len(out) >= 2:
                mem = out[1]
                mib = float(mem[:-3]) * (1024 if mem.endswith("GiB") else 1) if mem.endswith(("GiB", "MiB")) else None
                self.samples.append((time.time(), float(out[0].rstrip("%")), mib))
            time.sleep(10)


def revisions(p: Participant) -> int:
    history = yaml.safe_load(helm(p, "history", "liveness-lab", "-o", "yaml").stdout) or []
    return max(int(h["revision"]) for h in history)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=3, choices=range(1, len(PLANS) + 1))
    parser.add_argument("--keep", action="store_true", help="keep the namespaces")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / f"room-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    room = [Participant(name, HELMS[name]) for name in list(PLANS)[: args.participants]]
    sampler = MachineSampler()
    started = time.time()
    try:
        for p in room:
            set_up(p)
            print(f"{p.name}: installed in {p.namespace} with {kind.run([p.helm, 'version', '--short']).stdout.strip()}", flush=True)
        before = {p.name: revisions(p) for p in room}
        sampler.start()
        lock = threading.Lock()

        def save_progress():  # after every step: an interrupted walk keeps what it measured
            with lock:
                steps = {p.name: [asdict(s) for s in p.steps] for p in room}
                (args.out / "steps.json").write_text(json.dumps({"seconds": round(time.time() - started), "steps": steps}, indent=2) + "\n")

        walkers = [threading.Thread(target=walk, args=(p, started, save_progress)) for p in room]
        for w in walkers:
            w.start()
        for w in walkers:
            w.join()
        sampler.stopped = True
        # Nothing of one reaches another: each release's revisions are its own Skips, Resets and upgrades,
        # and each token opens only its own release.
        crossed = []
        for p in room:
            for q in room:
                if p is not q and refused_with(q, p.token) != 401:
                    crossed.append(f"{p.name}'s token opened {q.name}'s web UI")
        changes = {p.name: revisions(p) - before[p.name] for p in room}
        table = subprocess.run([str(REPO / "scripts" / "workshop.sh"), "--context", kind.CONTEXT], capture_output=True, text=True)
        cpu = [c for _, c, _ in sampler.samples]
        mem = [m for _, _, m in sampler.samples if m is not None]
        summary = {
            "participants": [asdict(p) | {"token": "(hidden)", "helm": p.helm_version, "revisions": changes[p.name]} for p in room],
            "crossed": crossed,
            "table": table.stdout,
            "seconds": round(time.time() - started),
            "machine": {
                "cpuMeanPct": round(sum(cpu) / len(cpu), 1) if cpu else None,
                "cpuPeakPct": max(cpu, default=None),
                "memPeakMiB": max(mem, default=None),
                "samples": len(cpu),
            },
        }
        (args.out / "room.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(table.stdout)
        print(json.dumps(summary["machine"]), "crossed:", crossed)
        failed = sum(p.failed_upgrades + p.refused_actions for p in room)
        return 0 if not crossed and not failed and all(s.handlers_ok for p in room for s in p.steps) else 1
    finally:
        sampler.stopped = True
        if not args.keep:
            for p in room:
                kubectl("delete", "namespace", p.namespace, "--wait=false", check=False)


if __name__ == "__main__":
    sys.exit(main())
