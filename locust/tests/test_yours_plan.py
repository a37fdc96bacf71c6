"""Your own service's plan (yours/plan.py): from a Deployment and its namespace's Services as the API gives them
(fixtures/deployments.json: the chart's own, as `kubectl get -o json` lists them; the others written here as
a plain manifest would make them), the container measured, where the load goes, the steps and what is refused."""

import copy
import json

import pytest
from conftest import FIXTURES

from liveness_lab.yours import plan


@pytest.fixture
def blocking():
    return copy.deepcopy(json.loads((FIXTURES / "deployments.json").read_text())["items"][0])


def service(name, selector, ports):
    return {"metadata": {"name": name}, "spec": {"selector": selector, "ports": ports}}


def own(deployment):
    """A Service that selects DEPLOYMENT's pods, port 80 to its port named http, and one that does not."""
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    return [
        service("other", {"app": "other"}, [{"port": 9000}]),
        service(
            "mine",
            {"app.kubernetes.io/component": labels["app.kubernetes.io/component"]},
            [{"name": "web", "port": 80, "targetPort": "http"}],
        ),
    ]


def wsgi():
    """A Deployment of another stack, as a plain manifest makes it: no probes, a port with no name."""
    return {
        "metadata": {"name": "orders", "namespace": "shop"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "orders"}},
                "spec": {"containers": [{"name": "sidecar"}, {"name": "app", "ports": [{"containerPort": 8000}]}]},
            }
        },
    }


def test_the_charts_deployment_is_loaded_through_its_own_service_on_the_port_its_probes_ask(blocking):
    t = plan.target("kind-liveness-lab", blocking, own(blocking))
    assert (t.namespace, t.deployment, t.container, t.service, t.port, t.path) == (
        "liveness-lab",
        "liveness-lab-blocking",
        "service",
        "mine",
        80,
        "/",
    )
    assert t.url == "http://mine.liveness-lab.svc:80/"
    assert (t.liveness.period_s, t.liveness.timeout_s, t.liveness.failure_threshold) == (5, 1, 3)
    # A port asked by name or number; one the Service does not have is refused, naming those it has.
    assert plan.target("kind-x", blocking, own(blocking), port="web").port == 80
    with pytest.raises(plan.PlanError, match=r"Service mine has no port 8080 \(it has: web 80\)"):
        plan.target("kind-x", blocking, own(blocking), port=8080)


def test_the_steps_are_held_for_what_a_kill_takes_and_end_at_the_maximum(blocking):
    t = plan.target("kind-liveness-lab", blocking, own(blocking))
    steps = plan.steps(t.liveness, max_users=40)
    # The chart's liveness probe: 3 x 5 s + 1 s, and the margin.
    assert [(s.users, s.hold_s) for s in steps] == [(u, 26) for u in (1, 2, 4, 8, 16, 32, 40)]
    assert [s.users for s in plan.steps(None, 8)] == [1, 2, 4, 8] and plan.steps(None, 8)[0].hold_s == 41  # 3 x 10 + 1 + 10
    with pytest.raises(plan.PlanError, match="--max-users 0: at least 1"):
        plan.steps(t.liveness, 0)
    text = "\n".join(plan.describe(t, steps))
    assert "load:      GET http://mine.liveness-lab.svc:80/ from inside the cluster" in text
    assert "steps:     1, 2, 4, 8, 16, 32, 40 concurrent users, 26 s each" in text and "at most 182 s" in text


def test_a_service_of_another_stack_needs_its_path_and_its_own_service():
    orders = wsgi()
    selects = [service("orders", {"app": "orders"}, [{"port": 8000}])]
    # Nothing says it answers HTTP: refused unless a path is given.
    with pytest.raises(plan.PlanError, match="nothing says its container app answers HTTP .* give the path to load"):
        plan.target("kind-x", orders, selects)
    t = plan.target("kind-x", orders, selects, path="/orders", method="post")
    assert (t.container, t.service, t.port, t.path, t.method, t.liveness) == ("app", "orders", 8000, "/orders", "POST", None)
    assert "none: the steps are held to Kubernetes' defaults" in "\n".join(plan.describe(t, plan.steps(None, 4)))
    with pytest.raises(plan.PlanError, match="--path 'orders': a path starts with /"):
        plan.target("kind-x", orders, selects, path="orders")
    # No Service selects its pods: the load has no way in.
    with pytest.raises(plan.PlanError, match="no Service in namespace shop selects the pods of Deployment orders"):
        plan.target("kind-x", orders, [service("other", {"app": "other"}, [{"port": 80}])], path="/")


def test_only_a_kind_cluster_is_loaded_without_yes():
    assert not plan.needs_yes("kind-liveness-lab") and plan.needs_yes("prod-eu") and plan.needs_yes("minikube")


class Recorded:
    """The API's answers for one namespace, as ClusterApi gives them (API JSON), and its 404 as the client raises it."""

    namespace = "shop"

    def __init__(self, deployments, services=(), pods=()):
        self.found, self.services_, self.pods_, self.asked = {name_of(d): d for d in deployments}, list(services), list(pods), []

    def deployment(self, name):
        if name not in self.found:
            from liveness_lab.demo.release import ApiUnavailable

            missing = Exception("Not Found")
            missing.status = 404
            raise ApiUnavailable(f"reading Deployment {name} in namespace shop: (404) Not Found") from missing
        return self.found[name]

    def deployments(self, selector=None):
        return {"items": list(self.found.values())}

    def services(self, selector=None):
        return {"items": self.services_}

    def pods(self, selector=None):
        self.asked.append(selector)
        return {"items": self.pods_}


def name_of(obj):
    return obj["metadata"]["name"]


def pod(ready):
    return {"metadata": {"name": "orders-1"}, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_the_command_reads_the_deployment_its_services_and_its_ready_pods_and_says_what_is_missing():
    from liveness_lab.yours.__main__ import read

    orders = wsgi()
    orders["spec"]["selector"] = {"matchLabels": {"app": "orders", "tier": "web"}}
    api = Recorded([orders], [service("orders", {"app": "orders"}, [{"port": 8000}])], [pod(True)])
    deployment, services, pods = read(api, "orders")
    assert name_of(deployment) == "orders" and len(services) == 1 and api.asked == ["app=orders,tier=web"]
    with pytest.raises(plan.PlanError, match=r"no Deployment cart in namespace shop \(there: orders\)"):
        read(api, "cart")
    with pytest.raises(plan.PlanError, match=r"Deployment orders has no Ready pod \(1 pod\(s\)\).*get pods -l app=orders,tier=web"):
        read(Recorded([orders], [], [pod(False)]), "orders")
