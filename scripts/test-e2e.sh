#!/usr/bin/env bash
# End-to-end test on a real kind cluster: scripts/cluster-up.sh, then the node and every kube-system pod
# Ready and the NodePorts answering on 127.0.0.1, the chart's on-cluster checks and `helm test`, the
# lab's two quick scenarios (each prediction must hold; their baseline is the scripted demo) and a demo
# right after `helm upgrade --set latencyMs=500` (it must run at 500 ms and pass), or a shortened
# scripted demo whose verdict must pass, the Locust Pods and Live tabs against the live cluster, then
# scripts/cluster-down.sh (also when a check fails). Prints the diagnostics a person needs on failure.
#
# Usage: scripts/test-e2e.sh [--keep] [--no-lab] [--help] [-- CLUSTER-UP-ARGS...]
#   --keep     leave the cluster up afterwards
#   --no-lab   a shortened scripted demo instead of the lab's two quick scenarios (baseline and tcp
#              probe, scripts/lab.sh --quick, about 7 minutes): the registry suite's e2e
#
# Environment: the LIVENESS_LAB_* settings of scripts/cluster-up.sh pass through, plus
#   LIVENESS_LAB_E2E_WAIT=300s   how long kube-system pods may take to become Ready
# Ends with "N passed, N failed"; exits non-zero when any check fails.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/checks.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/cluster.sh"
use_tools_bin

KEEP=0
LAB=1
UP_ARGS=()
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --keep) KEEP=1 ;;
      --no-lab) LAB=0 ;;
      -h | --help) ll_usage; exit 0 ;;
      --) shift; UP_ARGS=("$@"); return 0 ;;
      *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
    esac
    shift
  done
}


cluster_up() { "$LL_ROOT/scripts/cluster-up.sh" "${UP_ARGS[@]}"; }
cluster_down() { "$LL_ROOT/scripts/cluster-down.sh"; }

node_ready() {
  [ "$(kube get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | sort -u)" = True ]
}

kube_system_ready() {
  kube -n kube-system wait --for=condition=Ready pod --all --timeout="${LIVENESS_LAB_E2E_WAIT:-300s}"
}

# http_answers PORT [PATH]: anything answers HTTP on 127.0.0.1:PORT within a minute (the network
# rule: loopback only). A minute, because a Service answers "connection refused" while its only pod
# is not Ready, which a freshly started JVM may briefly be.
http_answers() {
  local code waited=0
  while :; do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$1${2:-/}" || true)
    [ "$code" = 000 ] || break
    [ "$waited" -lt 60 ] || break
    sleep 2
    waited=$((waited + 2))
  done
  echo "127.0.0.1:$1${2:-/} -> HTTP $code after ${waited}s"
  [ "$code" != 000 ]
}

# host_port NODEPORT: the host port kind-config.yaml maps a NodePort to (the Locust UI's differs).
host_port() {
  awk -v np="$1" '/containerPort:/ { c = $3 } /hostPort:/ && c == np { print $2; exit }' "$LL_ROOT/kind-config.yaml"
}

# A NodePort in front of CoreDNS's health endpoint: needs no image beyond the cluster's own.
probe_service() {
  cat <<EOF
apiVersion: v1
kind: Service
metadata:
  name: e2e-nodeport-probe
  namespace: kube-system
spec:
  type: NodePort
  selector:
    k8s-app: kube-dns
  ports:
    - name: health
      port: 8080
      targetPort: 8080
      nodePort: 30080
EOF
}

# nodeport_answers: every NodePort of the chart where it is installed, else a CoreDNS probe Service.
nodeport_answers() {
  local nodeport port
  if helm status "$LL_RELEASE" --namespace "$LL_NAMESPACE" --kube-context "$LL_KUBE_CONTEXT" >/dev/null 2>&1; then
    for nodeport in $(kube -n "$LL_NAMESPACE" get services -o jsonpath='{.items[*].spec.ports[*].nodePort}'); do
      port=$(host_port "$nodeport")
      [ -n "$port" ] || { echo "NodePort $nodeport is not mapped in kind-config.yaml"; return 1; }
      http_answers "$port" || return 1
    done
    return 0
  fi
  probe_service | kube apply -f - >/dev/null
  # kube-proxy programs the NodePort within a few seconds.
  http_answers 30080 /health || { kube -n kube-system delete service e2e-nodeport-probe >/dev/null; return 1; }
  kube -n kube-system delete service e2e-nodeport-probe >/dev/null
}

diagnostics() {
  echo "--- diagnostics ---"
  kube get nodes -o wide || true
  kube get pods -A -o wide || true
  kube get events -A --sort-by=.lastTimestamp | tail -n 30 || true
  local pod
  for pod in $(kube get pods -A --no-headers 2>/dev/null |
    awk '{ split($3, r, "/") } r[1] != r[2] && $4 != "Completed" { print $1 "/" $2 }'); do
    echo "--- pod $pod (not ready) ---"
    kube -n "${pod%%/*}" describe pod "${pod##*/}" | tail -n 25 || true
    kube -n "${pod%%/*}" logs "${pod##*/}" --all-containers --tail=20 || true
  done
  echo "step logs: $LL_LOGS"
}

on_exit() {
  local rc=$?
  # Subshells (background jobs) inherit this trap; only the script itself reports and cleans up.
  [ "$BASHPID" = "$$" ] || return 0
  trap - EXIT
  if [ "$FAILED" -gt 0 ] || [ "$rc" -ne 0 ]; then diagnostics || true; fi
  if [ "$KEEP" = 0 ]; then check "cluster-down.sh" cluster_down || true; fi
  checks_summary "$rc" || exit 1
}

main() {
  parse_args "$@"
  trap on_exit EXIT
  trap 'exit 130' INT TERM
  check "cluster-up.sh ${UP_ARGS[*]}" cluster_up || exit 1
  ensure_kubectl "$KIND_CLUSTER_NAME-control-plane" >/dev/null 2>&1
  check "node Ready" node_ready || true
  check "every kube-system pod Ready" kube_system_ready || true
  check "a NodePort answers on 127.0.0.1" nodeport_answers || true
  check "chart on the cluster: dry-run, Pod Security, helm test" "$LL_ROOT/scripts/test-chart.sh" --cluster || true
  check "a second cluster-up.sh changes nothing, restarts no pod" rerun_changes_nothing || true
  if [ "$LAB" = 1 ]; then
    check "lab --quick: baseline and tcp probe, every prediction held" quick_lab || true
  else
    check "scripted demo, shortened: verdict PASS" short_demo || true
  fi
  check "Pods and Live tabs of the in-cluster Locust show the restarts and the kill" live_pods_tab || true
  # Last: its helm upgrade and rollback roll the Locust pods out twice (latencyMs reaches their
  # environment); a check right after it met a master still being replaced.
  [ "$LAB" = 0 ] ||
    check "helm upgrade --set latencyMs=500, then demo.sh at once: 500 ms from the release, PASS" latency_change_reaches_the_run || true
}

# pod_states: every pod of the release with its UID and restart count, one per line, sorted; pods
# being deleted left out (the first cluster-up's rollout may still be ending: 40 s of grace).
pod_states() {
  kube -n "$LL_NAMESPACE" get pods -l "app.kubernetes.io/instance=$LL_RELEASE" \
    -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}|{.metadata.name} {.metadata.uid} {.status.containerStatuses[*].restartCount}{"\n"}{end}' |
    sed -n 's/^|//p' | sort
}

# rerun_changes_nothing: scripts/cluster-up.sh again with everything up: no image is built or loaded
# again, the release is not upgraded, and every pod is the same pod with the same restart count. The
# decision is the images' sources label, whatever 'kind load' would print.
rerun_changes_nothing() {
  local before after out=$LL_LOGS/e2e-rerun.log
  before=$(pod_states)
  cluster_up >"$out" 2>&1 || { tail -n 30 "$out"; return 1; }
  after=$(pod_states)
  echo "before:"; echo "$before"; echo "after:"; echo "$after"
  grep -E "already in the node|is up to date|not touched" "$out"
  [ -n "$before" ] && [ "$before" = "$after" ] &&
    ! grep -qE "load-liveness-lab|helm-upgrade|restart-pods" "$out"
}

# short_demo: scripts/demo.sh with a 60 s hold (the first restart comes about 30 s into the load) and
# a 30 s quiet period; its exit code is the verdict.
short_demo() {
  "$LL_ROOT/scripts/demo.sh" --hold 60 --quiet 30 --out "$LL_ROOT/reports/e2e-$(date -u +%Y%m%dT%H%M%SZ)"
}

# latency_change_reaches_the_run: a settings change reaches the next scripted run at once: helm upgrade
# --reuse-values --set latencyMs=500 --wait, then at once scripts/demo.sh, which must wait for the old
# pods to go, ask for 500 ms (the release's) and pass (locust/tests/test_release_change_live.py; it rolls
# the release back afterwards).
latency_change_reaches_the_run() {
  LIVENESS_LAB_E2E_CLUSTER=$LL_KUBE_CONTEXT "$LL_ROOT/scripts/test-locust.sh" tests/test_release_change_live.py
}

# quick_lab: scripts/lab.sh --quick (baseline and tcp probe); its exit code says whether every prediction
# held (1: one did not, 2: a run could not tell).
quick_lab() {
  "$LL_ROOT/scripts/lab.sh" --quick --out "$LL_ROOT/reports/e2e-lab-$(date -u +%Y%m%dT%H%M%SZ)"
}

# live_pods_tab: the Pods tab in headless Chromium against the in-cluster master (http://127.0.0.1:8089),
# its restart counts checked against the API, after the demo (or the lab's baseline) made some.
# The Live tab too (test_live_tab_live.py): a swarm from the in-cluster master until the API reports a kill
# of the blocking pod, then the tab as a person sees it; its screenshot stays with the logs.
live_pods_tab() {
  LIVENESS_LAB_LIVE_WEB_UI=http://127.0.0.1:8089 LIVENESS_LAB_KUBE_CONTEXT=$LL_KUBE_CONTEXT \
    LIVENESS_LAB_SCREENSHOTS=$LL_LOGS "$LL_ROOT/scripts/test-locust.sh" tests/test_pods_tab_live.py tests/test_live_tab_live.py
}

main "$@"
