#!/usr/bin/env bash
# The lab (issue 13): runs the scenario catalogue in locust/scenarios/ (one YAML file per probe lesson:
# a chart values overlay, the variants to swarm, the load, the predicted outcome) on the kind cluster
# that scripts/cluster-up.sh brought up, and writes one matrix. Per scenario: helm upgrade the release
# with its own values plus the scenario's overlay, wait until the swarmed variants run fresh pods, Ready
# and settled, run scripts/demo.sh with the scenario's load, judge the run against the prediction
# (python -m lab judge), restore the release (helm rollback to the revision before), go on.
# Writes reports/lab-<timestamp>/: <scenario>[-<i>]/ (demo.sh's report, lab.json, timing.json),
# matrix.md and a self-contained matrix.html. Ctrl-C or an error restores the release first.
# Exits 0 when every prediction held, 1 when one did not, 2 when a run cannot tell (and none failed).
#
# Usage: scripts/lab.sh [OPTIONS]
#   --only LIST     comma-separated scenario names (the files' names without .yaml); default: all
#   --quick         only the scenarios marked `quick: true` (baseline and tcp-probe: CI's two, ~6.5 min)
#   --repeat N      run the chosen scenarios N times (folders <scenario>-1 .. -N; the matrix says k of N)
#   --out DIR       lab folder (default reports/lab-<UTC timestamp>)
#   --help
#
# Adding a scenario needs no code: a new file in locust/scenarios/ (its header says what goes in it;
# `python -m lab check` from locust/ checks them all). 2.5 to 4.7 minutes per scenario on 2 cores (about 41
# for all twelve): a rollout, the load (ramp + hold + quiet, about 2 minutes), the report, the rollback.
#
# Environment (defaults): LIVENESS_LAB_HELM_TIMEOUT=10m   how long a helm upgrade or rollback may take
#                         LIVENESS_LAB_SETTLE=20           seconds to let fresh JVMs settle before the load
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/cluster.sh"; . "$LL_LIB/venv.sh"; . "$LL_LIB/ownership.sh"

ONLY='' QUICK=0 REPEAT=1 OUT=''
HELM_TIMEOUT=${LIVENESS_LAB_HELM_TIMEOUT:-10m}
SETTLE=${LIVENESS_LAB_SETTLE:-20}
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --only | --repeat | --out)
        [ $# -ge 2 ] || die "$1 needs a value" "see $0 --help"
        case $1 in --only) ONLY=$2 ;; --repeat) REPEAT=$2 ;; --out) OUT=$2 ;; esac
        shift ;;
      --quick) QUICK=1 ;;
      -h | --help) ll_usage; exit 0 ;;
      *) die "unknown argument: $1" "see $0 --help" ;;
    esac
    shift
  done
  [[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat '$REPEAT' is not a whole number above 0" "e.g. --repeat 3"
  [[ $SETTLE =~ ^[0-9]+$ ]] || die "LIVENESS_LAB_SETTLE '$SETTLE' is not a whole number of seconds"
  OUT=${OUT:-$LL_ROOT/reports/lab-$(date -u +%Y%m%dT%H%M%SZ)}
  # Absolute: the Python side runs from locust/.
  [[ $OUT == /* ]] || OUT=$PWD/$OUT
}

# lab_cli ARGS...: the lab's Python side (locust/lab/__main__.py), from the venv.
lab_cli() { (cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -m lab "$@"); }

# choose_scenarios: SCENARIOS from --only / --quick, after every scenario file loaded cleanly (a bad file
# stops the lab here, naming the file and the field, before the cluster is touched).
choose_scenarios() {
  lab_cli check >/dev/null || die "a scenario file in locust/scenarios/ is wrong (above)" "fix the field it names"
  local list opts=(--only "$ONLY")
  [ "$QUICK" = 0 ] || opts+=(--quick)
  list=$(lab_cli list "${opts[@]}") || die "no such scenario (above)" "see locust/scenarios/"
  mapfile -t SCENARIOS <<<"$list"
  [ -n "${SCENARIOS[0]:-}" ] || die "no scenario chosen" "check --only and --quick"
}

# release_revision: the release's current revision number.
release_revision() {
  # shellcheck disable=SC2046 # helm_flags is meant to split into words
  helm status "$LL_RELEASE" $(helm_flags) -o json | "$LL_VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["version"])'
}

# save_release_values: the values the release was installed with (`helm get values`), the base every
# overlay is laid over; "null" (nothing set) becomes an empty map for `helm -f`.
save_release_values() {
  local values
  # shellcheck disable=SC2046
  values=$(helm get values "$LL_RELEASE" $(helm_flags) -o yaml) || die "cannot read the release's values" "is release $LL_RELEASE installed? scripts/cluster-up.sh"
  [ "$values" != null ] || values='{}'
  printf '%s\n' "$values" >"$OUT/release-values.yaml"
}

RESTORE_TO=
# restore_release: back to the revision before the scenario's upgrade, when one is pending.
restore_release() {
  [ -n "$RESTORE_TO" ] || return 0
  local revision=$RESTORE_TO
  RESTORE_TO=
  log "restoring release $LL_RELEASE to revision $revision"
  # shellcheck disable=SC2046
  helm rollback "$LL_RELEASE" "$revision" $(helm_flags) --wait --timeout "$HELM_TIMEOUT" >>"$OUT/restore.log" 2>&1 ||
    { warn "helm rollback to revision $revision failed (log: $OUT/restore.log)"; return 1; }
}

on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$RESTORE_TO" ]; then
    warn "stopped during a scenario: restoring the release first"
    restore_release || warn "restore it by hand: helm rollback $LL_RELEASE $RESTORE_TO -n $LL_NAMESPACE --kube-context $LL_KUBE_CONTEXT"
  fi
  release_cluster
  exit "$rc"
}

# no_pod_terminating: no pod of the release is being deleted.
no_pod_terminating() {
  ! kube -n "$LL_NAMESPACE" get pods -l "app.kubernetes.io/instance=$LL_RELEASE" \
    -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}' | grep -q .
}

# pods_of VARIANT: "name creationTimestamp [deletionTimestamp]" of each of the variant's pods.
pods_of() {
  kube -n "$LL_NAMESPACE" get pods -l "app.kubernetes.io/instance=$LL_RELEASE,app.kubernetes.io/component=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.creationTimestamp} {.metadata.deletionTimestamp}{"\n"}{end}'
}

# fresh_pods SINCE VARIANT...: each variant runs pods created after SINCE (UTC, RFC 3339): those the
# upgrade did not replace are rolled out again, so no scenario inherits a restart count, a back-off or
# a warm JIT from the one before. Then every pod of the release is Ready, none is still terminating
# (its connections would count against the Service), and the fresh JVMs get SETTLE seconds.
fresh_pods() {
  local since=$1 v stale
  shift
  for v in "$@"; do
    stale=$(pods_of "$v" | awk -v since="$since" 'NF == 2 && $2 < since { n++ } END { print n + 0 }')
    if [ "$stale" -gt 0 ]; then
      log "$v: $stale pod(s) from before the upgrade: rolling them out again"
      kube -n "$LL_NAMESPACE" rollout restart deployment "$LL_RELEASE-$v" >/dev/null
    fi
  done
  for v in "$@"; do
    kube -n "$LL_NAMESPACE" rollout status deployment "$LL_RELEASE-$v" --timeout "$HELM_TIMEOUT" >/dev/null ||
      die "$v did not roll out" "kubectl --context $LL_KUBE_CONTEXT -n $LL_NAMESPACE describe pods -l app.kubernetes.io/component=$v"
  done
  ll_retry 180 no_pod_terminating ||
    die "pods of the release still terminating after 180 s" "kubectl --context $LL_KUBE_CONTEXT -n $LL_NAMESPACE get pods"
  # Deployments, not pods: `helm test` leaves Completed pods of the release behind that never turn Ready.
  kube -n "$LL_NAMESPACE" rollout status deployment -l "app.kubernetes.io/instance=$LL_RELEASE" --timeout "$HELM_TIMEOUT" >/dev/null
  sleep "$SETTLE"
}

SCENARIO_RC=0
# run_scenario NAME FOLDER: one scenario into FOLDER; SCENARIO_RC is its judgement's exit code (0 held,
# 1 not held, 2 cannot tell). Not a return code: errexit must stay on inside, and a caller's `||` would
# turn it off.
run_scenario() {
  local name=$1 dir=$2 t0 t1 t2 t3 since rc=0 variants
  local -a demo_args
  mkdir -p "$dir"
  mapfile -t demo_args < <(lab_cli args "$name")
  variants=${demo_args[1]} # the value of --variants, demo_args' first option (lab/catalogue.py)
  lab_cli values "$name" "$dir/values-overlay.yaml"
  t0=$(ll_now)
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  RESTORE_TO=$(release_revision)
  log "$name: helm upgrade with the release's values + $(basename "$dir")/values-overlay.yaml (restore point: revision $RESTORE_TO)"
  # shellcheck disable=SC2046
  helm upgrade "$LL_RELEASE" "$LL_ROOT/chart" $(helm_flags) -f "$OUT/release-values.yaml" -f "$dir/values-overlay.yaml" \
    --wait --timeout "$HELM_TIMEOUT" >"$dir/helm-upgrade.log" 2>&1 ||
    { tail -n 20 "$dir/helm-upgrade.log" >&2; die "$name: helm upgrade failed (log: $dir/helm-upgrade.log)" "the release is restored on exit"; }
  # shellcheck disable=SC2086 # the variants list is comma-separated names
  fresh_pods "$since" ${variants//,/ }
  t1=$(ll_now)
  log "$name: ready after $((t1 - t0)) s; scripts/demo.sh ${demo_args[*]}"
  # demo.sh's own exit code is its verdict on the demo's claim, not on this scenario's: the judge decides.
  "$LL_ROOT/scripts/demo.sh" "${demo_args[@]}" --out "$dir" >"$dir/demo.log" 2>&1 || true
  if [ ! -f "$dir/run.json" ] || [ ! -f "$dir/timeline.jsonl" ]; then
    tail -n 20 "$dir/demo.log" >&2
    die "$name: scripts/demo.sh recorded no run (log: $dir/demo.log)"
  fi
  t2=$(ll_now)
  lab_cli judge "$name" "$dir" >"$dir/judgement.txt" || rc=$?
  sed 's/^/    /' "$dir/judgement.txt" >&2
  [ "$rc" -le 2 ] || die "$name: the judge failed (exit $rc)"
  restore_release || die "$name: could not restore the release" "helm rollback $LL_RELEASE -n $LL_NAMESPACE"
  t3=$(ll_now)
  printf '{"prepareS": %s, "runS": %s, "restoreS": %s, "totalS": %s}\n' $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) $((t3 - t0)) >"$dir/timing.json"
  log "$name:$(head -n 1 "$dir/judgement.txt" | cut -d: -f2-) ($((t3 - t0)) s: prepare $((t1 - t0)), run $((t2 - t1)), restore $((t3 - t2)))"
  SCENARIO_RC=$rc
}

main() {
  parse_args "$@"
  LL_ARGS="$*" # recorded in the cluster lock, so a refused run can say who holds it
  use_tools_bin
  ensure_helm
  ensure_kubectl
  ensure_locust_venv runtime
  choose_scenarios
  api_answers || die "the cluster's API does not answer" "scripts/cluster-up.sh first"
  [ "$(release_revision 2>/dev/null)" ] || die "release $LL_RELEASE is not installed" "scripts/cluster-up.sh first"

  # The cluster lock for the whole lab, before the first upgrade and until the last restore; the demo.sh
  # runs it starts find its token (LIVENESS_LAB_LOCK_TOKEN) and run under it. At most 10 minutes a run.
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  claim_cluster lab.sh $((${#SCENARIOS[@]} * REPEAT * 600))

  mkdir -p "$OUT"
  save_release_values
  log "lab: ${#SCENARIOS[@]} scenario(s) x $REPEAT into $OUT: ${SCENARIOS[*]}"
  local i name dir worst=0 started
  started=$(ll_now)
  for ((i = 1; i <= REPEAT; i++)); do
    for name in "${SCENARIOS[@]}"; do
      dir=$OUT/$name
      [ "$REPEAT" = 1 ] || dir=$OUT/$name-$i
      run_scenario "$name" "$dir"
      # Not held (1) outranks cannot tell (2).
      if [ "$SCENARIO_RC" = 1 ] || { [ "$SCENARIO_RC" = 2 ] && [ "$worst" = 0 ]; }; then worst=$SCENARIO_RC; fi
    done
  done
  lab_cli matrix "$OUT" >/dev/null
  log "lab done in $(($(ll_now) - started)) s: $OUT/matrix.html (table: $OUT/matrix.md)"
  return "$worst"
}

main "$@"
