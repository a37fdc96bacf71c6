"""The Python half of scripts/test-chart.sh: its checks of the chart that read YAML.

Usage: python3 scripts/libexec/chart_checks.py CHECK ARGS...   (CHECK --help for its arguments)
  versions      the image and appVersion the chart pins are the ones in scripts/versions.env
  kind-ports    every nodePort in values.yaml is mapped to the host by kind-config.yaml
  render        what `helm template` made of one chart/ci/*-values.yaml is what those values ask for
  readme-table  chart/README.md's parameter table lists every value with its default; every key commented
  modes         the service's modes (Mode.java) are values.yaml's serviceModes and the variant table's modes
Each prints what it found, then its problems (or one line saying all is well), and exits 1 on a problem.
Needs PyYAML; test-chart.sh installs it.
"""

import argparse
import json
import os
import re
import sys

import yaml

# The service's HTTP port: fixed by the image (Spring Boot's server.port), so not a value
# (liveness-lab.httpPort in chart/templates/_helpers.tpl says the same).
HTTP_PORT = 8080


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def merged(defaults, overrides):
    """defaults with overrides laid over them, maps merged key by key as Helm merges values."""
    out = dict(defaults)
    for key, value in (overrides or {}).items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def fullname(chart_name, release, values):
    """The name prefix of every object, as liveness-lab.fullname in chart/templates/_helpers.tpl makes it."""
    if values.get("fullnameOverride"):
        return values["fullnameOverride"][:63].rstrip("-")
    name = values.get("nameOverride") or chart_name
    return (release if name in release else f"{release}-{name}")[:63].rstrip("-")


def size(text):
    """Bytes of a JVM size (32m) or a Kubernetes quantity (128Mi)."""
    number = text.rstrip("kmgKMGi")
    return int(number) * {"k": 2**10, "m": 2**20, "g": 2**30, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}.get(text[len(number):], 1)


def versions(args):
    """The image and appVersion the chart pins are the ones in versions.env."""
    values = load(f"{args.chart}/values.yaml")
    meta = load(f"{args.chart}/Chart.yaml")
    image, version = args.image, args.version
    problems = []
    if values["image"]["repository"] != image:
        problems.append(f"values.yaml image.repository is {values['image']['repository']!r}, versions.env SERVICE_IMAGE is {image!r}")
    if values["image"]["tag"] != version:
        problems.append(f"values.yaml image.tag is {values['image']['tag']!r}, versions.env SERVICE_VERSION is {version!r}")
    if str(meta["appVersion"]) != version:
        problems.append(f"Chart.yaml appVersion is {meta['appVersion']!r}, versions.env SERVICE_VERSION is {version!r}")
    return problems, f"image {image}:{version} and appVersion {version} match scripts/versions.env"


def kind_ports(args):
    """Every nodePort in values.yaml (variants, Locust) is mapped to the host by kind-config.yaml, on
    127.0.0.1 only."""
    values = load(args.values)
    kind = load(args.kind_config)
    mappings = [m for n in kind["nodes"] for m in n.get("extraPortMappings", [])]
    mapped = {m["containerPort"]: m.get("hostPort") for m in mappings}
    ports = {f"variants.{name}.nodePort": v["nodePort"] for name, v in values["variants"].items()}
    ports["locust.nodePort"] = values["locust"]["nodePort"]
    problems = [f"{key} {port} is not mapped by kind-config.yaml extraPortMappings" for key, port in ports.items() if port not in mapped]
    problems += [f"kind-config.yaml maps {m['containerPort']} on {m.get('listenAddress', 'every address')}, not 127.0.0.1 only"
                 for m in mappings if m.get("listenAddress") != "127.0.0.1"]
    for key, port in ports.items():
        if port in mapped:
            print(f"{key} {port} -> 127.0.0.1:{mapped[port]}")
    return problems, "kind-config.yaml maps every nodePort of values.yaml, on 127.0.0.1"


def render(args):
    """One chart/ci/ file's rendering: the expected objects, restricted pods, probes, environment and
    ports (printed as the resource list). Names come from the release and the values, as the chart makes them."""
    scenario, namespace, image, locust_image = args.scenario, args.namespace, args.image, args.locust_image
    with open(args.rendered) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ci_values = load(args.values) or {}
    chart_defaults = load(f"{args.chart}/values.yaml")
    values = merged(chart_defaults, ci_values)
    prefix = fullname(load(f"{args.chart}/Chart.yaml")["name"], args.release, values)
    manage_namespace = values["namespace"]["manage"]
    problems = []

    def expect(ok, message):
        if not ok:
            problems.append(message)

    # The variants this scenario deploys, from the variant table (values.yaml) with the ci/ file over it.
    variants = sorted(n for n, v in values["variants"].items() if values["allVariants"] or v.get("enabled"))
    components = variants + (["downstream"] if scenario == "downstream" else [])
    want = {("Namespace", namespace)} if manage_namespace else set()
    for c in components:
        want |= {("Deployment", f"{prefix}-{c}"), ("Service", f"{prefix}-{c}")}
    want |= {("Pod", f"{prefix}-test-{v}") for v in variants}
    if values["locust"]["enabled"]:
        locust = f"{prefix}-locust"
        want |= {("ServiceAccount", locust), ("Role", locust), ("RoleBinding", locust),
                 ("Service", locust), ("Service", f"{locust}-ui"),
                 ("Deployment", locust), ("Deployment", f"{locust}-worker")}
    got = {(d["kind"], d["metadata"]["name"]) for d in docs}
    expect(got == want, f"objects: missing {sorted(want - got)}, unexpected {sorted(got - want)}")
    for kind, name in sorted(got):
        print(f"{scenario}: {kind} {name}")

    if manage_namespace:
        ns = next((d for d in docs if d["kind"] == "Namespace"), None)
        expect(ns and ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "restricted",
               "the namespace does not enforce the restricted Pod Security Standard")
        expect(ns and ns["metadata"]["annotations"].get("helm.sh/resource-policy") == "keep",
               "the namespace is not kept on uninstall")

    node_ports = []
    for d in docs:
        kind, name = d["kind"], d["metadata"]["name"]
        labels = d["metadata"]["labels"]
        component = labels.get("app.kubernetes.io/component")
        expect(d["metadata"].get("namespace", namespace) == namespace, f"{kind} {name}: wrong namespace")
        if kind == "Service":
            if component in variants:
                node_ports.append(d["spec"]["ports"][0]["nodePort"])
                expect(d["spec"]["type"] == "NodePort", f"{name}: not a NodePort Service")
            expect(d["spec"]["selector"].get("app.kubernetes.io/component") == component, f"{name}: selector without component")
            continue
        if kind not in ("Deployment", "Pod"):
            continue
        pod = d["spec"]["template"] if kind == "Deployment" else d
        spec = pod["spec"]
        psc = spec["securityContext"]
        expect(psc.get("runAsNonRoot") is True and psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
               f"{name}: pod securityContext is not restricted")
        is_locust = component in ("locust", "locust-worker")
        for c in spec["containers"]:
            csc = c["securityContext"]
            expect(csc.get("allowPrivilegeEscalation") is False and csc.get("readOnlyRootFilesystem") is True
                   and csc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}: container securityContext is not restricted")
            expect(c["image"] == (locust_image if is_locust else image), f"{name}: image {c['image']}")
            expect(c["imagePullPolicy"] == "IfNotPresent", f"{name}: imagePullPolicy {c['imagePullPolicy']}")
            expect("requests" in c["resources"] and "limits" in c["resources"], f"{name}: resources without requests or limits")
        if kind == "Pod":
            expect(d["metadata"]["annotations"].get("helm.sh/hook") == "test", f"{name}: not a helm test hook")
            # The test runs the service's HttpCheck on the image's JRE (no curl in the image), from the
            # classes service/Dockerfile unpacks, against its own variant's Service: /readyz, then /api/work.
            c = spec["containers"][0]
            cargs = c.get("args", [])
            main_class = "io.livenesslab.service.HttpCheck"
            expect(c.get("command") == ["java"], f"{name}: command {c.get('command')}, want ['java']")
            expect("-cp" in cargs and cargs[cargs.index("-cp") + 1:cargs.index("-cp") + 3] == ["/app/BOOT-INF/classes", main_class],
                   f"{name}: args {cargs} do not run {main_class} from /app/BOOT-INF/classes")
            source = os.path.join(os.path.dirname(os.path.abspath(args.chart)), "service/src/main/java", main_class.replace(".", "/") + ".java")
            expect(os.path.isfile(source), f"{name}: runs {main_class}, but there is no {source}")
            base = f"http://{prefix}-{component.removeprefix('test-')}:{HTTP_PORT}"
            urls = cargs[cargs.index(main_class) + 1:] if main_class in cargs else []
            expect(urls == [f"{base}/readyz", f"{base}/api/work?latencyMs=10"], f"{name}: asks {urls}, want {base}/readyz then /api/work?latencyMs=10")
            # A JVM needs its heap capped, and room beyond it (67 MB resident measured with a 32 MiB heap).
            xmx = [a for a in cargs if a.startswith("-Xmx")]
            limit = size(str(c["resources"]["limits"]["memory"]))
            expect(len(xmx) == 1 and size(xmx[0][4:]) + 64 * 2**20 <= limit,
                   f"{name}: heap {xmx} does not leave 64 MiB for the rest of the JVM under the {c['resources']['limits']['memory']} limit")
            continue
        if is_locust:
            env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
            expect(env.get("LIVENESS_LAB_TARGET") == "cluster", f"{name}: Locust does not target the in-cluster Services")
            # Locust's variant list (its user classes) is exactly the deployed variants, with their Services.
            want_list = [{"name": v, "mode": values["variants"][v]["mode"], "nodePort": values["variants"][v]["nodePort"],
                          "url": f"http://{prefix}-{v}:{HTTP_PORT}"} for v in variants]
            got_list = sorted(json.loads(env.get("LIVENESS_LAB_VARIANTS") or "[]"), key=lambda v: v["name"])
            expect(got_list == want_list, f"{name}: LIVENESS_LAB_VARIANTS {got_list}, want {want_list}")
            expect(spec.get("automountServiceAccountToken") is (component == "locust"), f"{name}: only the master may hold an API token")
            continue
        expect(d["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items(), f"{name}: selector does not match its pods")
        expect(set(d["spec"]["selector"]["matchLabels"]) == {"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component"},
               f"{name}: selector is not name + instance + component")
        c = spec["containers"][0]
        env = {e["name"]: e["value"] for e in c["env"]}
        expect(env.get("APP_MODE") == ("reactive" if component == "downstream" else component), f"{name}: APP_MODE {env.get('APP_MODE')}")
        if component != "downstream":
            # A variant's own replicas when it sets them, else the shared replicas.
            own = ((ci_values.get("variants") or {}).get(component) or {}).get("replicas")
            want_replicas = own if own is not None else values["replicas"]
            expect(d["spec"]["replicas"] == want_replicas, f"{name}: replicas {d['spec']['replicas']}, want {want_replicas}")
        expect(c["lifecycle"]["preStop"]["sleep"]["seconds"] < spec["terminationGracePeriodSeconds"], f"{name}: preStop sleep not below the grace period")
        expect(env.get("DEMO_DRAIN") == f"{values['shutdown']['drainSeconds']}s", f"{name}: DEMO_DRAIN {env.get('DEMO_DRAIN')}, want shutdown.drainSeconds")
        expect({"mountPath": "/tmp", "name": "tmp"} in c["volumeMounts"], f"{name}: no writable /tmp")
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            p = c[probe]
            expect(p["timeoutSeconds"] < p["periodSeconds"], f"{name}: {probe} timeout not below its period")
        management = scenario == "management-port"
        expect(("MANAGEMENT_SERVER_PORT" in env) == management, f"{name}: MANAGEMENT_SERVER_PORT is {env.get('MANAGEMENT_SERVER_PORT')}")
        want_paths = ("/actuator/health/liveness", "/actuator/health/readiness") if management else ("/livez", "/readyz")
        # The liveness probe's kind: the variant's probes over the shared ones (the downstream has the shared).
        own_probes = {} if component == "downstream" else values["variants"][component].get("probes") or {}
        kind = merged(values["probes"], own_probes)["liveness"].get("type", "httpGet")
        live = c["livenessProbe"]
        expect(set(live) & {"httpGet", "tcpSocket", "grpc", "exec"} == {kind}, f"{name}: liveness probe {sorted(live)}, want {kind}")
        got_paths = (live.get(kind, {}).get("path", want_paths[0] if kind == "tcpSocket" else None), c["readinessProbe"]["httpGet"]["path"])
        expect(got_paths == want_paths, f"{name}: probe paths {got_paths}, want {want_paths}")
        expect(live.get(kind, {}).get("port") == ("management" if management else "http"), f"{name}: probes on the wrong port")
        if component != "downstream":
            expect(("DEMO_DOWNSTREAM_URL" in env) == (scenario == "downstream"), f"{name}: DEMO_DOWNSTREAM_URL is {env.get('DEMO_DOWNSTREAM_URL')}")
        if scenario == "downstream" and component != "downstream":
            want_url = f"http://{prefix}-downstream:{HTTP_PORT}/api/work"
            expect(env["DEMO_DOWNSTREAM_URL"] == want_url, f"{name}: downstream URL {env['DEMO_DOWNSTREAM_URL']}, want {want_url}")
    expect(len(node_ports) == len(set(node_ports)), f"nodePorts not unique: {node_ports}")
    # Each variant's Service on the nodePort its values give (kind-config.yaml maps those: kind-ports).
    want_ports = sorted(values["variants"][v]["nodePort"] for v in variants)
    expect(sorted(node_ports) == want_ports, f"nodePorts {sorted(node_ports)}, want {want_ports}")
    return problems, f"{scenario}: {len(docs)} objects as expected"


# Values README.md lists without a copy of their default, which a new variant or mode would change:
# `variants` (the table, with a row per key a variant may have) and `serviceModes` (the image's modes).
OWN_ROWS = ("variants", "serviceModes")


def readme_table(args):
    """chart/README.md's `| Parameter | Default | Description |` table lists every leaf of values.yaml (an
    empty map counts as a leaf) with its default, except the variant table, which it lists once as
    `variants` and each key a variant may have in values.schema.json as `variants.<name>.KEY` (so a new
    variant needs no new row); every key in values.yaml is commented."""
    chart = args.chart
    with open(f"{chart}/values.yaml") as f:
        text = f.read()
    values = yaml.safe_load(text)
    with open(f"{chart}/values.schema.json") as f:
        variant = json.load(f)["$defs"]["variant"]
    per_variant_keys = {f"variants.<name>.{k}" for k in variant["properties"]}

    def leaves(node, prefix=""):
        for key, value in node.items():
            path = f"{prefix}{key}"
            if path in OWN_ROWS:
                continue  # the variant table and the image's modes: their own rows below
            if isinstance(value, dict) and value:
                yield from leaves(value, path + ".")
            else:
                yield path, value

    want = dict(leaves(values))
    with open(f"{chart}/README.md") as f:
        readme = f.read().splitlines()
    table = {}
    per_variant = set()
    for line in readme:
        m = re.match(r"^\| `([^`]+)` \| `(.*)` \| (.*) \|$", line)
        if m and not m.group(1).startswith(OWN_ROWS):
            table[m.group(1)] = (m.group(2), m.group(3).strip())
        m = re.match(r"^\| `(variants(\.<name>\.[^`]+)?|serviceModes)` \| [^|]+ \| (.+) \|$", line)
        if m:
            per_variant.add(m.group(1))
    problems = [f"missing from README.md: {k}" for k in want if k not in table]
    problems += [f"in README.md but not in values.yaml: {k}" for k in table if k not in want]
    per_variant_keys.update(OWN_ROWS)
    problems += [f"a key of a variant in values.schema.json, missing from README.md: {k}" for k in sorted(per_variant_keys - per_variant)]
    problems += [f"in README.md but not a key of a variant in values.schema.json: {k}" for k in sorted(per_variant - per_variant_keys)]
    for key, value in want.items():
        if key in table:
            default, description = table[key]
            if default != json.dumps(value):
                problems.append(f"{key}: README default `{default}`, values.yaml has `{json.dumps(value)}`")
            if not description:
                problems.append(f"{key}: no description in README.md")
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"^\s*[A-Za-z0-9_]+:", line) and not previous.lstrip().startswith("#"):
            problems.append(f"values.yaml line {number}: key without a comment above it: {line.strip()}")
        if line.strip():
            previous = line
    return problems, f"README.md lists all {len(want)} values with their defaults, the variant table, serviceModes and the {len(per_variant_keys) - 2} keys of a variant; every key is commented"


def modes(args):
    """The service's modes (Mode.java's constants, lowercased) are values.yaml's `serviceModes`, which the
    templates check each variant's mode against (so Helm names the field when one is misspelt), and the
    modes the variant table runs (a mode without a variant is never shown)."""
    with open(f"{args.chart}/values.yaml") as f:
        values = yaml.safe_load(f)
    listed = values["serviceModes"]
    table = {v["mode"] for v in values["variants"].values()}
    with open(args.mode_java) as f:
        constants = [m.group(1).lower() for m in re.finditer(r"^\t([A-Z][A-Z0-9_]*)\b[(,;]", f.read(), re.M)]
    problems = [] if constants else [f"no constants found in {args.mode_java}"]
    if listed != constants:
        problems.append(f"values.yaml's serviceModes {listed} is not Mode.java's constants {constants}")
    if table != set(constants):
        problems.append(f"the variant table runs the modes {sorted(table)}, Mode.java has {sorted(constants)}")
    return problems, f"Mode.java's {len(constants)} modes are serviceModes and the variant table's modes"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    checks = parser.add_subparsers(dest="check", required=True)
    # CHECK, its function, its positional arguments and its required --options (all strings). render's
    # --image and --locust-image are REPOSITORY:TAG as versions.env pins them; its --scenario is the ci/
    # file's name without -values.yaml.
    for name, run, positionals, options in [
        ("versions", versions, ["chart", "image", "version"], []),
        ("kind-ports", kind_ports, ["values", "kind_config"], []),
        ("render", render, ["values", "rendered"], ["chart", "release", "namespace", "image", "locust-image", "scenario"]),
        ("readme-table", readme_table, ["chart"], []),
        ("modes", modes, ["chart", "mode_java"], []),
    ]:
        p = checks.add_parser(name, help=run.__doc__.splitlines()[0])
        for positional in positionals:
            p.add_argument(positional)
        for option in options:
            p.add_argument(f"--{option}", required=True)
        p.set_defaults(run=run)
    args = parser.parse_args(argv)
    problems, fine = args.run(args)
    print("\n".join(problems) or fine)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
