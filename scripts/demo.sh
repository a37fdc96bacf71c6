#!/usr/bin/env bash
# The scripted run: swarms the chosen variants with the same offered load (ramp, hold, cool-down, then a
# quiet period), records Locust's stats history and a timeline of the pods and their events, and writes
# reports/<timestamp>/ with report.html, the PNG plots, summary.md and the raw data. Exits 0 when the
# verdict passes (every blocking pod restarted after liveness failures; the reactive pods never failed a
# probe, never restarted and served every request), 1 when it fails, 2 when it cannot tell.
# Brings the cluster up first when it is not (scripts/cluster-up.sh).
#
# Usage: scripts/demo.sh [OPTIONS]
#   --hold SECONDS       time at full load (default 180)
#   --ramp SECONDS       time to reach full load (default 10)
#   --quiet SECONDS      time without load afterwards, to watch recovery (default 90)
#   --users N            users per variant (default 20)
#   --rate R             requests per second each user aims for (default 1)
#   --latency-ms MS      latency each request asks for (default: LIVENESS_LAB_LATENCY_MS, else Locust's,
#                        DEFAULT_LATENCY_MS in locust/liveness_lab/__init__.py)
#   --variants LIST      comma-separated names from the variant table, chart/values.yaml `variants:`
#                        (default: the ones enabled there); a variant off in the chart must be enabled first
#   --out DIR            report folder (default reports/<UTC timestamp>)
#   --keep-pods          do not replace pods that restarted before the run (see below)
#   --no-stop-swarm      refuse to run while the in-cluster Locust swarms (default: stop its swarm, and say so)
#   --help
#
# A run owns the cluster (scripts/lib/ownership.sh): it takes a lock in the cluster (ConfigMap
# liveness-lab-run-lock) and refuses to start while another scripted run holds it, from any clone or
# machine, naming the holder and how to clear a lock left behind; it stops a swarm started in the
# in-cluster Locust's web UI (or refuses, with --no-stop-swarm) and waits for the variants to be idle.
# Its report compares the requests each variant's pods served with those Locust offered, and gives no
# verdict over load it did not offer.
#
# The defaults offer 20 req/s per variant of 1 s each: 20 requests in flight against a blocking pod's
# 4 event loops saturates it at once, while the reactive pod keeps 20 timers and uses little CPU, so a
# 2-core machine shows the effect without starving anyone (the report checks that it did not).
# Pods that restarted before (an earlier run) are replaced first: such a pod carries its CrashLoopBackOff
# delay (up to 5 minutes) and the kubelet's spent event budget into the run, which then shows fewer
# restarts and fewer events. Every run starts from the same state instead.
# Locust runs on the host against kind's NodePorts on 127.0.0.1 (http://127.0.0.1:3008x): no image
# to build, and the same path a user's browser takes.
#
# Environment (defaults): LIVENESS_LAB_READY_WAIT=300s   how long the pods may take to be Ready first
#   LIVENESS_LAB_LOCK_TOKEN        set by a parent run holding the cluster lock: run under its lock
#   LIVENESS_LAB_LOCUST_UI=http://127.0.0.1:8089   the in-cluster Locust's web UI, asked for its swarm
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/cluster.sh"; . "$LL_LIB/ownership.sh"; . "$LL_LIB/venv.sh"

# LATENCY_MS: empty until resolve_latency_ms, which takes Locust's default rather than restating it.
HOLD=180 RAMP=10 QUIET=90 COOLDOWN=5 USERS=20 RATE=1 LATENCY_MS=${LIVENESS_LAB_LATENCY_MS:-} VARIANTS=- OUT='' KEEP_PODS=0 STOP_SWARM=1
# LL_ARGS: the command line, recorded in the cluster lock so a refused run can say who holds it.
LL_ARGS="$*"
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --hold | --ramp | --quiet | --users | --rate | --latency-ms | --variants | --out)
        [ $# -ge 2 ] || die "$1 needs a value" "see $0 --help"
        case $1 in
          --hold) HOLD=$2 ;; --ramp) RAMP=$2 ;; --quiet) QUIET=$2 ;; --users) USERS=$2 ;;
          --rate) RATE=$2 ;; --latency-ms) LATENCY_MS=$2 ;; --variants) VARIANTS=$2 ;; --out) OUT=$2 ;;
        esac
        shift ;;
      --keep-pods) KEEP_PODS=1 ;;
      --no-stop-swarm) STOP_SWARM=0 ;;
      -h | --help) ll_usage; exit 0 ;;
      *) die "unknown argument: $1" "see $0 --help" ;;
    esac
    shift
  done
  local n
  for n in "$HOLD" "$RAMP" "$QUIET" "$USERS" ${LATENCY_MS:+"$LATENCY_MS"}; do
    [[ $n =~ ^[0-9]+$ ]] || die "'$n' is not a whole number" "see $0 --help"
  done
  [[ $RATE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--rate '$RATE' is not a number" "e.g. --rate 1.5"
  { [ "$USERS" -gt 0 ] && [ "$HOLD" -gt 0 ]; } || die "--users and --hold must be above 0"
  [ -n "$VARIANTS" ] || die "--variants is empty" "e.g. --variants blocking,reactive"
  OUT=${OUT:-$LL_ROOT/reports/$(date -u +%Y%m%dT%H%M%SZ)}
}

# variants_cli ARGS...: the variant table's command line (locust/liveness_lab/variants.py), from the venv.
variants_cli() { (cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -m liveness_lab.variants "$@"); }

# resolve_latency_ms: LATENCY_MS, when neither --latency-ms nor LIVENESS_LAB_LATENCY_MS gave it, is
# Locust's default (liveness_lab.DEFAULT_LATENCY_MS), so run.json records what the requests asked for.
resolve_latency_ms() {
  [ -n "$LATENCY_MS" ] ||
    LATENCY_MS=$(cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -c 'import liveness_lab; print(liveness_lab.DEFAULT_LATENCY_MS)')
}

# resolve_variants: VARIANT_LIST from --variants (default: those the chart enables) and the locustfile's
# user class of each, USER_CLASSES, both from the variant table; an unknown name stops here.
resolve_variants() {
  [ "$VARIANTS" != - ] || VARIANTS=$(variants_cli --names --enabled | paste -sd, -)
  IFS=, read -r -a VARIANT_LIST <<<"$VARIANTS"
  [ ${#VARIANT_LIST[@]} -gt 0 ] || die "--variants is empty" "e.g. --variants blocking,reactive"
  mapfile -t USER_CLASSES < <(variants_cli --classes "${VARIANT_LIST[@]}")
  # The exit status of a process substitution is lost: a refused name shows as a short list.
  [ ${#USER_CLASSES[@]} = ${#VARIANT_LIST[@]} ] ||
    die "--variants $VARIANTS names a variant chart/values.yaml does not have" "choose from $(variants_cli --names | paste -sd, -)"
}

# variants_ready: every chosen variant's pods exist and are Ready.
variants_ready() {
  local v
  api_answers || return 1
  for v in "${VARIANT_LIST[@]}"; do
    kube -n "$LL_NAMESPACE" get deployment "$LL_RELEASE-$v" >/dev/null 2>&1 || return 1
  done
}

ensure_cluster() {
  PATH=$LL_TOOLS/bin:$PATH
  if variants_ready; then
    log "cluster up, variants deployed: ${VARIANT_LIST[*]}"
  else
    log "cluster or variants not there: running scripts/cluster-up.sh"
    "$LL_ROOT/scripts/cluster-up.sh"
    local v
    for v in "${VARIANT_LIST[@]}"; do
      kube -n "$LL_NAMESPACE" get deployment "$LL_RELEASE-$v" >/dev/null 2>&1 ||
        die "variant '$v' is not deployed" "enable it: helm upgrade liveness-lab chart --reuse-values -n $LL_NAMESPACE --set variants.$v.enabled=true (or leave it out of --variants)"
    done
  fi
  # Before anything changes: another run's pods are not ours to replace, nor its swarm ours to stop.
  claim_cluster demo.sh "$(max_run_seconds)"
  ensure_no_swarm "$STOP_SWARM"
  [ "$KEEP_PODS" = 1 ] || replace_restarted_pods
  local v
  for v in "${VARIANT_LIST[@]}"; do
    # A pod still starting (or in back-off, with --keep-pods) would start the run half-dead: wait for it.
    kube -n "$LL_NAMESPACE" wait --for=condition=Ready pod -l "app.kubernetes.io/component=$v" \
      --timeout="${LIVENESS_LAB_READY_WAIT:-300s}" >/dev/null ||
      die "the $v pods are not Ready" "kubectl --context $LL_KUBE_CONTEXT -n $LL_NAMESPACE describe pods"
  done
  wait_variants_idle "${VARIANT_LIST[@]}"
}

# max_run_seconds: the longest this run can hold the cluster: its timetable, the recorder's margin, the
# wait for Ready pods, and 5 minutes for the rest (replacing pods, the report). A lock older than that
# is a left-over (see scripts/lib/ownership.sh).
max_run_seconds() {
  local ready=${LIVENESS_LAB_READY_WAIT:-300s} wait=300
  # kubectl's duration forms that a person would write: 300, 300s, 5m.
  if [[ $ready =~ ^([0-9]+)s?$ ]]; then wait=${BASH_REMATCH[1]}; elif [[ $ready =~ ^([0-9]+)m$ ]]; then wait=$((BASH_REMATCH[1] * 60)); fi
  echo $((RAMP + HOLD + COOLDOWN + QUIET + 120 + ${#VARIANT_LIST[@]} * wait + 300))
}

# replace_restarted_pods: deletes the chosen variants' pods that have restarted; their ReplicaSets
# create fresh ones (deleting leaves the Deployments, and so the Helm release, as they are).
replace_restarted_pods() {
  local v restarted=()
  for v in "${VARIANT_LIST[@]}"; do
    mapfile -t -O "${#restarted[@]}" restarted < <(kube -n "$LL_NAMESPACE" get pods -l "app.kubernetes.io/component=$v" \
      -o jsonpath='{range .items[*]}{.metadata.name} {.status.containerStatuses[*].restartCount}{"\n"}{end}' |
      awk '$2 > 0 {print $1}')
  done
  [ ${#restarted[@]} -gt 0 ] || return 0
  log "replacing pods that restarted before this run: ${restarted[*]}"
  kube -n "$LL_NAMESPACE" delete pod "${restarted[@]}" --wait=true --timeout=120s >/dev/null
}

# cluster_settings: the chosen variants' effective settings as the cluster runs them (probes, resources,
# replicas, the latency and event-loop environment), read from their Deployments by report.settings;
# "null" when the API does not answer (the verdict then does not time the kills, and says so).
cluster_settings() {
  local deployments json
  if deployments=$(kube -n "$LL_NAMESPACE" get deployments -l "app.kubernetes.io/instance=$LL_RELEASE" -o json) &&
    json=$(cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -m report.settings <<<"$deployments"); then
    printf '%s\n' "$json"
  else
    warn "could not read the Deployments' settings: the report will not time the kills"
    echo null
  fi
}

# write_run_json LOCUST_STARTED SETTINGS: the run's parameters and the settings it ran with.
write_run_json() {
  cat >"$OUT/run.json" <<JSON
{
  "variants": "$VARIANTS",
  "users_per_variant": $USERS,
  "rate_per_user": $RATE,
  "latency_ms": $LATENCY_MS,
  "phases": {"ramp": $RAMP, "hold": $HOLD, "cooldown": $COOLDOWN, "quiet": $QUIET},
  "locust_started": $1,
  "target": "host: kind NodePorts on 127.0.0.1",
  "namespace": "$LL_NAMESPACE",
  "cpus": $(docker info --format '{{.NCPU}}' 2>/dev/null || echo null),
  "commit": "$(git -C "$LL_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)",
  "settings": $2
}
JSON
}

RECORDER_PID=
stop_recorder() {
  [ -n "$RECORDER_PID" ] || return 0
  kill -TERM "$RECORDER_PID" 2>/dev/null || true
  wait "$RECORDER_PID" 2>/dev/null || true
  RECORDER_PID=
}

# on_exit: the recorder stopped, the cluster lock given back, however the run ends.
on_exit() {
  stop_recorder
  release_cluster
}

run_swarm() {
  local total=$((RAMP + HOLD + COOLDOWN + QUIET)) settings
  mkdir -p "$OUT"
  cd "$LL_ROOT/locust"
  # The recorder starts first, for a baseline, and may run at most the whole run plus a margin.
  "$LL_VENV/bin/python" -m report.recorder --out "$OUT/timeline.jsonl" --duration $((total + 120)) \
    2>"$OUT/recorder.log" &
  RECORDER_PID=$!
  sleep 5
  log "swarming ${VARIANT_LIST[*]}: $USERS users each at $RATE req/s, ${LATENCY_MS} ms; ramp ${RAMP}s, hold ${HOLD}s, quiet ${QUIET}s (~$((total / 60 + 1)) min)"
  # Read before the clock starts: locust_started must be the moment Locust starts.
  settings=$(cluster_settings)
  write_run_json "$(ll_now_precise)" "$settings"
  # Locust exits 1 when any request failed: expected here (the blocking pods); the verdict decides.
  env LIVENESS_LAB_TARGET=host LIVENESS_LAB_SHAPE=demo LIVENESS_LAB_PODS_TAB=off \
    LIVENESS_LAB_USERS=$((USERS * ${#VARIANT_LIST[@]})) LIVENESS_LAB_RAMP_S="$RAMP" LIVENESS_LAB_HOLD_S="$HOLD" \
    LIVENESS_LAB_COOLDOWN_S="$COOLDOWN" LIVENESS_LAB_QUIET_S="$QUIET" \
    "$LL_VENV/bin/locust" -f locustfile.py --headless --latency-ms "$LATENCY_MS" --rate-per-user "$RATE" \
    --csv "$OUT/locust" --csv-full-history --html "$OUT/locust.html" --loglevel WARNING --only-summary \
    "${USER_CLASSES[@]}" >"$OUT/locust.log" 2>&1 || true
  sleep 3
  stop_recorder
}

main() {
  parse_args "$@"
  # Ctrl-C and kill end the script through its EXIT trap, which releases the lock.
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ensure_locust_venv runtime
  resolve_latency_ms
  resolve_variants
  export LIVENESS_LAB_KUBE_CONTEXT=$LL_KUBE_CONTEXT LIVENESS_LAB_NAMESPACE=$LL_NAMESPACE
  ensure_cluster
  run_swarm
  local rc=0
  (cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -m report.build "$OUT") || rc=$?
  log "report: $OUT/report.html (summary: $OUT/summary.md)"
  return "$rc"
}

main "$@"
