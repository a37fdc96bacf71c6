"""Skip, Reset, the shown commands and a participant's own `helm upgrade` in any order on the live release
(issue 51): after each, every upgrade has succeeded, every probe of every Deployment has one handler, the
Deployments are what Helm renders from its stored values, and the step's check says the release runs the
step's values ("waiting" for a swarm once it has settled, never "change").

The sequences the issue found broken, each run with the pinned Helm (4) as the participant's helm; with
LIVENESS_LAB_E2E_PARTICIPANT_HELM=v3.22.0 (any Helm release, built once with Go into the cache) the first and
the third again with that one (the master's helm, in the Locust image, is the pin either way: the
participant's Helm 3 upgrades a release the master's Helm 4 last wrote). scripts/test.sh runs the pin only:
the Helm 3 run (3 minutes, and a Go build of Helm 3 on a fresh machine) passed on 2026-11-28.

1. Skip on the TCP probe step, then the raised-timeout step's shown command (it failed: "may not specify
   more than 1 handler type");
2. the management-port step's shown command, Reset, the reactive step's shown command;
3. Skip on the virtual step, then an own `helm upgrade --reuse-values --set latencyMs=500`: the step's
   check still holds and the latency is the participant's.

No swarm: the check's judging of kills is test_9's. The release is put back as it was found at the end
(the values it had, through Helm). About 5 minutes with Helm 4, 3 with Helm 3 (a rollout of the blocking
Deployment per upgrade that waits, and the master's 20 s of settling before each check).
"""

from __future__ import annotations

import json
import os
import shlex
import time

import pytest
import yaml
from conftest import web_post, web_read

from liveness_lab.base.probes import PROBE_FIELDS, PROBE_KINDS

from . import kind

CHART = kind.REPO / "chart"


def participant_helm(version: str) -> str:
    """The helm a participant runs: the tree's pinned one, or Helm VERSION built once into the cache (the
    same build cluster-up would make: scripts/lib/tools.sh's build_helm)."""
    if version == kind.VERSIONS["HELM_VERSION"]:
        return kind.tool("helm")
    script = f'. scripts/lib/common.sh && . scripts/lib/tools.sh && d="$LL_CACHE/helm-{version}/bin" && '
    script += f'{{ [ -x "$d/helm" ] || {{ ensure_go && build_helm "$d" {version}; }}; }} && echo "$d/helm"'
    done = kind.run(["bash", "-c", f"cd {shlex.quote(str(kind.REPO))} && {script}"], timeout=900)
    return done.stdout.strip().splitlines()[-1]


def deployments() -> list[dict]:
    return kind.kubectl_json("get", "deployments", "-n", kind.NAMESPACE, "-l", kind.RELEASE_SELECTOR)["items"]


def handlers() -> dict[str, list[str]]:
    """Per Deployment and probe, the handlers it has: one each, always."""
    found = {}
    for d in deployments():
        for c in d["spec"]["template"]["spec"]["containers"]:
            for field in PROBE_FIELDS.values():
                if c.get(field):
                    found[f"{d['metadata']['name']}/{c['name']}/{field}"] = [k for k in PROBE_KINDS if k in c[field]]
    return found


def assert_one_handler_each():
    several = {k: v for k, v in handlers().items() if len(v) != 1}
    assert several == {}, f"probes with more or fewer than one handler: {several}"


def shown_command(web_ui: str, step: str, helm: str) -> list[str]:
    """The step's shown command as the tab gives it now, ready to run: the chart is the repository's and
    the kube context kind's."""
    assert web_post(web_ui, f"/liveness-lab/workshop/steps/{step}/solution") == 200
    solution = next(s["solution"] for s in web_read(web_ui, "/liveness-lab/workshop")["steps"] if s["name"] == step)
    line = solution.strip().splitlines()[0]
    assert line.startswith("helm upgrade "), solution
    args = [str(CHART) if a == "chart" else a for a in shlex.split(line)]
    return [helm, *args[1:], "--kube-context", kind.CONTEXT, "--timeout", "5m"]


def check_of(web_ui: str, step: str, wait_s: float = 240) -> dict:
    """STEP selected and the master's check of it once the release has settled (the master checks every 3 s
    and says "settling" until every pod has been Ready for 20 s)."""
    assert web_post(web_ui, f"/liveness-lab/workshop/steps/{step}/select") == 200
    deadline, check = time.time() + wait_s, None
    while time.time() < deadline:
        check = web_read(web_ui, "/liveness-lab/workshop")["check"]
        if check["step"] == step and check["state"] not in ("settling", "unknown"):
            return check
        time.sleep(2)
    raise AssertionError(f"no settled check of {step} within {wait_s:.0f} s: {check}")


def assert_runs(web_ui: str, step: str):
    check = check_of(web_ui, step)
    assert check["state"] == "waiting", f"{step}: {check['state']}: {check['reason']}"
    assert_one_handler_each()


def upgrade(web_ui: str, command: list[str], check: bool = True):
    """COMMAND (a `helm upgrade`) run, then the master waited for: an upgrade that changes its settings
    rolls it out, and the next request could meet the old one closing (kind.wait_master)."""
    kind.run(command, timeout=600, check=check)
    kind.wait_master(web_ui, web_read)


def blocking_env() -> dict:
    d = next(d for d in deployments() if d["metadata"]["name"] == f"{kind.RELEASE}-blocking")
    return {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}


PARTICIPANT_HELMS = [kind.VERSIONS["HELM_VERSION"], *filter(None, [os.environ.get("LIVENESS_LAB_E2E_PARTICIPANT_HELM")])]


@pytest.mark.parametrize("helm_version", PARTICIPANT_HELMS)
def test_skip_reset_shown_commands_and_own_upgrades_compose_in_any_order(web_ui, helm_version, tmp_path):
    helm = participant_helm(helm_version)
    print(f"participant's helm: {kind.run([helm, 'version', '--short']).stdout.strip()}")
    values_before = kind.helm_values()
    (tmp_path / "before.yaml").write_text(yaml.safe_dump(values_before))
    web_post(web_ui, "/stop")
    pinned = helm_version == kind.VERSIONS["HELM_VERSION"]
    try:
        # 1. Skip on the TCP probe, then the next step's shown command.
        assert web_post(web_ui, "/liveness-lab/workshop/steps/tcp-probe/skip") == 200
        assert_one_handler_each()
        command = shown_command(web_ui, "raised-timeout", helm)
        print("$", " ".join(command))
        upgrade(web_ui, command)
        assert_runs(web_ui, "raised-timeout")
        blocking = handlers()[f"{kind.RELEASE}-blocking/service/livenessProbe"]
        assert blocking == ["httpGet"], blocking

        # 2. A shown command, Reset, the next shown command.
        if pinned:
            upgrade(web_ui, shown_command(web_ui, "management-port", helm))
            assert_one_handler_each()
            assert web_post(web_ui, "/liveness-lab/workshop/reset") == 200
            kind.wait_master(web_ui, web_read)  # Reset's upgrade rolls the master out too
            assert_one_handler_each()
            upgrade(web_ui, shown_command(web_ui, "reactive", helm))
            assert_runs(web_ui, "reactive")

        # 3. Skip, then the participant's own upgrade of a value no step sets.
        assert web_post(web_ui, "/liveness-lab/workshop/steps/virtual/skip") == 200
        own = [helm, "upgrade", kind.RELEASE, str(CHART), "-n", kind.NAMESPACE, "--kube-context", kind.CONTEXT]
        upgrade(web_ui, [*own, "--reuse-values", "--set", "latencyMs=500", "--wait", "--timeout", "5m"])
        assert_runs(web_ui, "virtual")
        assert blocking_env()["APP_MODE"] == "virtual" and blocking_env()["DEMO_LATENCY_MS"] == "500"
        assert web_post(web_ui, "/liveness-lab/workshop/reset") == 200
        kind.wait_master(web_ui, web_read)
        assert_runs(web_ui, "baseline")
        assert kind.helm_values() == values_before | {"latencyMs": 500}, json.dumps(kind.helm_values())
    finally:
        # The release as it was found, through Helm.
        upgrade(
            web_ui,
            [kind.tool("helm"), "upgrade", kind.RELEASE, str(CHART), "-n", kind.NAMESPACE, "--kube-context", kind.CONTEXT]
            + ["--reset-values", "-f", str(tmp_path / "before.yaml"), "--wait", "--timeout", "5m"],
            check=False,
        )
        web_post(web_ui, "/liveness-lab/workshop/steps/baseline/select")
        kind.wait_settled("after the sequences")
    assert kind.helm_values() == values_before
