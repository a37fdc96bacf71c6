# shellcheck shell=bash
# A scripted run owns the cluster: nothing else may drive the variants while it measures them. Two
# things could: the in-cluster Locust (someone started a swarm in its web UI) and another scripted run
# (this clone or another, this machine or another that reaches the same cluster). Source after
# common.sh and cluster.sh (it uses `kube`, LL_NAMESPACE and LL_KUBE_CONTEXT); it changes nothing by
# itself. scripts/demo.sh uses it; a run that starts other runs (a future scripts/lab.sh) takes the lock
# once and its children run under it.
#
#   claim_cluster SCRIPT SECONDS   take the lock, or stop with its holder and how to clear it
#   release_cluster                give it back (from the script's EXIT trap); a child run does not
#   ensure_no_swarm STOP           the in-cluster Locust is not swarming: stopped when STOP is 1, else refused
#   wait_variants_idle VARIANT...  the variants' pods have no request in flight (their own gauge)
#
# The lock is a ConfigMap, $LL_LOCK_NAME in the release's namespace: creating an object that exists
# fails, atomically, in the API server, so it works across clones and machines and needs no flock (macOS
# has none). It holds owner, host, pid, script, command, clone, started and expires (epoch seconds) and a
# token. A holder is stale when its expiry has passed (the run could not last that long) or, on this
# host, when its pid is gone or is no longer its script; a stale lock is taken over by a `replace` that
# names the resourceVersion read, so two runs that both found it stale cannot both win.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_LOCK_TOKEN                  set by claim_cluster for the children of the run holding
#                                            the lock: a run that finds it equal to the lock's token runs
#                                            under that lock instead of taking one
#   LIVENESS_LAB_LOCUST_UI=http://127.0.0.1:8089   the in-cluster Locust's web UI (kind's port mapping)

LL_LOCK_NAME=liveness-lab-run-lock
LL_LOCUST_UI=${LIVENESS_LAB_LOCUST_UI:-http://127.0.0.1:8089}
# Locust runner states in which users are (or are about to be) sending requests.
LL_SWARM_BUSY='spawning running stopping cleanup'

# The four calls on the lock object; the shell tests (scripts/test-cluster.sh) replace them with files.
# lock_create KEY=VALUE...: creates the lock, or fails with the API's message ("AlreadyExists").
lock_create() {
  local args=() kv
  for kv in "$@"; do args+=(--from-literal="$kv"); done
  kube -n "$LL_NAMESPACE" create configmap "$LL_LOCK_NAME" "${args[@]}" >/dev/null
}
# lock_read: "resourceVersion=N" then one KEY=VALUE line per field; fails when there is no lock.
lock_read() {
  # shellcheck disable=SC2016 # a Go template, not shell
  kube -n "$LL_NAMESPACE" get configmap "$LL_LOCK_NAME" -o go-template \
    --template '{{printf "resourceVersion=%s\n" .metadata.resourceVersion}}{{range $k, $v := .data}}{{printf "%s=%s\n" $k $v}}{{end}}' 2>/dev/null
}
# lock_replace RESOURCE-VERSION KEY=VALUE...: overwrites the lock only if it is still at that version.
lock_replace() {
  local rv=$1 args=() kv
  shift
  for kv in "$@"; do args+=(--from-literal="$kv"); done
  kube -n "$LL_NAMESPACE" create configmap "$LL_LOCK_NAME" "${args[@]}" --dry-run=client -o yaml |
    awk -v rv="$rv" '{ print } /^metadata:$/ { print "  resourceVersion: \"" rv "\"" }' |
    kube -n "$LL_NAMESPACE" replace -f - >/dev/null
}
lock_delete() { kube -n "$LL_NAMESPACE" delete configmap "$LL_LOCK_NAME" --ignore-not-found >/dev/null; }

# lock_field FIELDS KEY: KEY's value in lock_read's output FIELDS.
lock_field() { sed -n "s/^$2=//p" <<<"$1" | head -n 1; }

# lock_holder FIELDS: the holder in one line, for messages.
lock_holder() {
  local f=$1 started expires
  started=$(lock_field "$f" started) expires=$(lock_field "$f" expires)
  printf '%s (pid %s on %s, clone %s) since %s, until %s at the latest: %s' \
    "$(lock_field "$f" owner)" "$(lock_field "$f" pid)" "$(lock_field "$f" host)" "$(lock_field "$f" clone)" \
    "$(ll_utc "$started")" "$(ll_utc "$expires")" "$(lock_field "$f" command)"
}

# ll_utc EPOCH: the time in UTC (GNU and BSD date take different flags for it).
ll_utc() {
  date -u -d "@$1" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || date -u -r "$1" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo "$1" # portable: BSD's -r after GNU's -d
}

# lock_stale FIELDS: why the holder is gone, or fails when it may still be running.
lock_stale() {
  local f=$1 expires pid host script cmd
  expires=$(lock_field "$f" expires) pid=$(lock_field "$f" pid) host=$(lock_field "$f" host) script=$(lock_field "$f" script)
  if [[ $expires =~ ^[0-9]+$ ]] && [ "$(ll_now)" -gt "$expires" ]; then
    echo "its run would have ended by $(ll_utc "$expires")"
    return 0
  fi
  [ "$host" = "$(uname -n)" ] || return 1 # another machine: only the expiry can tell
  if ! cmd=$(ps -p "$pid" -o command= 2>/dev/null) || [ -z "$cmd" ]; then
    echo "pid $pid is gone from this host"
    return 0
  fi
  case $cmd in
    *"$script"*) return 1 ;;
    *) echo "pid $pid on this host is now another program ($cmd)"; return 0 ;;
  esac
}

LL_LOCK_OWNED=0 LL_LOCK_TOKEN='' LL_LOCK_ERR=''
# claim_cluster SCRIPT SECONDS: this run (SCRIPT, e.g. demo.sh, lasting SECONDS at most) holds the
# cluster, or the script stops here naming the holder and how to clear the lock. Exports
# LIVENESS_LAB_LOCK_TOKEN for the runs it starts.
claim_cluster() {
  local script=$1 seconds=$2 fields now token attempt why rv clear
  clear="kubectl --context $LL_KUBE_CONTEXT -n $LL_NAMESPACE delete configmap $LL_LOCK_NAME"
  if [ -n "${LIVENESS_LAB_LOCK_TOKEN:-}" ]; then
    fields=$(lock_read) || fields=
    if [ -n "$fields" ] && [ "$(lock_field "$fields" token)" = "$LIVENESS_LAB_LOCK_TOKEN" ]; then
      log "the cluster is held by the run that started this one ($(lock_field "$fields" script), pid $(lock_field "$fields" pid)): running under its lock"
      return 0
    fi
    if [ -n "$fields" ]; then fields="holder: $(lock_holder "$fields")"; else fields="no lock"; fi
    die "LIVENESS_LAB_LOCK_TOKEN is set, but the cluster's lock is not that run's ($fields)" \
      "LIVENESS_LAB_LOCK_TOKEN is for runs a parent run starts: unset it (unset LIVENESS_LAB_LOCK_TOKEN) and run again"
  fi
  LL_LOCK_ERR=$(mktemp "${TMPDIR:-/tmp}/ll-lock.XXXXXX")
  now=$(ll_now)
  token=$(uname -n)-$$-$now-$RANDOM$RANDOM
  local entry=(owner="${USER:-$(id -un)}@$(uname -n)" host="$(uname -n)" pid="$$" script="$script"
    command="scripts/$script${LL_ARGS:+ $LL_ARGS}" clone="$LL_ROOT" started="$now" expires="$((now + seconds))" token="$token")
  for attempt in 1 2 3; do
    if lock_create "${entry[@]}" 2>"$LL_LOCK_ERR"; then
      LL_LOCK_OWNED=1 LL_LOCK_TOKEN=$token
      export LIVENESS_LAB_LOCK_TOKEN=$token
      log "cluster lock taken (configmap $LL_LOCK_NAME in $LL_NAMESPACE, until $(ll_utc "$((now + seconds))") at the latest)"
      return 0
    fi
    grep -qi -e AlreadyExists -e "already exists" "$LL_LOCK_ERR" ||
      die "could not take the cluster lock: $(tr '\n' ' ' <"$LL_LOCK_ERR")" "is the cluster up? scripts/cluster-up.sh"
    fields=$(lock_read) || continue # released between our create and our read: try again
    if why=$(lock_stale "$fields"); then
      rv=$(lock_field "$fields" resourceVersion)
      if lock_replace "$rv" "${entry[@]}" 2>"$LL_LOCK_ERR"; then
        LL_LOCK_OWNED=1 LL_LOCK_TOKEN=$token
        export LIVENESS_LAB_LOCK_TOKEN=$token
        warn "took over a stale cluster lock ($why): $(lock_holder "$fields")"
        return 0
      fi
      continue # someone else took it over first: look again
    fi
    die "another scripted run holds the cluster: $(lock_holder "$fields")" \
      "wait for it to end (two runs would swarm the same pods and each count the other's load). If that run is gone and its lock was left behind: $clear"
  done
  die "could not take the cluster lock after $attempt attempts (it keeps changing hands)" "try again; to clear it: $clear"
}

# release_cluster: removes the lock if this run took it and it is still ours (from the EXIT trap).
release_cluster() {
  [ -z "$LL_LOCK_ERR" ] || rm -f "$LL_LOCK_ERR"
  [ "$LL_LOCK_OWNED" = 1 ] || return 0
  LL_LOCK_OWNED=0
  local fields
  fields=$(lock_read) || return 0
  if [ "$(lock_field "$fields" token)" = "$LL_LOCK_TOKEN" ]; then
    lock_delete || warn "could not remove the cluster lock: kubectl --context $LL_KUBE_CONTEXT -n $LL_NAMESPACE delete configmap $LL_LOCK_NAME"
  else
    warn "the cluster lock is no longer this run's (now: $(lock_holder "$fields")): left as it is"
  fi
}

# swarm_status: "STATE USERS" of the in-cluster Locust (its web UI's /stats/requests), or fails when
# nothing answers there.
swarm_status() {
  local json
  json=$(curl -fsS -m 5 "$LL_LOCUST_UI/stats/requests" 2>/dev/null) || return 1
  # The workers' entries have a "state" too: only a JSON parser tells the runner's own.
  python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["state"], d.get("user_count", "?"))' <<<"$json" 2>/dev/null
}

swarm_busy() { case " $LL_SWARM_BUSY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# swarm_stopped: the in-cluster Locust is not swarming (or does not answer); its state in LL_SWARM_STATE.
swarm_stopped() {
  local status
  LL_SWARM_STATE=gone
  status=$(swarm_status) || return 0
  read -r LL_SWARM_STATE _ <<<"$status"
  ! swarm_busy "$LL_SWARM_STATE"
}

# ensure_no_swarm STOP: the in-cluster Locust sends no load. A running swarm is stopped (STOP=1, said so)
# or refused (STOP=0) with the command that stops it. Nothing answering on the web UI's port is fine:
# no Locust, no swarm.
ensure_no_swarm() {
  local stop=$1 status state users how
  how="curl -X POST $LL_LOCUST_UI/stop (or Stop in the web UI, $LL_LOCUST_UI)"
  if ! status=$(swarm_status); then
    log "no in-cluster Locust answers on $LL_LOCUST_UI: no swarm to stop"
    return 0
  fi
  read -r state users <<<"$status"
  swarm_busy "$state" || { log "in-cluster Locust: $state, not swarming"; return 0; }
  [ "$stop" = 1 ] ||
    die "the in-cluster Locust is swarming the variants ($state, $users users): a scripted run must be the only load" \
      "stop it: $how; or leave out --no-stop-swarm and the run stops it"
  log "the in-cluster Locust is swarming ($state, $users users): stopping it (POST $LL_LOCUST_UI/stop)"
  curl -fsS -m 10 -X POST "$LL_LOCUST_UI/stop" >/dev/null || die "could not stop the in-cluster Locust" "stop it yourself: $how"
  ll_retry 30 swarm_stopped || die "the in-cluster Locust is still swarming 30 s after the stop" "stop it yourself: $how"
  log "in-cluster Locust stopped ($LL_SWARM_STATE)"
}

# in_flight POD: the requests POD is serving now (its demo_requests_in_flight, through the API server's
# pod proxy), or fails when it does not answer within 3 s.
in_flight() {
  kube get --request-timeout=3s --raw "/api/v1/namespaces/$LL_NAMESPACE/pods/$1:8080/proxy/actuator/prometheus" 2>/dev/null |
    awk '/^demo_requests_in_flight[{ ]/ { n += $NF; seen = 1 } END { if (!seen) exit 1; printf "%d\n", n }'
}

# wait_variants_idle VARIANT...: every pod of the variants has nothing in flight (a stopped swarm's last
# requests drain), at most 60 s; then a warning, and the report will say the run was not alone.
wait_variants_idle() {
  local v pod n busy waited=0
  while :; do
    busy=()
    for v in "$@"; do
      for pod in $(kube -n "$LL_NAMESPACE" get pods -l "app.kubernetes.io/component=$v" -o jsonpath='{.items[*].metadata.name}'); do
        n=$(in_flight "$pod") || n='?'
        [ "$n" = 0 ] || busy+=("$pod: $n")
      done
    done
    [ ${#busy[@]} -gt 0 ] || return 0
    if [ "$waited" -ge 60 ]; then
      warn "requests still in flight after 60 s (${busy[*]}): something else sends load; the verdict will not pass over it"
      return 0
    fi
    [ "$waited" -gt 0 ] || log "waiting for the requests in flight to finish (${busy[*]})"
    sleep 2
    waited=$((waited + 2))
  done
}
