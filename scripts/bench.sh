#!/usr/bin/env bash
# Benchmark: every mode of the service against Little's law, side by side in one run.
#
# Starts every mode of the variant table, each in its own JVM on 127.0.0.1 with the same heap and one
# CPU (taskset + -XX:ActiveProcessorCount=1, 4 event loops), puts the load generator (vegeta, open loop,
# constant rate) on the other CPU, warms each mode up the same way, and offers each scenario to each
# mode in turn: latency L, concurrency C, rate C/L, each run recorded by JFR. Writes
# reports/bench-<timestamp>/ (results.jsonl, table.md, chart.png, profile-*.jfr and the hottest methods
# of each in profile-*.txt, logs).
# Linux only (taskset, flock, nproc pin the JVMs and the load generator to CPUs): on macOS run it in a
# Linux VM; the demo itself (scripts/cluster-up.sh, scripts/demo.sh) runs on macOS.
#
# Usage: scripts/bench.sh [--duration SECONDS] [--modes LIST] [--scenarios LIST] [--quick]
#   --duration SECONDS  how long each mode is offered each scenario (default 20)
#   --modes LIST        comma-separated modes (default: every mode of the variant table, chart/values.yaml)
#   --scenarios LIST    comma-separated LATENCY_MS:CONCURRENCY (default 1000:100,1000:1000,1000:5000,1000:10000,100:1000)
#   --quick             3 s per run, 3 s of warm-up, scenarios 1000:100,100:100 (a smoke run, not a measurement)
#   --idle-connections N  memory per connection: each mode holds N idle keep-alive connections, measured
#                       with the JVM's Native Memory Tracking, heap after GC and RSS (default 10000, 0: skip)
#   --soak MINUTES      a soak instead of the scenarios: each mode (default reactive) held at the demo's
#                       rate (20 req/s of 1 s) for MINUTES, then at 10 times that for MINUTES; RSS and the
#                       heap after a full GC sampled every minute, errors and latency per phase (soak.md)
#   --baseline REF      also run the reactive mode of the service as built at git revision REF (e.g. a tag or
#                       HEAD~3), in the same run with the same warm-up, to hold a change against it ("reactive
#                       (REF)" in the tables); the jar is built once into the cache, keyed by commit
#   --service-args ARGS  more arguments for every service JVM, after the bench's own: Spring settings
#                       (--management.observations.enable.http.server.requests=true, on again) or JVM flags
#                       (-XX:...), to measure what one setting costs; recorded in machine.txt
# Environment: JAVA_HOME (a JDK >= 21), LIVENESS_LAB_CACHE (vegeta is built there, keyed by version).
set -o errexit -o nounset -o pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib/common.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib/gobuild.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib/venv.sh"

duration=20
quick=0
soak=0
idle_connections=10000
baseline=
modes=-
service_args=()
scenarios=1000:100,1000:1000,1000:5000,1000:10000,100:1000
while [ $# -gt 0 ]; do
  case $1 in
    --duration) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--duration needs a whole number of seconds" "e.g. --duration 20"; duration=$2; shift 2 ;;
    --modes) [ -n "${2:-}" ] || die "--modes needs a list" "e.g. --modes blocking,reactive"; modes=$2; shift 2 ;;
    --scenarios) [[ ${2:-} =~ ^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$ ]] || die "--scenarios needs LATENCY_MS:CONCURRENCY pairs" "e.g. --scenarios 1000:100,100:1000"; scenarios=$2; shift 2 ;;
    --quick) duration=3 quick=1 idle_connections=1000; scenarios=1000:100,100:100; shift ;;
    --soak) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--soak needs whole minutes" "e.g. --soak 10"; soak=$2; shift 2 ;;
    --idle-connections) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--idle-connections needs a whole number" "e.g. --idle-connections 10000"; idle_connections=$2; shift 2 ;;
    --baseline) [ -n "${2:-}" ] || die "--baseline needs a git revision" "e.g. --baseline HEAD~1"; baseline=$2; shift 2 ;;
    --service-args) [ -n "${2:-}" ] || die "--service-args needs the arguments" "e.g. --service-args --demo.netty-metrics=true"
      read -r -a service_args <<<"$2"; shift 2 ;;
    -h | --help) ll_usage; exit 0 ;;
    *) ll_usage >&2; die "unknown argument '$1'" "see --help" ;;
  esac
done
[ "$(uname -s)" = Linux ] || die "scripts/bench.sh runs on Linux only (it pins processes to CPUs with taskset)" \
  "run it in a Linux VM or on a Linux machine; scripts/cluster-up.sh and scripts/demo.sh run here"
IFS=, read -r -a scenario_list <<<"$scenarios"

# One bench at a time: a second one would share the CPUs and ports and spoil both.
mkdir -p "$LL_CACHE"
# The JVMs do not inherit the lock (9>&- in start_mode): one still shutting down would hold it.
exec 9>"$LL_CACHE/bench.lock"
flock -n 9 || die "another scripts/bench.sh is running" "wait for it to finish, or stop it"

EVENT_LOOPS=4
# The young generation holds most of the heap: at L = 1 s every request in flight is alive at a young
# collection unless eden takes several seconds of allocation to fill. With 512 MiB and the serial
# collector's default third for the young generation, eden filled every 1.2 s at 5,000 req/s, each
# collection copied the requests in flight (250-370 ms pauses), survivors overflowed into the old
# generation and a full GC followed every 5 s; with 768 of 1,024 MiB young, collections came every 5-6 s
# and took 1-4 % of the CPU (issue 15).
HEAP=1g YOUNG=768m

# One CPU for the services, the other for the load generator (on one CPU they share it).
if [ "$(nproc)" -ge 2 ]; then SERVICE_CPU=1 LOADGEN_CPU=0; else SERVICE_CPU=0 LOADGEN_CPU=0; fi
need_cmd taskset "apt-get install util-linux"

ensure_vegeta() {
  local dir=$LL_CACHE/vegeta-$VEGETA_VERSION
  VEGETA=$dir/bin/vegeta
  [ -x "$VEGETA" ] && return 0
  ensure_go
  # The proxy refuses vegeta's version list, so 'go install' fails: build it in a scratch module.
  scratch_module "$dir/module" liveness-lab/build/vegeta
  (cd "$dir/module" && GOFLAGS=-mod=mod go get "github.com/tsenart/vegeta/v12@$VEGETA_VERSION" &&
    go_static build -trimpath -o "$VEGETA" github.com/tsenart/vegeta/v12)
}

# ensure_baseline_jar: BASELINE_JAR, the service as built at git revision $baseline (built once, cached by commit).
ensure_baseline_jar() {
  local sha tmp
  sha=$(git -C "$LL_ROOT" rev-parse --verify --quiet "$baseline^{commit}") ||
    die "--baseline: '$baseline' is not a git revision of this clone" "e.g. --baseline HEAD~1, or a commit from git log"
  BASELINE_LABEL=$(git -C "$LL_ROOT" rev-parse --short "$sha")
  BASELINE_JAR=$LL_CACHE/build/bench-baseline-$sha.jar
  [ -f "$BASELINE_JAR" ] && return 0
  tmp=$(mktemp -d)
  git -C "$LL_ROOT" archive "$sha" service | tar -x -C "$tmp"
  "$tmp/service/mvnw" -f "$tmp/service/pom.xml" -B -q package -DskipTests
  mkdir -p "$(dirname "$BASELINE_JAR")"
  cp "$tmp/service/target/liveness-lab-service.jar" "$BASELINE_JAR.tmp" && mv "$BASELINE_JAR.tmp" "$BASELINE_JAR"
  rm -rf "$tmp"
}

ensure_jar() {
  JAR=$LL_ROOT/service/target/liveness-lab-service.jar
  if [ -f "$JAR" ] && [ -z "$(find "$LL_ROOT/service/src" "$LL_ROOT/service/pom.xml" -newer "$JAR" -print -quit)" ]; then
    return 0
  fi
  "$LL_ROOT/service/mvnw" -f "$LL_ROOT/service/pom.xml" -B -q package -DskipTests
}


PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM

# resolve_modes: mode_list from --modes (default: every mode of the variant table, chart/values.yaml),
# each checked against that table; all_modes in its order, which gives each mode its port.
resolve_modes() {
  local mode
  mapfile -t all_modes < <(cd "$LL_ROOT/locust" && "$LL_VENV/bin/python" -m liveness_lab.variants --modes)
  [ ${#all_modes[@]} -gt 0 ] || die "could not read the modes of the variant table" "see $LL_LOGS"
  [ "$modes" != - ] || [ "$soak" = 0 ] || modes=reactive
  [ "$modes" != - ] || modes=$(IFS=,; echo "${all_modes[*]}")
  IFS=, read -r -a mode_list <<<"$modes"
  for mode in "${mode_list[@]}"; do
    [[ " ${all_modes[*]} " == *" $mode "* ]] || die "unknown mode '$mode'" "choose from $(IFS=,; echo "${all_modes[*]}")"
  done
}

# A target is a mode of this build (reactive) or of the baseline's (reactive_baseline, --baseline).
mode_of() { echo "${1%_baseline}"; }
build_of() { case $1 in *_baseline) echo "$BASELINE_LABEL" ;; *) echo "" ;; esac; }

# port_of TARGET: 19080, 19081, ... in the variant table's order of modes; 19180, ... for the baseline's.
port_of() {
  local i mode base=19080
  mode=$(mode_of "$1")
  [ "$mode" = "$1" ] || base=19180
  for i in "${!all_modes[@]}"; do
    [ "${all_modes[$i]}" != "$mode" ] || { echo $((base + i)); return 0; }
  done
  return 1
}

# start_mode TARGET: its JVM on the services' CPU.
start_mode() {
  local target=$1 port jar=$JAR
  port=$(port_of "$target")
  [ -z "$(build_of "$target")" ] || jar=$BASELINE_JAR
  local jvm_flags=() spring_args=() arg
  for arg in ${service_args[@]+"${service_args[@]}"}; do
    case $arg in -XX:* | -D* | -X*) jvm_flags+=("$arg") ;; *) spring_args+=("$arg") ;; esac
  done
  taskset -c "$SERVICE_CPU" "$JAVA_HOME/bin/java" -XX:ActiveProcessorCount=1 -Xms$HEAP -Xmx$HEAP -Xmn$YOUNG \
    -Dreactor.netty.ioWorkerCount=$EVENT_LOOPS -XX:NativeMemoryTracking=summary ${jvm_flags[@]+"${jvm_flags[@]}"} -jar "$jar" --server.port="$port" \
    --demo.mode="$(mode_of "$target")" --logging.level.root=WARN ${spring_args[@]+"${spring_args[@]}"} >"$LL_LOGS/service-$target.log" 2>&1 9>&- &
  PIDS+=("$!")
  eval "PID_$target=$!"
}

# label TARGET: how the tables name it: "reactive", or "reactive (1fb73c8)" for the baseline's.
label() {
  local build
  build=$(build_of "$1")
  echo "$(mode_of "$1")${build:+ ($build)}"
}

await_ready() {
  local mode=$1 port
  port=$(port_of "$mode")
  ll_retry 120 curl -fsS -o /dev/null -m 2 "http://127.0.0.1:$port/readyz" 2>/dev/null ||
    die "$mode did not get ready in 120 s" "see $LL_LOGS/service-$mode.log"
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
connections() { ss -Htn state established "( sport = :$1 )" | wc -l; }
# cpu_ms PID...: user + system CPU time the processes have used, in ms (fields 14 and 15 of stat).
CLK_TCK=$(getconf CLK_TCK)
cpu_ms() {
  local pid total=0
  for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo $((total * 1000 / CLK_TCK))
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
time_wait() { ss -Htan state time-wait | wc -l; }
# listen_overflows: the kernel's count of connections dropped because a listener's accept queue was full
# (TcpExt ListenOverflows, this network namespace). During a run only the measured JVM accepts, so the
# run's difference is its own: a client whose handshakes wait for SYN retransmits (1 s, 3 s, ...) measures
# the accept path, not Little's law.
listen_overflows() { awk '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++) col[$i] = i; n = 1 } else print $col["ListenOverflows"] }' /proc/net/netstat; }
# ports_in_use LO HI: TCP sockets, any state, whose local port is in LO..HI (the ephemeral range).
ports_in_use() {
  ss -Htan | awk -v lo="$1" -v hi="$2" '{ n = split($4, a, ":"); p = a[n] + 0; if (p >= lo && p <= hi) c++ } END { print c + 0 }'
}

# await_free_ports NEEDED: the connections a run closed (every timed-out request closes one) keep
# their local port in TIME_WAIT for 60 s, and vegeta binds its sockets before connecting, so such a
# port is taken whatever the next run's target. A run at C = 5,000 after blocking's 20,000 timeouts
# would find the ephemeral range nearly empty and measure the client, not the server. Waits (at most
# 75 s) until NEEDED ports and a margin of 1,000 are free.
await_free_ports() {
  local needed=$1 waited=0 lo hi free
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
  while free=$((hi - lo + 1 - $(ports_in_use "$lo" "$hi"))); [ "$free" -lt $((needed + 1000)) ] && [ "$waited" -lt 75 ]; do
    sleep 5
    waited=$((waited + 5))
  done
  [ "$waited" = 0 ] || log "waited ${waited}s for closed connections to free their ports ($free of $((hi - lo + 1)) free)"
}

# warm_up TARGET: the same warm-up for every mode before it is measured, whatever ran before it, in two
# closed-loop phases of latencyMs=1 (each client sends its next request when its answer came):
#  1. WARMUP_S seconds from WARMUP_WORKERS keep-alive clients: the request path, and the write path as
#     it runs under load (answers queued on a connection from the timer thread, several per flush);
#  2. WARMUP_S / 2 seconds from 32 clients with keep-alive off: a new connection per request (accept,
#     pipeline set-up, close), as an open-loop client opens thousands.
# Then a pause for the compiler's queue. Closed loop on purpose: an open-loop warm-up at 2,000 req/s was a
# storm, not a warm-up (a cold reactive JVM answered 389 req/s of it, 12,697 of 21,565 requests failed).
# 1 ms on purpose: the modes that block drain 1,000 such requests in a fraction of a second, where 1 s
# requests would leave a backlog that spoils their first run. Measured (reactive, C = 5,000 next, issue 15):
# after 32 keep-alive clients alone, the JIT compiler still took 3.3-5.0 s of CPU during the run (the
# write path under load was not compiled yet); after these two phases, 0.9 s.
WARMUP_S=20 WARMUP_WORKERS=1000
[ "$quick" = 0 ] || WARMUP_S=4
warm_up() {
  local target=$1 port
  port=$(port_of "$target")
  echo "GET http://127.0.0.1:$port/api/work?latencyMs=1" >"$out/target-$target-warmup.txt"
  {
    taskset -c "$LOADGEN_CPU" "$VEGETA" attack -targets="$out/target-$target-warmup.txt" -rate=0 -workers="$WARMUP_WORKERS" \
      -max-workers="$WARMUP_WORKERS" -duration="${WARMUP_S}s" -timeout=5s 2>"$LL_LOGS/vegeta-$target-warmup.log" |
      "$VEGETA" report -type=text
    taskset -c "$LOADGEN_CPU" "$VEGETA" attack -targets="$out/target-$target-warmup.txt" -rate=0 -workers=32 -max-workers=32 \
      -keepalive=false -duration="$((WARMUP_S / 2))s" -timeout=5s 2>>"$LL_LOGS/vegeta-$target-warmup.log" |
      "$VEGETA" report -type=text
  } >"$LL_LOGS/warmup-$target.txt"
  sleep 5
}

# jcmd_on_loadgen_cpu, jfr_on_loadgen_cpu ARGS...: the JDK's jcmd or jfr on the load generator's CPU, not the services'.
jcmd_on_loadgen_cpu() { taskset -c "$LOADGEN_CPU" "$JAVA_HOME/bin/jcmd" "$@" >/dev/null; }
jfr_on_loadgen_cpu() { taskset -c "$LOADGEN_CPU" "$JAVA_HOME/bin/jfr" "$@"; }

# profile NAME: what the JFR recording $out/profile-NAME.jfr says, next to it: the hottest methods
# (CPU samples every 10 ms, the JDK's "profile" settings) and allocations in profile-NAME.txt; prints
# the number of sleeps that ran their full time (jdk.ThreadSleep events whose duration reached 95 % of
# the time asked for: a client that gives up cancels offloaded's and virtual's sleeps, which then end
# early), which is the work blocking, offloaded and virtual finished.
profile() {
  local jfr=$out/profile-$1.jfr
  {
    jfr_on_loadgen_cpu view --width 160 hot-methods "$jfr"
    jfr_on_loadgen_cpu view --width 160 allocation-by-class "$jfr"
  } >"$out/profile-$1.txt" 2>&1 || true
  jfr_on_loadgen_cpu print --stack-depth 64 --events jdk.ExecutionSample "$jfr" |
    "$LL_VENV/bin/python" "$LL_ROOT/scripts/libexec/bench_report.py" --cpu-shares >"$out/profile-$1.cpu.json" || echo null >"$out/profile-$1.cpu.json"
  jfr_on_loadgen_cpu print --events jdk.ThreadSleep "$jfr" 2>/dev/null | awk '
    function ms(value, unit) { return unit == "s" ? value * 1000 : unit == "ms" ? value : unit == "min" ? value * 60000 : value / 1000 }
    $1 == "duration" { d = ms($3, $4) }
    $1 == "time" { if (d >= 0.95 * ms($3, $4)) n++ }
    END { print n + 0 }'
}

# memory_snapshot PID: after a full GC, the JVM's own accounting as one JSON object: Native Memory
# Tracking's committed KiB per category (summary mode: a few % of CPU, on for every run alike), the heap
# in use, and RSS.
memory_snapshot() {
  local pid=$1
  jcmd_on_loadgen_cpu "$pid" GC.run
  sleep 1
  {
    taskset -c "$LOADGEN_CPU" "$JAVA_HOME/bin/jcmd" "$pid" VM.native_memory summary scale=KB |
      sed -n 's/^-[[:space:]]*\([A-Za-z][A-Za-z ]*[A-Za-z]\) (reserved=[0-9]*KB, committed=\([0-9]*\)KB.*/"\1":\2,/p'
    # Every generation's "used NK" (one line for G1; young and tenured for the serial collector, which
    # the JVM picks on one CPU), not Metaspace's.
    taskset -c "$LOADGEN_CPU" "$JAVA_HOME/bin/jcmd" "$pid" GC.heap_info |
      awk '!/Metaspace|class space/ && match($0, / used [0-9]+K/) { n += substr($0, RSTART + 6, RLENGTH - 7) } END { printf "\"heap used\":%d,", n }'
    echo "\"RSS\":$(rss_kib "$pid")"
  } | tr -d '\n' | sed 's/^/{/; s/$/}/'
}

# idle_memory TARGET: what holding $idle_connections idle keep-alive connections costs MODE's JVM, as one
# JSON line: the snapshots before and while holding them (scripts/libexec/hold_connections.py).
idle_memory() {
  local mode=$1 port pid before during opened fifo=$out/hold-$1.fifo holder
  port=$(port_of "$mode")
  pid=$(eval "echo \$PID_$mode")
  before=$(memory_snapshot "$pid")
  # The holder keeps the connections until its standard input (the FIFO, held open by fd 8) closes.
  mkfifo "$fifo"
  taskset -c "$LOADGEN_CPU" "$LL_VENV/bin/python" "$LL_ROOT/scripts/libexec/hold_connections.py" "$port" "$idle_connections" \
    <"$fifo" >"$LL_LOGS/hold-$mode.log" 2>&1 9>&- &
  holder=$!
  exec 8>"$fifo"
  ll_retry 300 grep -q '^open ' "$LL_LOGS/hold-$mode.log" || warn "$mode: the connections did not open in 300 s"
  opened=$(grep '^open ' "$LL_LOGS/hold-$mode.log" || echo "open 0")
  during=$(memory_snapshot "$pid")
  exec 8>&-
  wait "$holder" || true
  rm -f "$fifo"
  printf '{"mode":"%s","build":"%s","asked":%s,"opened":%s,"open_line":"%s","before":%s,"during":%s}\n' \
    "$(mode_of "$mode")" "$(build_of "$mode")" "$idle_connections" "$(awk '{print $2}' <<<"$opened")" "$opened" "$before" "$during"
}

# soak_phase MODE RATE MINUTES: MODE offered RATE req/s of 1 s for MINUTES (open loop), its memory
# sampled every minute into soak.jsonl, vegeta's report of the phase as one JSON line.
soak_phase() {
  local mode=$1 rate=$2 minutes=$3 port pid name=$1-soak-$2 attack started
  port=$(port_of "$mode")
  pid=$(eval "echo \$PID_$mode")
  echo "GET http://127.0.0.1:$port/api/work?latencyMs=1000" >"$out/target-$name.txt"
  taskset -c "$LOADGEN_CPU" "$VEGETA" attack -targets="$out/target-$name.txt" -rate="$rate/s" -duration="${minutes}m" \
    -timeout=10s >"$out/raw-$name.bin" 2>"$LL_LOGS/vegeta-$name.log" 9>&- &
  attack=$!
  started=$(ll_now)
  while kill -0 "$attack" 2>/dev/null; do
    # alive: the same JVM still runs (a crash would be a restart in a pod).
    printf '{"mode":"%s","rate":%s,"t":%s,"alive":%s,"snapshot":%s}\n' "$mode" "$rate" "$(($(ll_now) - started))" \
      "$(kill -0 "$pid" 2>/dev/null && echo true || echo false)" "$(memory_snapshot "$pid")" >>"$out/soak.jsonl"
    sleep 60
  done
  wait "$attack" || true
  printf '{"mode":"%s","rate":%s,"minutes":%s,"alive":%s,"vegeta":%s}\n' "$mode" "$rate" "$minutes" \
    "$(kill -0 "$pid" 2>/dev/null && echo true || echo false)" "$("$VEGETA" report -type=json <"$out/raw-$name.bin")"
  rm -f "$out/raw-$name.bin"
}

# run_one TARGET LATENCY_MS CONCURRENCY: one open-loop run, its figures as one JSON line.
run_one() {
  local mode=$1 latency=$2 conc=$3 port pid rate timeout idle_rss idle_threads load_rss load_threads conns
  local cpu0 all0 t0 cpu all wall tw inflight sleeps overflows0 overflows
  port=$(port_of "$mode")
  pid=$(eval "echo \$PID_$mode")
  rate=$((conc * 1000 / latency))
  # A request may wait 10 latencies (at least 5 s) before it counts as an error; at most 2 x C
  # requests are in flight at once, so that a stalled server cannot exhaust the ephemeral ports.
  timeout=$((latency * 10 > 5000 ? latency * 10 : 5000))
  # ...and never more than the file descriptors allow (vegeta's sockets plus a margin).
  inflight=$((conc * 2 < MAX_FDS - 500 ? conc * 2 : MAX_FDS - 500))
  await_free_ports "$inflight"
  tw=$(time_wait)
  idle_rss=$(rss_kib "$pid")
  idle_threads=$(threads "$pid")
  echo "GET http://127.0.0.1:$port/api/work?latencyMs=$latency" >"$out/target-$mode-$latency.txt"
  # CPU of this mode's JVM and of all of them (they share one CPU) from the first request until the
  # last answer or timeout: the JVM's cost per answer, and whether another mode still draining its
  # backlog took CPU from this one.
  jcmd_on_loadgen_cpu "$pid" JFR.start name=bench settings=profile
  cpu0=$(cpu_ms "$pid") all0=$(cpu_ms "${PIDS[@]}") t0=$(now_ms) overflows0=$(listen_overflows)
  # The subshell's `times` reports vegeta's own CPU time: is the load generator the limit?
  (
    taskset -c "$LOADGEN_CPU" "$VEGETA" attack -targets="$out/target-$mode-$latency.txt" -rate="$rate/s" \
      -duration="${duration}s" -timeout="${timeout}ms" -max-workers=$inflight -max-connections=$inflight \
      >"$out/raw-$mode-$latency-$conc.bin" 2>"$LL_LOGS/vegeta-$mode-$latency-$conc.log"
    times >"$out/loadgen-cpu.txt" # not in a pipe: a forked `times` has no children
  ) &
  local attack=$! loadgen
  sleep $((duration * 3 / 4 > 0 ? duration * 3 / 4 : 1))
  load_rss=$(rss_kib "$pid")
  load_threads=$(threads "$pid")
  conns=$(connections "$port")
  wait "$attack" || true
  cpu=$(($(cpu_ms "$pid") - cpu0)) all=$(($(cpu_ms "${PIDS[@]}") - all0)) wall=$(($(now_ms) - t0))
  overflows=$(($(listen_overflows) - overflows0))
  jcmd_on_loadgen_cpu "$pid" JFR.stop name=bench filename="$out/profile-$mode-$latency-$conc.jfr"
  sleeps=$(profile "$mode-$latency-$conc")
  # Its second line, "1m2.345s 0m0.678s": user and system time of vegeta, in ms.
  loadgen=$(tail -n 1 "$out/loadgen-cpu.txt" | tr 'ms' '  ' | awk '{printf "%d", ($1 * 60 + $2 + $3 * 60 + $4) * 1000}')
  "$VEGETA" report -type=json <"$out/raw-$mode-$latency-$conc.bin" >"$out/report-$mode-$latency-$conc.json"
  rm -f "$out/raw-$mode-$latency-$conc.bin"
  printf '{"mode":"%s","build":"%s","latency_ms":%s,"concurrency":%s,"offered_rps":%s,"duration_s":%s,"idle_rss_kib":%s,"load_rss_kib":%s,"idle_threads":%s,"load_threads":%s,"connections":%s,"event_loops":%s,"cpu_ms":%s,"others_cpu_ms":%s,"wall_ms":%s,"max_in_flight":%s,"time_wait_at_start":%s,"loadgen_cpu_ms":%s,"listen_overflows":%s,"sleeps_completed":%s,"profile":"profile-%s.txt","cpu_shares":%s,"vegeta":%s}\n' \
    "$(mode_of "$mode")" "$(build_of "$mode")" "$latency" "$conc" "$rate" "$duration" "$idle_rss" "$load_rss" "$idle_threads" "$load_threads" "$conns" "$EVENT_LOOPS" \
    "$cpu" "$((all - cpu))" "$wall" "$inflight" "$tw" "$loadgen" "$overflows" "$sleeps" "$mode-$latency-$conc" "$(cat "$out/profile-$mode-$latency-$conc.cpu.json")" \
    "$(cat "$out/report-$mode-$latency-$conc.json")"
}

ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"
MAX_FDS=$(ulimit -n)
step bench-python ensure_locust_venv runtime # matplotlib, pinned with Locust's packages
resolve_modes
out=$LL_ROOT/reports/bench-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
LL_LOGS=$out/logs
log "file descriptors: $MAX_FDS; ephemeral ports: $(tr '\t' - </proc/sys/net/ipv4/ip_local_port_range); services on CPU $SERVICE_CPU, vegeta on CPU $LOADGEN_CPU; report: $out"
find_jdk
step bench-vegeta ensure_vegeta
step bench-jar ensure_jar
BASELINE_LABEL=
[ -z "$baseline" ] || step bench-baseline-jar ensure_baseline_jar
# The targets: every mode of this build, then the baseline's reactive mode.
targets=("${mode_list[@]}")
[ -z "$baseline" ] || targets+=(reactive_baseline)
for target in "${targets[@]}"; do start_mode "$target"; done
for target in "${targets[@]}"; do await_ready "$target"; done
log "ready: $(for t in "${targets[@]}"; do printf '%s, ' "$(label "$t")"; done | sed 's/, $//')"
for target in "${targets[@]}"; do
  log "warm-up of $(label "$target"): ${WARMUP_S}s of 1 ms requests from $WARMUP_WORKERS keep-alive clients, $((WARMUP_S / 2))s from 32 with a new connection each"
  warm_up "$target"
done

if [ "$soak" -gt 0 ]; then
  : >"$out/soak.jsonl"
  for mode in "${mode_list[@]}"; do
    for rate in 20 200; do
      log "soak of $mode: $rate req/s of 1 s for $soak min"
      soak_phase "$mode" "$rate" "$soak" >>"$out/soak-results.jsonl"
    done
  done
  idle_connections=0 scenario_list=()
fi

if [ "$idle_connections" -gt 0 ]; then
  : >"$out/memory.jsonl"
  for target in "${targets[@]}"; do
    log "memory of $idle_connections idle keep-alive connections -> $(label "$target")"
    idle_memory "$target" >>"$out/memory.jsonl"
  done
fi

results=$out/results.jsonl
: >"$results"
for scenario in "${scenario_list[@]}"; do
  latency=${scenario%%:*} conc=${scenario##*:}
  for target in "${targets[@]}"; do
    log "L=${latency} ms C=$conc ($((conc * 1000 / latency)) req/s offered) -> $(label "$target")"
    run_one "$target" "$latency" "$conc" >>"$results"
    sleep 3 # let the connections of the last run close
  done
done

{
  echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "java: $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1)"
  echo "vegeta: $VEGETA_VERSION; service: $SERVICE_VERSION; heap $HEAP (young $YOUNG); $EVENT_LOOPS event loops; 1 CPU per JVM; warm-up ${WARMUP_S}s from $WARMUP_WORKERS keep-alive clients + $((WARMUP_S / 2))s new connections"
  [ -z "$baseline" ] || echo "baseline: reactive as built at $BASELINE_LABEL ($baseline), the rows marked ($BASELINE_LABEL)"
  [ ${#service_args[@]} = 0 ] || echo "service arguments: ${service_args[*]}"
} >"$out/machine.txt"
"$LL_VENV/bin/python" "$LL_ROOT/scripts/libexec/bench_report.py" "$out"
log "done: $out"
cat "$out"/soak.md "$out"/table.md 2>/dev/null || true
