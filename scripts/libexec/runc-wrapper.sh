#!/bin/bash
# runc wrapper for hosts whose capability bounding set lacks CAP_SYS_RESOURCE (some sandboxed VMs).
# There, runc fails on privileged containers ("unable to apply caps: operation not permitted") and on
# every pod sandbox, whose oom_score_adj (-998) is below the caller's own. This wrapper removes
# CAP_SYS_RESOURCE from the container's capability sets and raises any oomScoreAdj below its own,
# then runs the real runc. Where the capability is present it changes nothing.
#
# Installed by scripts/lib/tools.sh as Docker's default runtime on such hosts, and into the locally
# built kind node image as /usr/local/sbin/runc (the real one is Debian's /usr/sbin/runc).
# Usage: as runc (containerd's shim calls it with runc's arguments). Needs jq.
set -o errexit -o nounset -o pipefail

real_runc() {
  local candidate self
  self=$(readlink -f "$0")
  for candidate in /usr/sbin/runc /usr/bin/runc /usr/local/sbin/runc.real; do
    if [ -x "$candidate" ] && [ "$(readlink -f "$candidate")" != "$self" ]; then
      echo "$candidate"
      return 0
    fi
  done
  echo "runc-wrapper: no real runc found" >&2
  exit 1
}

has_cap_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  (((16#$bnd >> 24) & 1))
}

# patch FILE JQ-PATH: rewrite an OCI spec (or exec process) file in place.
patch() {
  local file=$1 path=$2 own tmp
  own=$(cat /proc/self/oom_score_adj)
  tmp=$(mktemp "$file.XXXXXX")
  jq --argjson own "$own" "
    def drop: if type == \"array\" then map(select(. != \"CAP_SYS_RESOURCE\")) else . end;
    if $path.capabilities then $path.capabilities |= with_entries(.value |= drop) else . end
    | if ($path.oomScoreAdj != null and $path.oomScoreAdj < \$own) then $path.oomScoreAdj = \$own else . end
  " "$file" >"$tmp"
  chmod --reference="$file" "$tmp"
  mv "$tmp" "$file"
}

main() {
  local runc command='' bundle=. process='' prev='' arg
  runc=$(real_runc)
  has_cap_sys_resource && exec "$runc" "$@"
  for arg in "$@"; do
    case $prev in
      --bundle | -b) bundle=$arg ;;
      --process | -p) process=$arg ;;
    esac
    case $arg in
      --bundle=*) bundle=${arg#*=} ;;
      --process=*) process=${arg#*=} ;;
      create | run | exec) [ -n "$command" ] || command=$arg ;;
    esac
    prev=$arg
  done
  case $command in
    create | run) [ -f "$bundle/config.json" ] && patch "$bundle/config.json" .process ;;
    exec) [ -n "$process" ] && [ -f "$process" ] && patch "$process" "" ;;
  esac
  exec "$runc" "$@"
}

main "$@"
