# shellcheck shell=bash
# Docker for liveness-lab: a daemon that answers (started here, as root on Debian, if need be), what the
# machine it runs on offers (CPUs, memory, cgroup version, CAP_SYS_RESOURCE), and the runc wrapper for
# hosts that lack CAP_SYS_RESOURCE. Source after common.sh; sourcing changes nothing.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_DOCKERD_WAIT=60        seconds to wait for a dockerd started here to answer

LL_RUNC_WRAPPER=/usr/local/libexec/liveness-lab/runc

# docker_is_local: the Docker daemon runs on this machine's own kernel (Docker Engine on Linux, or no
# daemon yet, which this script would start here), so this machine's /proc and /sys describe it. Docker
# Desktop (macOS, Windows, Linux) runs it in a VM: only `docker info` tells about that machine.
docker_is_local() {
  local info
  [ "$(uname -s)" = Linux ] || return 1
  info=$(docker info --format '{{.OperatingSystem}}|{{.KernelVersion}}' 2>/dev/null) || return 0
  case $info in *"Docker Desktop"*) return 1 ;; esac
  [ "${info##*|}" = "$(uname -r)" ]
}

# host_has_cap_sys_resource: the Docker machine keeps CAP_SYS_RESOURCE (bit 24) in its capability
# bounding set. Without it 'docker run --privileged' fails ("unable to apply caps") and so does every
# pod sandbox. Only a daemon on this kernel can lack it here; Docker's own VMs have it.
host_has_cap_sys_resource() {
  local bnd
  docker_is_local || return 0
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  [ -n "$bnd" ] && (((16#$bnd >> 24) & 1))
}

# host_on_cgroup_v1: the Docker machine has no unified cgroup hierarchy (kubelet >= 1.35 refuses v1
# unless told otherwise). Asked of the daemon; before one runs, of this Linux machine.
host_on_cgroup_v1() {
  local version
  version=$(docker info --format '{{.CgroupVersion}}' 2>/dev/null || true)
  if [ -n "$version" ]; then
    [ "$version" = 1 ]
  else
    [ "$(uname -s)" = Linux ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]
  fi
}

# docker_resources: "CPUS MEMORY-MIB" of the machine Docker runs on.
docker_resources() {
  local info
  info=$(docker info --format '{{.NCPU}} {{.MemTotal}}' 2>/dev/null) || return 1
  echo "$info" | awk '{printf "%d %d\n", $1, $2 / 1048576}'
}

# What the cluster, the four variants and Locust need from the Docker machine (docs/laptop.md, "What you
# need"). `docker info` reports the memory the machine's kernel manages (MemTotal), a little under what
# it was given: Docker Desktop's VM with 4 GiB reports 3.8 to 3.95 GiB. So 4 GiB given passes when at
# least LL_MIN_MEMORY_MIB - LL_MEMORY_KERNEL_MIB is reported, and 3 GiB (2.8-2.95 reported) does not.
LL_MIN_CPUS=2
LL_MIN_MEMORY_MIB=4096
LL_MEMORY_KERNEL_MIB=512
# check_docker_resources: warn when the Docker machine is smaller than the demo needs.
check_docker_resources() {
  local resources
  resources=$(docker_resources) || return 0
  # shellcheck disable=SC2086 # "CPUS MIB" splits into two words
  set -- $resources
  [ "$1" -ge "$LL_MIN_CPUS" ] ||
    warn "Docker has $1 CPU(s); the demo needs $LL_MIN_CPUS (Docker Desktop: Settings > Resources > CPUs)"
  [ "$2" -ge $((LL_MIN_MEMORY_MIB - LL_MEMORY_KERNEL_MIB)) ] ||
    warn "Docker has $(awk -v mib="$2" 'BEGIN { printf "%.1f", mib / 1024 }') GiB of memory (docker info: what its kernel manages, a little under what it was given); the demo needs $((LL_MIN_MEMORY_MIB / 1024)) GiB (Docker Desktop: Settings > Resources > Memory)"
}

# install_runc_wrapper: Docker's default runtime becomes a runc wrapper that drops CAP_SYS_RESOURCE
# and keeps oom_score_adj within reach (see scripts/libexec/runc_wrapper.py).
install_runc_wrapper() {
  [ -x /usr/bin/python3 ] || apt_install python3 || die "could not install python3 (the runc wrapper runs /usr/bin/python3)" "apt-get install python3"
  mkdir -p "$(dirname "$LL_RUNC_WRAPPER")"
  install -m 0755 "$LL_ROOT/scripts/libexec/runc_wrapper.py" "$LL_RUNC_WRAPPER"
  python3 "$LL_ROOT/scripts/libexec/json_edits.py" docker-runtime /etc/docker/daemon.json "$LL_RUNC_WRAPPER"
  log "runc wrapper: this host lacks CAP_SYS_RESOURCE, so Docker's default runtime is $LL_RUNC_WRAPPER"
}

# start_dockerd: dockerd in the background (for machines without systemd), log in $LL_LOGS.
start_dockerd() {
  local waited=0 limit=${LIVENESS_LAB_DOCKERD_WAIT:-60}
  mkdir -p "$LL_LOGS"
  log "starting dockerd (log: $LL_LOGS/dockerd.log)"
  # setsid: the daemon outlives this script and a Ctrl-C in its terminal.
  setsid /usr/sbin/dockerd >>"$LL_LOGS/dockerd.log" 2>&1 </dev/null & # portable: Debian as root only (ensure_docker)
  until docker info >/dev/null 2>&1; do
    sleep 1
    waited=$((waited + 1))
    [ "$waited" -lt "$limit" ] || die "dockerd did not answer within ${limit}s" "read $LL_LOGS/dockerd.log"
  done
}

# ensure_docker: a Docker daemon that answers; as root on Debian, installs docker.io and starts it.
ensure_docker() {
  local runtime
  if docker info >/dev/null 2>&1; then
    runtime=$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null)
    log "docker: daemon answers (server $(docker version --format '{{.Server.Version}}' 2>/dev/null), runtime $runtime)"
    if ! host_has_cap_sys_resource && [ "$runtime" != liveness-lab-runc ]; then
      warn "this host lacks CAP_SYS_RESOURCE and Docker's default runtime is '$runtime': kind's node will fail to start."
      warn "fix: stop dockerd, run this script again as root (it sets up the runc wrapper and starts dockerd)"
    fi
    return 0
  fi
  if [ "$(uname -s)" = Darwin ]; then
    command -v docker >/dev/null 2>&1 || die "no docker command" "install Docker Desktop (https://docs.docker.com/desktop/), start it, then run this again"
    die "no Docker daemon answers" "start Docker Desktop (open -a Docker) and wait until it says it is running, then run this again"
  fi
  is_root_debian || die "no Docker daemon answers" \
    "install Docker (https://docs.docker.com/engine/install/) and start it, then run this again"
  if [ ! -x /usr/sbin/dockerd ]; then
    log "docker: installing Debian's docker.io"
    apt_install docker.io || die "could not install docker.io" "apt-get install docker.io"
  fi
  command -v docker >/dev/null || die "docker CLI missing after installing docker.io" "apt-get install docker.io"
  host_has_cap_sys_resource || install_runc_wrapper
  pgrep -x dockerd >/dev/null && die "a dockerd is running but does not answer" "read $LL_LOGS/dockerd.log or stop it"
  start_dockerd
  log "docker: started dockerd (server $(docker version --format '{{.Server.Version}}'))"
}
