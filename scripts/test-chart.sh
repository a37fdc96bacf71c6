#!/usr/bin/env bash
# test-chart.sh: the test suite of the Helm chart in chart/.
#
# Usage:
#   scripts/test-chart.sh            static checks, no cluster needed
#   scripts/test-chart.sh --cluster  on-cluster checks of the installed release (after scripts/cluster-up.sh)
#
# Static checks, each with the chart ecosystem's own tool where one exists: helm-unittest runs the suites
# in chart/tests/ (what each template renders for given values, NOTES.txt, and every refused value with
# the message naming its field); chart-testing's `ct lint` (yamllint, the Chart.yaml schema, `helm lint
# --strict` with each chart/ci/*-values.yaml); kube-linter on the rendering of every ci/ file (no
# findings; exceptions justified in chart/.kube-linter.yaml); helm-docs regenerates chart/README.md's
# parameter table into a copy, which must equal the committed one. Small shell checks tie the chart to
# files outside it: versions.env, kind-config.yaml and the service's Mode.java and HttpCheck.java. One
# more renders two releases into two namespaces and checks they cannot collide in one cluster
# (scripts/libexec/release_collisions.py), and that it catches each kind of collision planted.
# On the cluster: a server-side dry-run of the rendered chart, the namespace's Pod Security
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

# build_kube_linter DIR: kube-linter KUBE_LINTER_VERSION into DIR, built inside its own module (see
# versions.env for why not `go install golang.stackrox.io/kube-linter/...`).
build_kube_linter() {
  go_build_in_module "$1/kube-linter" "$KUBE_LINTER_SOURCE_MODULE" "$KUBE_LINTER_VERSION" ./cmd/kube-linter \
    "-X golang.stackrox.io/kube-linter/internal/version.version=$KUBE_LINTER_VERSION"
}

# ensure_kube_linter: kube-linter KUBE_LINTER_VERSION, cached under $LL_CACHE and linked into .tools/bin.
ensure_kube_linter() {
  cached_tool kube-linter "$KUBE_LINTER_VERSION" build_kube_linter
  [ "$(kube-linter version 2>/dev/null)" = "$KUBE_LINTER_VERSION" ] ||
    die "kube-linter on PATH is not $KUBE_LINTER_VERSION" "remove $LL_TOOLS/bin/kube-linter and run again"
}

# ensure_ct_python: the Python tools `ct lint` calls (Yamale, yamllint) at their pinned versions, in a
# venv under $LL_CACHE, first on PATH.
ensure_ct_python() {
  local venv=$LL_CACHE/ct-python-yamale-$YAMALE_VERSION-yamllint-$YAMLLINT_VERSION
  if [ ! -x "$venv/bin/yamale" ] || [ ! -x "$venv/bin/yamllint" ]; then
    need_cmd python3 "install python3 (Debian: apt-get install python3)"
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv"; } ||
      die "could not make a Python venv for ct lint" "apt-get install python3-venv"
    step ct-python "$venv/bin/pip" install --disable-pip-version-check "yamale==$YAMALE_VERSION" "yamllint==$YAMLLINT_VERSION"
  fi
  PATH=$venv/bin:$PATH
}

# helm_unittest ARGS...: helm-unittest as the Helm plugin it is, from its cache folder (tools.sh), so the
# user's own Helm plugins are neither used nor changed.
helm_unittest() {
  HELM_PLUGINS=$(dirname "$(resolve_link "$LL_TOOLS/bin/helm-unittest")")/../plugins helm unittest "$@"
}

# render NAME VALUES-FILE: helm template into $RENDERED/NAME.yaml, for the pinned Kubernetes version.
render() {
  helm template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBERNETES_VERSION" \
    --values "$2" >"$RENDERED/$1.yaml"
}

# --- static checks ---

# helm-unittest: every suite in chart/tests/ (what they cover: chart/README.md, "Tests"). Its summary is
# also printed as "summary:" lines, which scripts/test.sh shows.
check_unittest() {
  helm_unittest --strict "$CHART"
}

# ct-lint: yamllint and Yamale on Chart.yaml and the values files, then `helm lint --strict` with each
# chart/ci/*-values.yaml, for the pinned Kubernetes version. Offline: --charts names the chart, so no
# git remote is asked which charts changed; no version-increment check (no target branch to compare
# with), no maintainer check (it asks GitHub whether each maintainer is an account).
check_ct_lint() {
  local etc
  etc=$(dirname "$(resolve_link "$LL_TOOLS/bin/ct")")/../etc
  (cd "$LL_ROOT" && CT_CONFIG_DIR=$etc ct lint --charts chart --validate-maintainers=false --check-version-increment=false \
    --helm-lint-extra-args "--strict --namespace $NAMESPACE --kube-version $KUBERNETES_VERSION")
}

# kube-linter: the rendering of every chart/ci/*-values.yaml.
check_kube_linter() {
  local values
  # `|| return 1`: check() runs this in a `|| true` list, where errexit does not apply.
  for values in "$CHART"/ci/*-values.yaml; do render "$(basename "$values" -values.yaml)" "$values" || return 1; done
  kube-linter version
  kube-linter lint --config "$CHART/.kube-linter.yaml" "$RENDERED"
}

# helm-docs: the committed chart/README.md is what helm-docs makes of README.md.gotmpl, values.yaml and
# values.schema.json (a copy is regenerated and compared). The template fails on a key without a
# `# --` comment; helm-docs then only logs a warning, so its log is read too.
check_helm_docs() {
  local copy=$RENDERED/helm-docs/chart output
  mkdir -p "$copy"
  cp -R "$CHART/." "$copy"
  helm-docs --version
  output=$(helm-docs --chart-search-root "$copy" --template-files README.md.gotmpl --sort-values-order file 2>&1)
  printf '%s\n' "$output"
  if grep -qE 'level=(warning|error|fatal)' <<<"$output"; then return 1; fi
  diff -u "$CHART/README.md" "$copy/README.md" ||
    { echo "chart/README.md is not what helm-docs generates: run helm-docs (the command above, on chart/) and commit the result"; return 1; }
}

# versions: the service and Locust images the chart renders, and its appVersion, are scripts/versions.env's.
check_versions() {
  local out want
  out=$(helm template "$RELEASE" "$CHART" --set locust.enabled=true \
    --show-only templates/deployment.yaml --show-only templates/locust-master-deployment.yaml | sed -n 's/^ *image: //p' | sort -u)
  want=$(printf '%s\n' "$SERVICE_IMAGE:$SERVICE_VERSION" "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG" | sort)
  echo "images: $(echo "$out" | tr '\n' ' ')"
  [ "$out" = "$want" ] || { echo "want: $(echo "$want" | tr '\n' ' ') (scripts/versions.env)"; return 1; }
  out=$(helm show chart "$CHART" | sed -n 's/^appVersion: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p')
  echo "appVersion: $out"
  [ "$out" = "$SERVICE_VERSION" ] || { echo "want appVersion $SERVICE_VERSION (SERVICE_VERSION)"; return 1; }
}

# kind-ports: every nodePort the chart can render (every variant, Locust) is mapped by kind-config.yaml,
# and every mapping listens on 127.0.0.1 only.
check_kind_ports() {
  local port mapped listen unmapped=0
  mapped=$(sed -n 's/^ *- containerPort: \([0-9]*\).*/\1/p' "$LL_ROOT/kind-config.yaml")
  listen=$(grep -c '^ *listenAddress: "127.0.0.1"$' "$LL_ROOT/kind-config.yaml" || true)
  [ "$listen" = "$(echo "$mapped" | wc -l | tr -d ' ')" ] ||
    { echo "kind-config.yaml: $listen of its port mappings listen on 127.0.0.1 only, want all"; unmapped=1; }
  for port in $(helm template "$RELEASE" "$CHART" --set allVariants=true,locust.enabled=true \
    --show-only templates/service.yaml --show-only templates/locust-ui-service.yaml | sed -n 's/^ *nodePort: //p'); do
    if grep -qx "$port" <<<"$mapped"; then echo "nodePort $port: mapped"; else echo "nodePort $port: not in kind-config.yaml extraPortMappings"; unmapped=1; fi
  done
  [ "$unmapped" = 0 ]
}

# service: the service's modes (Mode.java's constants, lowercased) are values.yaml's serviceModes, which
# the templates check each variant's mode against, and the modes the variant table runs; the class the
# `helm test` pods run exists.
check_service() {
  local java=$LL_ROOT/service/src/main/java/io/livenesslab/service constants listed table
  constants=$(sed -n 's/^\t\([A-Z][A-Z0-9_]*\)[(,;].*/\1/p' "$java/Mode.java" | tr '[:upper:]' '[:lower:]' | paste -sd, -)
  listed=$(helm show values "$CHART" | sed -n 's/^serviceModes: \[\(.*\)\]$/\1/p' | tr -d ' ')
  table=$(helm show values "$CHART" | sed -n 's/^    mode: //p' | sort | paste -sd, -)
  echo "Mode.java: $constants; serviceModes: $listed; variant table: $table"
  [ -n "$constants" ] && [ "$listed" = "$constants" ] &&
    [ "$table" = "$(echo "$constants" | tr , '\n' | sort | paste -sd, -)" ] || return 1
  helm template "$RELEASE" "$CHART" --show-only templates/tests/test-api-work.yaml | grep -q '^ *- io.livenesslab.service.HttpCheck$' ||
    { echo "the helm test pods do not run io.livenesslab.service.HttpCheck"; return 1; }
  [ -f "$java/HttpCheck.java" ] || { echo "the helm test pods run HttpCheck, but there is no $java/HttpCheck.java"; return 1; }
}

# render_release RELEASE FILE [HELM-ARGS...]: the chart as RELEASE in namespace ws-RELEASE into FILE.
render_release() {
  local release=$1 file=$2
  shift 2
  helm template "$release" "$CHART" --namespace "ws-$release" --kube-version "$KUBERNETES_VERSION" "$@" >"$file"
}

# collisions RELEASE-A FILE-A RELEASE-B FILE-B: scripts/libexec/release_collisions.py on two renderings
# (its python3 is ct lint's venv's, which has PyYAML).
collisions() {
  python3 "$LL_ROOT/scripts/libexec/release_collisions.py" "$1" "ws-$1" "$2" "$3" "ws-$3" "$4"
}

# expect_collision WHAT PATTERN RELEASE-A FILE-A RELEASE-B FILE-B: the checker fails on a planted defect,
# naming it (a finding matching PATTERN).
expect_collision() {
  local what=$1 pattern=$2 out
  shift 2
  if out=$(collisions "$@"); then echo "missed $what: $out"; return 1; fi
  grep -E "$pattern" <<<"$out" >/dev/null || { echo "$what: no finding matches '$pattern': $out"; return 1; }
  echo "planted $what: caught ($(grep -cE "$pattern" <<<"$out") finding(s))"
}

# two-releases: two releases in two namespaces of one cluster (a workshop's participants, docs/workshop.md)
# do not collide: no shared cluster-scoped name, nothing namespaced outside its namespace, RBAC within
# it, no shared nodePort (release_collisions.py says what each means). Rendered with the shared-cluster
# values and every template on (all variants, the downstream, Locust and its RBAC, the managed Namespace,
# the test pods). Then the checker must catch what it is for, each planted in otherwise clean renderings:
# the fixed NodePorts of the kind defaults, one fullnameOverride for both, a ClusterRoleBinding, and an
# object moved to another namespace.
check_two_releases() {
  # Each step says `|| return 1`: check() runs this in a `|| true` list, where errexit does not apply.
  local shared=(--values "$CHART/ci/shared-cluster-values.yaml" --set allVariants=true,downstream.enabled=true,locust.enabled=true,namespace.manage=true)
  local r
  for r in alice bob; do render_release "$r" "$RENDERED/$r.yaml" "${shared[@]}" || return 1; done
  collisions alice "$RENDERED/alice.yaml" bob "$RENDERED/bob.yaml" || return 1
  for r in alice bob; do
    render_release "$r" "$RENDERED/$r-nodeports.yaml" || return 1
    render_release "$r" "$RENDERED/$r-fullname.yaml" "${shared[@]}" --set fullnameOverride=lab || return 1
    { cat "$RENDERED/$r.yaml"; printf '%s\n' '---' 'apiVersion: rbac.authorization.k8s.io/v1' 'kind: ClusterRoleBinding' \
      'metadata: {name: liveness-lab-locust}' 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}'; } \
      >"$RENDERED/$r-clusterrbac.yaml"
  done
  sed 's/^  namespace: ws-bob$/  namespace: default/' "$RENDERED/bob.yaml" >"$RENDERED/bob-elsewhere.yaml"
  expect_collision "NodePorts of the kind defaults" '^both: nodePort 30080$' \
    alice "$RENDERED/alice-nodeports.yaml" bob "$RENDERED/bob-nodeports.yaml" || return 1
  expect_collision "fullnameOverride=lab in both" "name does not start with the release name 'bob'" \
    alice "$RENDERED/alice-fullname.yaml" bob "$RENDERED/bob-fullname.yaml" || return 1
  expect_collision "a ClusterRoleBinding" '^both: cluster-scoped ClusterRoleBinding/liveness-lab-locust$' \
    alice "$RENDERED/alice-clusterrbac.yaml" bob "$RENDERED/bob-clusterrbac.yaml" || return 1
  expect_collision "objects in namespace default" "namespace 'default', not the release's 'ws-bob'" \
    alice "$RENDERED/alice.yaml" bob "$RENDERED/bob-elsewhere.yaml"
}

static_checks() {
  RENDERED=$(mktemp -d)
  trap 'rm -rf "$RENDERED"' EXIT
  ensure_helm
  ensure_helm_unittest
  ensure_helm_docs
  ensure_ct
  ensure_ct_python
  ensure_kube_linter
  log "helm $(helm version --template '{{.Version}}'), helm-unittest $HELM_UNITTEST_VERSION, ct $CHART_TESTING_VERSION, helm-docs $HELM_DOCS_VERSION, kube-linter $KUBE_LINTER_VERSION, chart $CHART"
  check helm-unittest check_unittest || true
  sed -nE 's/^(Charts|Test Suites|Tests|Snapshot|Time): */summary: helm-unittest \1: /p' "$CHECK_LOGS/helm-unittest.log"
  check ct-lint check_ct_lint || true
  check kube-linter check_kube_linter || true
  check helm-docs check_helm_docs || true
  check versions check_versions || true
  check kind-ports check_kind_ports || true
  check service check_service || true
  check two-releases check_two_releases || true
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
