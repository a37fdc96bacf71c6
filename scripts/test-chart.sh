#!/usr/bin/env bash
# test-chart.sh: the test suite of the Helm chart in chart/.
#
# Usage:
#   scripts/test-chart.sh            static checks, no cluster needed
#   scripts/test-chart.sh --cluster  on-cluster checks of the installed release (after scripts/cluster-up.sh)
#
# The chart's tests are in chart/tests/. Static checks, each with the chart ecosystem's own tool where one
# exists: helm-unittest runs the suites chart/tests/*_test.yaml (what each template renders for given values, NOTES.txt, and every refused value with
# the message naming its field); then chart/tests/test_chart.py (pytest): chart-testing's `ct lint`,
# kube-linter on the rendering of every chart/ci/*-values.yaml, helm-docs' parameter table against the
# committed chart/README.md, the images, appVersion and modes against versions.env and Mode.java, every
# NodePort mapped in kind-config.yaml, and two releases in two namespaces that must not collide.
# On the cluster (chart/tests/test_chart_cluster.py): a server-side dry-run of the rendered chart, the
# namespace's Pod Security label and a dry-run of it against the running pods, every Deployment rolled
# out, and `helm test`.
# Exits 1 when anything failed.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_KUBE_CONTEXT=kind-$KIND_CLUSTER_NAME   kubectl/helm context for --cluster
#   LIVENESS_LAB_NAMESPACE=liveness-lab                 namespace of the release
#   LIVENESS_LAB_RELEASE=liveness-lab                   release name
#   LIVENESS_LAB_HELM_TEST_TIMEOUT=5m                   how long `helm test` and each rollout may take
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/venv.sh"
use_tools_bin

CHART=$LL_ROOT/chart
RELEASE=${LIVENESS_LAB_RELEASE:-$LL_RELEASE}
NAMESPACE=${LIVENESS_LAB_NAMESPACE:-$LL_NAMESPACE}
KUBE_CONTEXT=${LIVENESS_LAB_KUBE_CONTEXT:-$LL_KUBE_CONTEXT}

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

# helm_unittest ARGS...: helm-unittest as the Helm plugin it is, from its cache folder (tools.py), so the
# user's own Helm plugins are neither used nor changed.
helm_unittest() {
  HELM_PLUGINS=$(dirname "$(resolve_link "$LL_TOOLS/bin/helm-unittest")")/../plugins helm unittest "$@"
}

static_checks() {
  local rc=0 out
  ensure_helm
  ensure_helm_unittest
  ensure_helm_docs
  ensure_ct
  ensure_ct_python
  ensure_kube_linter
  ensure_locust_venv dev
  log "helm $(helm version --template '{{.Version}}'), helm-unittest $HELM_UNITTEST_VERSION, ct $CHART_TESTING_VERSION, helm-docs $HELM_DOCS_VERSION, kube-linter $KUBE_LINTER_VERSION, chart $CHART"
  mkdir -p "${LIVENESS_LAB_JUNIT:=$(mktemp -d)}"
  # helm-unittest's own totals are also printed as "summary:" lines, which scripts/test.sh shows.
  out=$(helm_unittest --strict -t JUnit -o "$LIVENESS_LAB_JUNIT/helm-unittest.xml" "$CHART" 2>&1) || rc=$?
  printf '%s\n' "$out"
  sed -nE 's/^(Charts|Test Suites|Tests|Snapshot|Time): */summary: helm-unittest \1: /p' <<<"$out"
  CT_CONFIG_DIR=$(dirname "$(resolve_link "$LL_TOOLS/bin/ct")")/../etc "$LL_VENV/bin/python" -m pytest -v -p no:cacheprovider \
    --junitxml "$LIVENESS_LAB_JUNIT/pytest.xml" "$CHART/tests/test_chart.py" || rc=$?
  return "$rc"
}

# cluster_checks: chart/tests/test_chart_cluster.py on the installed release; when it fails, the pods,
# events and logs a reader needs.
cluster_checks() {
  local rc=0
  ensure_helm
  ensure_locust_venv dev
  need_cmd kubectl "run scripts/cluster-up.sh, which installs kubectl $KUBERNETES_VERSION into $LL_TOOLS/bin"
  kubectl --context "$KUBE_CONTEXT" get --raw /readyz >/dev/null 2>&1 ||
    die "no cluster answers on context $KUBE_CONTEXT" "run scripts/cluster-up.sh (or set LIVENESS_LAB_KUBE_CONTEXT)"
  helm --kube-context "$KUBE_CONTEXT" --namespace "$NAMESPACE" status "$RELEASE" >/dev/null 2>&1 ||
    die "release $RELEASE is not installed in namespace $NAMESPACE" "run scripts/cluster-up.sh, which installs the chart"
  export LIVENESS_LAB_KUBE_CONTEXT=$KUBE_CONTEXT LIVENESS_LAB_NAMESPACE=$NAMESPACE LIVENESS_LAB_RELEASE=$RELEASE
  "$LL_VENV/bin/python" -m pytest -v -p no:cacheprovider ${LIVENESS_LAB_JUNIT:+--junitxml "$LIVENESS_LAB_JUNIT/pytest-cluster.xml"} \
    "$CHART/tests/test_chart_cluster.py" || rc=$?
  [ "$rc" = 0 ] && return 0
  echo "--- pods, events and logs of release $RELEASE ---" >&2
  kubectl --context "$KUBE_CONTEXT" -n "$NAMESPACE" get pods -o wide >&2 || true
  kubectl --context "$KUBE_CONTEXT" -n "$NAMESPACE" get events --sort-by=.lastTimestamp 2>&1 | tail -n 30 >&2 || true
  kubectl --context "$KUBE_CONTEXT" -n "$NAMESPACE" logs -l "app.kubernetes.io/instance=$RELEASE" --all-containers --tail=20 --prefix >&2 || true
  return "$rc"
}

main() {
  case ${1:-} in
    "") static_checks ;;
    --cluster) cluster_checks ;;
    -h | --help) ll_usage; return 0 ;;
    *) die "unknown argument '$1'" "run '$0 --help'" ;;
  esac
}

main "$@"
