"""Your own service (issue 68), from the keyboard (from locust/, in the repository's .venv):

    python -m liveness_lab.yours plan --namespace NS --deployment NAME [--context C] [--path /p] [--port P]
                                      [--method GET] [--max-users 64]

reads the Deployment, its pods and its namespace's Services through the API (read only: get and list) and
prints the plan of the measurement: the container measured and its probes, where the load would go, the
steps and how long they take, and whether a run there would need --yes (every cluster but kind's). It
creates nothing. The load and its recording are issue 68's next part; this command has no other action yet.

Exit codes: 0 the plan printed; 3 what the plan cannot be made of (no such Deployment, no Ready pod, no
Service selecting its pods, nothing that answers HTTP without --path, the API not answering), said with what
to give instead.
"""

import argparse
import sys

from liveness_lab.base.exits import SETUP
from liveness_lab.demo.release import ApiUnavailable, ClusterApi

from .plan import MAX_USERS, PlanError, describe, needs_yes, steps, target


def selector_of(deployment: dict) -> str:
    """The Deployment's pod selector as a label selector ("a=b,c=d"); matchLabels only."""
    labels = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def read(api, name: str) -> tuple[dict, list[dict], list[dict]]:
    """The Deployment NAME, its namespace's Services and its pods, as API JSON, through API (ClusterApi)."""
    try:
        deployment = api.deployment(name)
    except ApiUnavailable as e:
        if getattr(e.__cause__, "status", None) != 404:
            raise
        there = sorted(d["metadata"]["name"] for d in api.deployments(selector="").get("items", []))
        raise PlanError(f"no Deployment {name} in namespace {api.namespace} (there: {', '.join(there) or 'none'})") from e
    services = api.services(selector="").get("items", [])
    pods = api.pods(selector=selector_of(deployment)).get("items", [])
    if not any(ready(p) for p in pods):
        raise PlanError(
            f"Deployment {name} has no Ready pod ({len(pods)} pod(s)): the measurement starts from a service that answers; "
            f"see kubectl -n {api.namespace} get pods -l {selector_of(deployment)}"
        )
    return deployment, services, pods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m liveness_lab.yours", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="print the plan of the measurement of a Deployment; create nothing")
    p.add_argument("--context", default=None, help="kubeconfig context (default: LIVENESS_LAB_KUBE_CONTEXT, else kind-liveness-lab)")
    p.add_argument("--namespace", required=True)
    p.add_argument("--deployment", required=True)
    p.add_argument("--path", default=None, help="the path to load (default /; required where nothing says it answers HTTP)")
    p.add_argument("--port", default=None, help="the Service's port, a number or a name (default: the one its probes ask)")
    p.add_argument("--method", default="GET")
    p.add_argument("--max-users", type=int, default=MAX_USERS)
    args = parser.parse_args(argv)
    port = int(args.port) if args.port and args.port.isdigit() else args.port
    try:
        api = ClusterApi(args.context, args.namespace)
        deployment, services, pods = read(api, args.deployment)
        t = target(api.context, deployment, services, path=args.path, port=port, method=args.method)
        plan = steps(t.liveness, args.max_users)
    except (PlanError, ApiUnavailable) as e:
        print(f"error: {e}", file=sys.stderr)
        return SETUP
    print("\n".join(describe(t, plan)))
    print(f"pods:      {sum(ready(p) for p in pods)} of {len(pods)} Ready")
    if needs_yes(t.context):
        print(f"a run on {t.context} (not a kind cluster) will need --yes: the load goes to someone's service")
    return 0


if __name__ == "__main__":
    sys.exit(main())
