#!/usr/bin/env bash
# test-chart.sh: the test suite of the Helm chart in chart/.
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
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/checks.sh"
use_tools_bin

CHART=$LL_ROOT/chart
RELEASE=${LIVENESS_LAB_RELEASE:-liveness-lab}
NAMESPACE=${LIVENESS_LAB_NAMESPACE:-liveness-lab}
KUBE_CONTEXT=${LIVENESS_LAB_KUBE_CONTEXT:-kind-$KIND_CLUSTER_NAME}
TEST_TIMEOUT=${LIVENESS_LAB_HELM_TEST_TIMEOUT:-5m}
# Each check's output goes to its own log, shown when it fails (scripts/lib/checks.sh).
CHECK_LOGS=$LL_LOGS/chart

# Bad values, one a line: `--set` arguments | text the error must contain. Most are refused by
# values.schema.json (message "at '/path': ..."); the rest by the `fail` checks in templates/_validate.tpl
# (liveness-lab.validate), for what JSON Schema cannot express: comparisons between two fields and
# uniqueness across the variants' map.
BAD_VALUES=$(
  cat <<'EOF'
variants.blocking.mode=sleepy                             | variants.blocking.mode (sleepy) is not a mode of the service image: one of blocking, reactive,
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
variants.blocking.probes.liveness.type=exec              | at '/variants/blocking/probes/liveness/type': value must be one of 'httpGet', 'tcpSocket'
probes.readiness.type=tcpSocket                           | at '/probes/readiness': additional properties 'type' not allowed
image.tag=latest                                          | image.tag is "latest": pin a version
shutdown.terminationGracePeriodSeconds=10                 | shutdown.terminationGracePeriodSeconds (10) must exceed shutdown.preStopSleepSeconds (10) + shutdown.drainSeconds (5) + latencyMs (1 s) = 16
shutdown.drainSeconds=30                                  | shutdown.terminationGracePeriodSeconds (40) must exceed shutdown.preStopSleepSeconds (10) + shutdown.drainSeconds (30) + latencyMs (1 s) = 41
latencyMs=30001                                           | shutdown.terminationGracePeriodSeconds (40) must exceed shutdown.preStopSleepSeconds (10) + shutdown.drainSeconds (5) + latencyMs (31 s) = 46
shutdown.drainSeconds=-1                                  | at '/shutdown/drainSeconds': minimum: got -1, want 0
variants.Slow_One.enabled=true,variants.Slow_One.mode=reactive,variants.Slow_One.replicas=1,variants.Slow_One.nodePort=30090 | variants.Slow_One: a variant name must be a lowercase DNS label
latencyMaxMs=0                                            | at '/latencyMaxMs': minimum: got 0, want 1
latencyMs=60001                                           | latencyMs (60001) must not exceed latencyMaxMs (60000)
latencyMaxMs=500                                          | latencyMs (1000) must not exceed latencyMaxMs (500)
replicas=-1                                               | at '/replicas': minimum: got -1, want 0
variants.extra.enabled=true,variants.extra.mode=reactive  | at '/variants/extra': missing property 'nodePort'
variants.reactive.probes.managementPort=8080              | variants.reactive.probes.managementPort (8080) must differ from the HTTP port 8080
EOF
)

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

# chart_checks CHECK ARGS...: one of the checks that read YAML, in scripts/libexec/chart_checks.py.
chart_checks() { python3 "$LL_ROOT/scripts/libexec/chart_checks.py" "$@"; }

# render NAME VALUES-FILE: helm template into $RENDERED/NAME.yaml, for the pinned Kubernetes version.
render() {
  helm template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" \
    --values "$2" >"$RENDERED/$1.yaml"
}

# --- static checks ---

# versions: the image and appVersion the chart pins are the ones in versions.env.
check_versions() {
  chart_checks versions "$CHART" "$SERVICE_IMAGE" "$SERVICE_VERSION"
}

# kind_ports: every nodePort in values.yaml (variants, Locust) is mapped to the host by kind-config.yaml.
check_kind_ports() {
  chart_checks kind-ports "$CHART/values.yaml" "$LL_ROOT/kind-config.yaml"
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
  chart_checks render --chart "$CHART" --release "$RELEASE" --namespace "$NAMESPACE" --scenario "$name" \
    --image "$SERVICE_IMAGE:$SERVICE_VERSION" --locust-image "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG" "$1" "$RENDERED/$name.yaml"
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

# readme_table: chart/README.md's `| Parameter | Default | Description |` table against values.yaml and
# values.schema.json (scripts/libexec/chart_checks.py readme-table says how).
check_readme_table() {
  chart_checks readme-table "$CHART"
}

# render_notes [helm flags]: NOTES.txt as `helm install` prints it, with no cluster. Helm 3's
# `install --dry-run=client` still asks the API server for its version (helm/helm#13144, fixed in Helm 4)
# and `helm template` leaves NOTES.txt out, so a copy of the chart renders it as a named template inside
# a one-key YAML document.
render_notes() {
  local copy
  copy=$(mktemp -d "$RENDERED/notes.XXXXXX")
  cp -R "$CHART/." "$copy"
  {
    printf '{{- define "liveness-lab.notes-under-test" }}'
    cat "$CHART/templates/NOTES.txt"
    printf '{{- end }}\nnotes: {{ include "liveness-lab.notes-under-test" . | toJson }}\n'
  } >"$copy/templates/notes-under-test.yaml"
  rm "$copy/templates/NOTES.txt"
  helm template "$RELEASE" "$copy" --namespace "$NAMESPACE" --show-only templates/notes-under-test.yaml "$@" |
    python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin)["notes"])'
}

# notes: NOTES.txt gives each variant its own liveness settings and restart window, its overrides
# merged: a variant with a 10 s period is restarted 21-31 s after it blocks, the others 11-16 s.
check_notes() {
  local notes
  notes=$(render_notes --set variants.reactive.probes.liveness.periodSeconds=10 --set variants.reactive.probes.target=management)
  printf '%s\n' "$notes"
  grep -Eq '^  blocking +main port, every 5 s, timeout 1 s, 3 failures: restarted 11-16 s after it blocks$' <<<"$notes"
  grep -Eq '^  reactive +management port, every 10 s, timeout 1 s, 3 failures: restarted 21-31 s after it blocks$' <<<"$notes"
}

# modes: the service's modes (Mode.java) are values.yaml's serviceModes and the modes the variant table runs.
check_modes() {
  chart_checks modes "$CHART" "$LL_ROOT/service/src/main/java/io/livenesslab/service/Mode.java"
}

static_checks() {
  local values
  RENDERED=$(mktemp -d)
  trap 'rm -rf "$RENDERED"' EXIT
  ensure_helm
  ensure_kube_linter
  ensure_python_yaml
  log "helm $(helm version --template '{{.Version}}'), kube-linter $KUBE_LINTER_VERSION, chart $CHART"
  check versions check_versions || true
  check kind-ports check_kind_ports || true
  check helm-lint check_lint || true
  for values in "$CHART"/ci/*-values.yaml; do
    check "template-$(basename "$values" -values.yaml)" render_and_assert "$values" || true
  done
  check kube-linter check_kube_linter || true
  check bad-values check_bad_values || true
  check readme-table check_readme_table || true
  check notes check_notes || true
  check modes check_modes || true
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
  check server-dry-run check_server_dry_run || true
  check pod-security check_pod_security || true
  check rollout check_rollout || true
  check helm-test check_helm_test || true
  [ "$FAILED" = 0 ] || cluster_diagnostics
}

main() {
  case ${1:-} in
    "") static_checks ;;
    --cluster) cluster_checks ;;
    -h | --help) ll_usage; return 0 ;;
    *) die "unknown argument '$1'" "run '$0 --help'" ;;
  esac
  checks_summary 0
}

main "$@"
