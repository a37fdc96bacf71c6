#!/usr/bin/env bash
# test-chart.sh: the test suite of the Helm chart in chart/ (issue 4).
#
# Usage:
#   scripts/test-chart.sh            static checks, no cluster needed
#   scripts/test-chart.sh --cluster  on-cluster checks of the installed release (after scripts/cluster-up.sh)
#
# Static checks: the chart's versions against scripts/versions.env and its nodePorts against
# kind-config.yaml; `helm lint --strict`; `helm template` with each chart/ci/*-values.yaml plus
# assertions on what it renders; kube-linter on every rendering (no findings; exceptions justified in
# chart/.kube-linter.yaml); a table of bad values, each of which `helm template` must refuse with a
# message naming the field; chart/README.md's parameter table against values.yaml. On the cluster: a server-side dry-run of the rendered chart, the namespace's Pod Security
# label and a dry-run of it against the running pods, every Deployment rolled out, and `helm test`.
# Ends with "N passed, N failed"; exits 1 when anything failed.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_KUBE_CONTEXT=kind-$KIND_CLUSTER_NAME   kubectl/helm context for --cluster
#   LIVENESS_LAB_NAMESPACE=liveness-lab                 namespace of the release
#   LIVENESS_LAB_RELEASE=liveness-lab                   release name
#   LIVENESS_LAB_HELM_TEST_TIMEOUT=5m                   how long `helm test` and the rollouts may take
# shellcheck source-path=SCRIPTDIR
set -o errexit -o nounset -o pipefail

# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/gobuild.sh
. "$LL_ROOT/scripts/lib/gobuild.sh"
# shellcheck source=lib/tools.sh
. "$LL_ROOT/scripts/lib/tools.sh"

CHART=$LL_ROOT/chart
RELEASE=${LIVENESS_LAB_RELEASE:-liveness-lab}
NAMESPACE=${LIVENESS_LAB_NAMESPACE:-liveness-lab}
KUBE_CONTEXT=${LIVENESS_LAB_KUBE_CONTEXT:-kind-$KIND_CLUSTER_NAME}
TEST_TIMEOUT=${LIVENESS_LAB_HELM_TEST_TIMEOUT:-5m}
PASSED=0
FAILED=0

# Bad values, one a line: `--set` arguments | text the error must contain. Most are refused by
# values.schema.json (message "at '/path': ..."); the rest by the `fail` checks in templates/_validate.tpl
# (liveness-lab.validate), for what JSON Schema cannot express: comparisons between two fields and
# uniqueness across the variants' map.
BAD_VALUES=$(
  cat <<'EOF'
variants.blocking.mode=sleepy                             | at '/variants/blocking/mode': value must be one of 'blocking', 'reactive', 'offloaded', 'virtual'
probes.liveness.periodSeconds=0                           | at '/probes/liveness/periodSeconds': minimum: got 0, want 1
probes.readiness.timeoutSeconds=-1                        | at '/probes/readiness/timeoutSeconds': minimum: got -1, want 1
probes.startup.failureThreshold=0                         | at '/probes/startup/failureThreshold': minimum: got 0, want 1
variants.reactive.probes.liveness.periodSeconds=-5        | at '/variants/reactive/probes/liveness/periodSeconds': minimum: got -5, want 1
probes.liveness.timeoutSeconds=5                          | probes.liveness.timeoutSeconds (5) must be below probes.liveness.periodSeconds (5)
probes.startup.timeoutSeconds=3                           | probes.startup.timeoutSeconds (3) must be below probes.startup.periodSeconds (2)
variants.blocking.probes.readiness.periodSeconds=1        | variants.blocking.probes.readiness.timeoutSeconds (1) must be below variants.blocking.probes.readiness.periodSeconds (1), after merging over the shared probes
variants.blocking.nodePort=29999                          | at '/variants/blocking/nodePort': minimum: got 29,999, want 30,000
variants.virtual.nodePort=32768                           | at '/variants/virtual/nodePort': maximum: got 32,768, want 32,767
variants.reactive.nodePort=30080                          | variants.reactive.nodePort (30080) is already used by variants.blocking.nodePort
allVariants=true,variants.virtual.nodePort=30082          | variants.virtual.nodePort (30082) is already used by variants.offloaded.nodePort
locust.enabled=true,locust.nodePort=30081                 | locust.nodePort (30081) is already used by variants.reactive.nodePort
variants.blocking.replicas=-1                             | at '/variants/blocking/replicas': minimum: got -1, want 0
probes.target=sidecar                                     | at '/probes/target': value must be one of 'main', 'management'
probes.managementPort=8080                                | probes.managementPort (8080) must differ from the HTTP port 8080
probes.liveness.period=5                                  | at '/probes/liveness': additional properties 'period' not allowed
image.tag=latest                                          | image.tag is "latest": pin a version
shutdown.terminationGracePeriodSeconds=10                 | shutdown.terminationGracePeriodSeconds (10) must exceed shutdown.preStopSleepSeconds (10)
variants.Slow_One.enabled=true,variants.Slow_One.mode=reactive,variants.Slow_One.replicas=1,variants.Slow_One.nodePort=30090 | variants.Slow_One: a variant name must be a lowercase DNS label
latency.maxMs=0                                           | at '/latency/maxMs': minimum: got 0, want 1
replicas=-1                                               | at '/replicas': minimum: got -1, want 0
variants.extra.enabled=true,variants.extra.mode=reactive  | at '/variants/extra': missing property 'nodePort'
variants.reactive.probes.managementPort=8080              | variants.reactive.probes.managementPort (8080) must differ from the HTTP port 8080
EOF
)

# check NAME FUNCTION [ARGS...]: runs one check, which fails at its first failing command, with its
# output in $LL_LOGS/chart-NAME.log; counts it and prints ok/FAIL (with the log's last lines on failure);
# never stops the suite.
check() {
  local name=$1 logfile=$LL_LOGS/chart-$1.log rc
  shift
  mkdir -p "$LL_LOGS"
  # A subshell with errexit, outside any `if`: there bash would ignore errexit inside the function.
  set +o errexit
  (
    set -o errexit
    "$@"
  ) >"$logfile" 2>&1
  rc=$?
  set -o errexit
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    log "ok    $name"
  else
    FAILED=$((FAILED + 1))
    log "FAIL  $name (log: $logfile)"
    tail -n 30 "$logfile" | sed 's/^/      /' >&2
  fi
}

# build_kube_linter DIR: kube-linter KUBE_LINTER_VERSION into DIR, built inside its own module with
# its go.mod and go.sum, the exact dependency set of the release (see versions.env for why not
# `go install golang.stackrox.io/kube-linter/...`).
build_kube_linter() {
  local src
  src=$(go mod download -json "$KUBE_LINTER_SOURCE_MODULE@$KUBE_LINTER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || die "could not download $KUBE_LINTER_SOURCE_MODULE@$KUBE_LINTER_VERSION from the Go module proxy" \
    "check 'go env GOPROXY' and the network, or put kube-linter $KUBE_LINTER_VERSION at $LL_CACHE/kube-linter-$KUBE_LINTER_VERSION/bin/"
  env -C "$src" CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X golang.stackrox.io/kube-linter/internal/version.version=$KUBE_LINTER_VERSION" \
    -o "$1/kube-linter" ./cmd/kube-linter
}

# ensure_kube_linter: kube-linter KUBE_LINTER_VERSION, cached under $LL_CACHE and linked into .tools/bin.
ensure_kube_linter() {
  cached_tool kube-linter "$KUBE_LINTER_VERSION" build_kube_linter
  [ "$(kube-linter version 2>/dev/null)" = "$KUBE_LINTER_VERSION" ] ||
    die "kube-linter on PATH is not $KUBE_LINTER_VERSION" "remove $LL_TOOLS/bin/kube-linter and run again"
}

# ensure_python_yaml: python3 with PyYAML, for the render assertions and the README table check.
ensure_python_yaml() {
  need_cmd python3 "install python3 (Debian: apt-get install python3)"
  python3 -c 'import yaml' 2>/dev/null && return 0
  log "installing python3-yaml"
  apt_install python3-yaml || die "PyYAML is missing" "apt-get install python3-yaml, or pip install pyyaml"
}

# render NAME VALUES-FILE: helm template into $RENDERED/NAME.yaml, for the pinned Kubernetes version.
render() {
  helm template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" \
    --values "$2" >"$RENDERED/$1.yaml"
}

# --- static checks ---

# versions: the image and appVersion the chart pins are the ones in versions.env.
check_versions() {
  python3 - "$CHART" "$SERVICE_IMAGE" "$SERVICE_VERSION" <<'EOF'
import sys, yaml
chart, image, version = sys.argv[1:]
values = yaml.safe_load(open(f"{chart}/values.yaml"))
meta = yaml.safe_load(open(f"{chart}/Chart.yaml"))
problems = []
if values["image"]["repository"] != image:
    problems.append(f"values.yaml image.repository is {values['image']['repository']!r}, versions.env SERVICE_IMAGE is {image!r}")
if values["image"]["tag"] != version:
    problems.append(f"values.yaml image.tag is {values['image']['tag']!r}, versions.env SERVICE_VERSION is {version!r}")
if str(meta["appVersion"]) != version:
    problems.append(f"Chart.yaml appVersion is {meta['appVersion']!r}, versions.env SERVICE_VERSION is {version!r}")
print("\n".join(problems) or f"image {image}:{version} and appVersion {version} match scripts/versions.env")
sys.exit(1 if problems else 0)
EOF
}

# kind_ports: every nodePort in values.yaml (variants, Locust) is mapped to the host by kind-config.yaml,
# on 127.0.0.1 only.
check_kind_ports() {
  python3 - "$CHART/values.yaml" "$LL_ROOT/kind-config.yaml" <<'EOF'
import sys, yaml
values = yaml.safe_load(open(sys.argv[1]))
kind = yaml.safe_load(open(sys.argv[2]))
mappings = [m for n in kind["nodes"] for m in n.get("extraPortMappings", [])]
mapped = {m["containerPort"]: m.get("hostPort") for m in mappings}
ports = {f"variants.{name}.nodePort": v["nodePort"] for name, v in values["variants"].items()}
ports["locust.nodePort"] = values["locust"]["nodePort"]
problems = [f"{key} {port} is not mapped by kind-config.yaml extraPortMappings" for key, port in ports.items() if port not in mapped]
problems += [f"kind-config.yaml maps {m['containerPort']} on {m.get('listenAddress', 'every address')}, not 127.0.0.1 only" for m in mappings if m.get("listenAddress") != "127.0.0.1"]
for key, port in ports.items():
    if port in mapped:
        print(f"{key} {port} -> 127.0.0.1:{mapped[port]}")
print("\n".join(problems) or "kind-config.yaml maps every nodePort of values.yaml, on 127.0.0.1")
sys.exit(1 if problems else 0)
EOF
}

check_lint() {
  local values
  helm lint --strict "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION"
  for values in "$CHART"/ci/*-values.yaml; do
    helm lint --strict "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" --values "$values"
  done
}

# render_and_assert VALUES-FILE: renders one ci/ file and checks what came out: the expected objects,
# restricted pods, probes, environment and ports (printed as the resource list).
render_and_assert() {
  local name
  name=$(basename "$1" -values.yaml)
  render "$name" "$1"
  python3 - "$RENDERED/$name.yaml" "$name" "$SERVICE_IMAGE:$SERVICE_VERSION" "$NAMESPACE" "$1" "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG" "$CHART/values.yaml" <<'EOF'
import json, os, sys, yaml
path, scenario, image, namespace, values_file, locust_image, chart_values = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
ci_values = yaml.safe_load(open(values_file)) or {}
chart_defaults = yaml.safe_load(open(chart_values))
manage_namespace = (ci_values.get("namespace") or {}).get("manage", False)
problems = []
def expect(ok, message):
    if not ok:
        problems.append(message)

def size(text):
    """Bytes of a JVM size (32m) or a Kubernetes quantity (128Mi)."""
    number = text.rstrip("kmgKMGi")
    return int(number) * {"k": 2**10, "m": 2**20, "g": 2**30, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}.get(text[len(number):], 1)

# The variants this scenario deploys, from the variant table (values.yaml) with the ci/ file over it.
ci_variants = ci_values.get("variants") or {}
table = {n: {**(chart_defaults["variants"].get(n) or {}), **(ci_variants.get(n) or {})} for n in {**chart_defaults["variants"], **ci_variants}}
all_on = ci_values.get("allVariants", chart_defaults["allVariants"])
variants = sorted(n for n, v in table.items() if all_on or v.get("enabled"))
components = variants + (["downstream"] if scenario == "downstream" else [])
want = {("Namespace", namespace)} if manage_namespace else set()
for c in components:
    want |= {("Deployment", f"liveness-lab-{c}"), ("Service", f"liveness-lab-{c}")}
want |= {("Pod", f"liveness-lab-test-{v}") for v in variants}
if (ci_values.get("locust") or {}).get("enabled", chart_defaults["locust"]["enabled"]):
    want |= {("ServiceAccount", "liveness-lab-locust"), ("Role", "liveness-lab-locust"), ("RoleBinding", "liveness-lab-locust"),
             ("Service", "liveness-lab-locust"), ("Service", "liveness-lab-locust-ui"),
             ("Deployment", "liveness-lab-locust"), ("Deployment", "liveness-lab-locust-worker")}
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
    locust = component in ("locust", "locust-worker")
    for c in spec["containers"]:
        csc = c["securityContext"]
        expect(csc.get("allowPrivilegeEscalation") is False and csc.get("readOnlyRootFilesystem") is True
               and csc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}: container securityContext is not restricted")
        expect(c["image"] == (locust_image if locust else image), f"{name}: image {c['image']}")
        expect(c["imagePullPolicy"] == "IfNotPresent", f"{name}: imagePullPolicy {c['imagePullPolicy']}")
        expect("requests" in c["resources"] and "limits" in c["resources"], f"{name}: resources without requests or limits")
    if kind == "Pod":
        expect(d["metadata"]["annotations"].get("helm.sh/hook") == "test", f"{name}: not a helm test hook")
        # The test runs the service's HttpCheck on the image's JRE (no curl in the image), from the
        # classes service/Dockerfile unpacks, against its own variant's Service: /readyz, then /api/work.
        c = spec["containers"][0]
        args = c.get("args", [])
        main_class = "io.livenesslab.service.HttpCheck"
        expect(c.get("command") == ["java"], f"{name}: command {c.get('command')}, want ['java']")
        expect("-cp" in args and args[args.index("-cp") + 1:args.index("-cp") + 3] == ["/app/BOOT-INF/classes", main_class],
               f"{name}: args {args} do not run {main_class} from /app/BOOT-INF/classes")
        source = os.path.join(os.path.dirname(os.path.dirname(chart_values)), "service/src/main/java", main_class.replace(".", "/") + ".java")
        expect(os.path.isfile(source), f"{name}: runs {main_class}, but there is no {source}")
        base = f"http://liveness-lab-{component.removeprefix('test-')}:8080"
        urls = args[args.index(main_class) + 1:] if main_class in args else []
        expect(urls == [f"{base}/readyz", f"{base}/api/work?latencyMs=10"], f"{name}: asks {urls}, want {base}/readyz then /api/work?latencyMs=10")
        # A JVM needs its heap capped, and room beyond it (67 MB resident measured with a 32 MiB heap).
        xmx = [a for a in args if a.startswith("-Xmx")]
        limit = size(str(c["resources"]["limits"]["memory"]))
        expect(len(xmx) == 1 and size(xmx[0][4:]) + 64 * 2**20 <= limit,
               f"{name}: heap {xmx} does not leave 64 MiB for the rest of the JVM under the {c['resources']['limits']['memory']} limit")
        continue
    if locust:
        env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
        expect(env.get("LIVENESS_LAB_TARGET") == "cluster", f"{name}: Locust does not target the in-cluster Services")
        # Locust's variant list (its user classes) is exactly the deployed variants, with their Services.
        want_list = [{"name": v, "mode": table[v]["mode"], "nodePort": table[v]["nodePort"], "url": f"http://liveness-lab-{v}:8080"} for v in variants]
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
        want_replicas = own if own is not None else ci_values.get("replicas", chart_defaults["replicas"])
        expect(d["spec"]["replicas"] == want_replicas, f"{name}: replicas {d['spec']['replicas']}, want {want_replicas}")
    expect(c["lifecycle"]["preStop"]["sleep"]["seconds"] < spec["terminationGracePeriodSeconds"], f"{name}: preStop sleep not below the grace period")
    expect({"mountPath": "/tmp", "name": "tmp"} in c["volumeMounts"], f"{name}: no writable /tmp")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        p = c[probe]
        expect(p["timeoutSeconds"] < p["periodSeconds"], f"{name}: {probe} timeout not below its period")
    management = scenario == "management-port"
    expect(("MANAGEMENT_SERVER_PORT" in env) == management, f"{name}: MANAGEMENT_SERVER_PORT is {env.get('MANAGEMENT_SERVER_PORT')}")
    want_paths = ("/actuator/health/liveness", "/actuator/health/readiness") if management else ("/livez", "/readyz")
    got_paths = (c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"])
    expect(got_paths == want_paths, f"{name}: probe paths {got_paths}, want {want_paths}")
    expect(c["livenessProbe"]["httpGet"]["port"] == ("management" if management else "http"), f"{name}: probes on the wrong port")
    if component != "downstream":
        expect(("DEMO_DOWNSTREAM_URL" in env) == (scenario == "downstream"), f"{name}: DEMO_DOWNSTREAM_URL is {env.get('DEMO_DOWNSTREAM_URL')}")
    if scenario == "downstream" and component != "downstream":
        expect(env["DEMO_DOWNSTREAM_URL"].startswith("http://liveness-lab-downstream:8080/api/work?latencyMs="), f"{name}: downstream URL {env['DEMO_DOWNSTREAM_URL']}")
expect(len(node_ports) == len(set(node_ports)), f"nodePorts not unique: {node_ports}")
want_ports = sorted(table[v]["nodePort"] for v in variants)
expect(sorted(node_ports) == want_ports, f"nodePorts {sorted(node_ports)}, want {want_ports}")
print("\n".join(problems) or f"{scenario}: {len(docs)} objects as expected")
sys.exit(1 if problems else 0)
EOF
}

check_kube_linter() {
  kube-linter version
  kube-linter lint --config "$CHART/.kube-linter.yaml" "$RENDERED"
}

# bad_values: every row of BAD_VALUES is refused, with its message.
check_bad_values() {
  local set_args expected output failures=0
  while IFS='|' read -r set_args expected; do
    set_args=$(echo "$set_args" | xargs)
    expected=$(echo "$expected" | sed 's/^ *//; s/ *$//')
    if output=$(helm template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" \
      --set "$set_args" 2>&1 >/dev/null); then
      echo "ACCEPTED  --set $set_args (want it refused with: $expected)"
      failures=$((failures + 1))
    elif ! grep -qF -- "$expected" <<<"$output"; then
      echo "WRONG MESSAGE  --set $set_args"
      echo "  want: $expected"
      echo "  got:  $output"
      failures=$((failures + 1))
    else
      printf 'refused  %-60s %s\n' "$set_args" "$(grep -F -- "$expected" <<<"$output" | head -n 1 | sed 's/^Error: execution error at ([^)]*): //; s/^- //')"
    fi
  done <<<"$BAD_VALUES"
  [ "$failures" = 0 ]
}

# readme_table: chart/README.md's `| Parameter | Default | Description |` table lists every leaf of
# values.yaml (an empty map counts as a leaf) with its default, and each optional key of a variant in
# values.schema.json as `variants.<name>.KEY`; every key in values.yaml is commented.
check_readme_table() {
  python3 - "$CHART" <<'EOF'
import json, re, sys, yaml
chart = sys.argv[1]
text = open(f"{chart}/values.yaml").read()
values = yaml.safe_load(text)
variant = json.load(open(f"{chart}/values.schema.json"))["$defs"]["variant"]
optional = {f"variants.<name>.{k}" for k in variant["properties"] if k not in variant["required"]}

def leaves(node, prefix=""):
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from leaves(value, path + ".")
        else:
            yield path, value

want = dict(leaves(values))
table = {}
for line in open(f"{chart}/README.md"):
    m = re.match(r"^\| `([^`]+)` \| `(.*)` \| (.*) \|$", line.rstrip("\n"))
    if m:
        table[m.group(1)] = (m.group(2), m.group(3).strip())
per_variant = set()
for line in open(f"{chart}/README.md"):
    m = re.match(r"^\| `(variants\.<name>\.[^`]+)` \| [^|]+ \| (.+) \|$", line.rstrip("\n"))
    if m:
        per_variant.add(m.group(1))
problems = [f"missing from README.md: {k}" for k in want if k not in table]
problems += [f"in README.md but not in values.yaml: {k}" for k in table if k not in want]
problems += [f"optional in values.schema.json, missing from README.md: {k}" for k in sorted(optional - per_variant)]
problems += [f"in README.md but not an optional key of a variant in values.schema.json: {k}" for k in sorted(per_variant - optional)]
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
print("\n".join(problems) or f"README.md lists all {len(want)} values with their defaults and {len(optional)} optional keys of a variant; every key is commented")
sys.exit(1 if problems else 0)
EOF
}

static_checks() {
  local values
  RENDERED=$(mktemp -d)
  trap 'rm -rf "$RENDERED"' EXIT
  ensure_helm
  ensure_kube_linter
  ensure_python_yaml
  log "helm $(helm version --template '{{.Version}}'), kube-linter $KUBE_LINTER_VERSION, chart $CHART"
  check versions check_versions
  if [ -f "$LL_ROOT/kind-config.yaml" ]; then check kind-ports check_kind_ports; else log "skip  kind-ports (no kind-config.yaml yet)"; fi
  check helm-lint check_lint
  for values in "$CHART"/ci/*-values.yaml; do
    check "template-$(basename "$values" -values.yaml)" render_and_assert "$values"
  done
  check kube-linter check_kube_linter
  check bad-values check_bad_values
  check readme-table check_readme_table
}

# --- on-cluster checks (scripts/test-chart.sh --cluster) ---

kube() { kubectl --context "$KUBE_CONTEXT" "$@"; }
helm_here() { helm --kube-context "$KUBE_CONTEXT" --namespace "$NAMESPACE" "$@"; }

# server_dry_run: the API server accepts every object the chart renders with the release's own values
# (schemas, defaulting, admission webhooks, Pod Security warnings), and Helm's own server-side dry-run of
# an upgrade (lookups, ownership of existing objects) passes.
check_server_dry_run() {
  local values=$RENDERED/release-values.yaml
  helm_here get values "$RELEASE" --output yaml >"$values"
  # --skip-tests: the test pods of an earlier `helm test` are still there, and a Pod's spec is immutable.
  helm template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" \
    --values "$values" --skip-tests >"$RENDERED/release.yaml"
  kube apply --server-side --force-conflicts --field-manager=test-chart --dry-run=server \
    --namespace "$NAMESPACE" --filename "$RENDERED/release.yaml"
  helm_here upgrade "$RELEASE" "$CHART" --values "$values" --take-ownership --dry-run=server >/dev/null
}

# pod_security: the namespace enforces `restricted`, and no running pod violates it. The API server
# checks every pod of a namespace only when its enforce level or version changes, so the dry-run names
# an explicit version (the namespace says `latest`): its warnings list the violating pods.
check_pod_security() {
  local level version warnings
  level=$(kube get namespace "$NAMESPACE" -o 'jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}')
  echo "namespace $NAMESPACE enforces: ${level:-nothing}"
  [ "$level" = restricted ] || return 1
  version=$(echo "$KUBERNETES_VERSION" | cut -d. -f1,2)
  warnings=$(kube label --dry-run=server --overwrite namespace "$NAMESPACE" \
    pod-security.kubernetes.io/enforce=restricted "pod-security.kubernetes.io/enforce-version=$version" 2>&1 >/dev/null)
  echo "${warnings:-no pod violates restricted:$version}"
  [ -z "$warnings" ]
}

check_rollout() {
  local deployment
  for deployment in $(kube -n "$NAMESPACE" get deployment -l "app.kubernetes.io/instance=$RELEASE" -o name); do
    kube -n "$NAMESPACE" rollout status "$deployment" --timeout "$TEST_TIMEOUT"
  done
}

check_helm_test() {
  helm_here test "$RELEASE" --logs --timeout "$TEST_TIMEOUT"
}

# cluster_diagnostics: what a reader needs when an on-cluster check failed.
cluster_diagnostics() {
  echo "--- pods, events and logs of release $RELEASE ---" >&2
  kube -n "$NAMESPACE" get pods -o wide >&2 || true
  kube -n "$NAMESPACE" get events --sort-by=.lastTimestamp 2>&1 | tail -n 30 >&2 || true
  kube -n "$NAMESPACE" logs -l "app.kubernetes.io/instance=$RELEASE" --all-containers --tail=20 --prefix >&2 || true
}

cluster_checks() {
  RENDERED=$(mktemp -d)
  trap 'rm -rf "$RENDERED"' EXIT
  ensure_helm
  need_cmd kubectl "run scripts/cluster-up.sh, which installs kubectl $KUBERNETES_VERSION into $LL_TOOLS/bin"
  kube get --raw /readyz >/dev/null 2>&1 ||
    die "no cluster answers on context $KUBE_CONTEXT" "run scripts/cluster-up.sh (or set LIVENESS_LAB_KUBE_CONTEXT)"
  helm_here status "$RELEASE" >/dev/null 2>&1 ||
    die "release $RELEASE is not installed in namespace $NAMESPACE" "run scripts/cluster-up.sh, which installs the chart"
  check server-dry-run check_server_dry_run
  check pod-security check_pod_security
  check rollout check_rollout
  check helm-test check_helm_test
  [ "$FAILED" = 0 ] || cluster_diagnostics
}

main() {
  case ${1:-} in
    "") static_checks ;;
    --cluster) cluster_checks ;;
    -h | --help) awk 'NR > 1 && /^#/ && !/shellcheck/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" && return 0 ;;
    *) die "unknown argument '$1'" "run '$0 --help'" ;;
  esac
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ]
}

main "$@"
