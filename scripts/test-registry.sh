#!/usr/bin/env bash
# The registry path of scripts/cluster-up.sh, proven on a machine that no container registry or
# download site answers: a simulation on 127.0.0.1. Debian's docker-registry stands in for Docker Hub
# (as Docker's registry mirror) holding stand-ins of the official images, built from the locally built
# ones and pushed under Docker Hub's names (kindest/node, eclipse-temurin JRE and JDK, locustio/locust);
# a local file server stands in for the kind, helm and kubectl release downloads (checksum files in the
# official formats). Then the real end-to-end test (scripts/test-e2e.sh) runs on a copy of the working
# tree with an empty cache and a PATH without Go, kind, helm, kubectl or a JDK, so every image must be
# pulled, every tool downloaded and the jar built inside Docker; a second scripts/cluster-up.sh must
# restart no pod. Linux, root, Docker Engine on this machine (dockerd is reloaded with SIGHUP for the
# mirror setting, never restarted). What this proves and what it does not: docs/laptop.md,
# "What the simulation proves and does not prove".
#
# Usage: scripts/test-registry.sh [--keep] [--no-e2e] [--down] [--purge] [--help]
#   --keep     leave the cluster, the registry, the file server and the mirror setting up afterwards
#   --no-e2e   stop after the stand-ins, the file server and the mirror (no cluster is created)
#   --down     stop what a --keep run left (cluster, registry, file server, mirror setting) and exit
#   --purge    like --down, and also remove the registry's storage, the stand-in images and the
#              simulation's caches (<cache>/registry-sim)
#
# Environment (defaults):
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   the Go-built tools served as downloads, and
#                                              registry-sim/ (registry storage, tree copy, e2e cache)
#   LIVENESS_LAB_SIM_REGISTRY_PORT=5000        first port tried for the registry (the next free one is taken)
#   LIVENESS_LAB_SIM_FILES_PORT=8780           first port tried for the file server
#   the LIVENESS_LAB_* settings of scripts/test-e2e.sh pass through, except LIVENESS_LAB_REGISTRY
#   (unset: the detection is under test), LIVENESS_LAB_CACHE, _DOWNLOAD_MIRROR and _NODE_IMAGE (set here)
# Logs: <cache>/logs/registry-sim-*.log; the e2e's own under <cache>/registry-sim/e2e-cache/logs.
# Ends with "N passed, N failed"; exits non-zero when any check fails.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

# The caller's PATH, before use_tools_bin puts .tools/bin first: the e2e's PATH is made from it.
ORIG_PATH=$PATH

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/checks.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/airgap.sh"
. "$LL_ROOT/scripts/libexec/macos-userland.sh"
use_tools_bin

# The official node image by tag: its pinned digest (KIND_NODE_IMAGE) is one no stand-in can have, so
# the e2e pins the stand-in's own digest instead (LIVENESS_LAB_NODE_IMAGE=kindest/node:TAG@DIGEST).
HUB_NODE_IMAGE=${KIND_NODE_IMAGE%%@*}
# The Python of the official locustio/locust image (its base is python:3.13-slim).
STANDIN_PYTHON=3.13

SIM=$LL_CACHE/registry-sim
STATE=$SIM/state
TREE=$SIM/tree
E2E_CACHE=$SIM/e2e-cache
FILES=$SIM/files
# Local tags of the built stand-ins: not Docker Hub's names, so nothing here shadows an official image;
# kept between runs as the build cache.
SIM_REPO=liveness-lab-sim
export DOCKER_BUILDKIT=0 # Debian's Docker 20.10 and no buildx: the legacy builder, said once

KEEP=0
NO_E2E=0
DOWN=0
PURGE=0
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --keep) KEEP=1 ;;
      --no-e2e) NO_E2E=1 ;;
      --down) DOWN=1 ;;
      --purge) DOWN=1 PURGE=1 ;;
      -h | --help) ll_usage; exit 0 ;;
      *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
    esac
    shift
  done
}


# --- processes started here: a pid file each, and a kill only of the process it names ---

# port_taken PORT: something answers TCP on 127.0.0.1:PORT.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port FIRST: FIRST, or the next port up to FIRST+20 that nothing listens on.
free_port() {
  local port=$1
  while port_taken "$port"; do
    port=$((port + 1))
    [ "$port" -le $(($1 + 20)) ] || die "no free port in $1-$(($1 + 20)) on 127.0.0.1" "free one, or set the port variable (see --help)"
  done
  echo "$port"
}

# stop_started NAME: ends the process that STATE/NAME.pid names, if it is still the one started here
# (its command line holds STATE/NAME's marker, the path of its config or directory).
stop_started() {
  local pidfile=$STATE/$1.pid pid marker waited=0
  [ -f "$pidfile" ] || return 0
  read -r pid marker <"$pidfile" || true
  if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$marker"; then
    kill "$pid" 2>/dev/null || true
    while [ -d "/proc/$pid" ] && [ "$waited" -lt 10 ]; do sleep 1; waited=$((waited + 1)); done
  fi
  rm -f "$pidfile"
}

# wait_http URL: URL answers 2xx within 15 s.
wait_http() { ll_retry 15 curl -fsS -o /dev/null -m 2 "$1" 2>/dev/null; }

# --- 1. the registry: Debian's docker-registry, our own process on 127.0.0.1 ---

REGISTRY=
# install_docker_registry: Debian's package, with its init script kept from starting the packaged
# service (which would listen on every address): a policy-rc.d that refuses, only while apt runs and
# only when the machine has none of its own.
POLICY_RC=/usr/sbin/policy-rc.d
POLICY_CREATED=0
install_docker_registry() {
  [ -x /usr/bin/docker-registry ] && return 0
  if [ ! -e "$POLICY_RC" ]; then
    printf '#!/bin/sh\n# scripts/test-registry.sh: no service starts while docker-registry installs\nexit 101\n' >"$POLICY_RC"
    chmod 0755 "$POLICY_RC"
    POLICY_CREATED=1
  fi
  log "installing Debian's docker-registry"
  apt_install docker-registry || { drop_policy_rc; die "could not install docker-registry" "apt-get install docker-registry"; }
  drop_policy_rc
}
drop_policy_rc() { if [ "$POLICY_CREATED" = 1 ]; then rm -f "$POLICY_RC"; POLICY_CREATED=0; fi; }

start_registry() {
  local port config=$SIM/registry/config.yml
  install_docker_registry
  port=$(free_port "${LIVENESS_LAB_SIM_REGISTRY_PORT:-5000}")
  mkdir -p "$SIM/registry/storage" "$STATE" "$LL_LOGS"
  cat >"$config" <<EOF
# docker-registry of scripts/test-registry.sh: Docker Hub's stand-in, on loopback only.
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: $SIM/registry/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  headers:
    X-Content-Type-Options: [nosniff]
EOF
  # setsid: it outlives a Ctrl-C in this terminal until the trap stops it (and a --keep run).
  setsid /usr/bin/docker-registry serve "$config" >>"$LL_LOGS/registry-sim-registry.log" 2>&1 </dev/null &
  echo "$! $config" >"$STATE/registry.pid"
  REGISTRY=127.0.0.1:$port
  wait_http "http://$REGISTRY/v2/" || { tail -n 5 "$LL_LOGS/registry-sim-registry.log"; return 1; }
  echo "docker-registry $(/usr/bin/docker-registry --version | awk '{print $NF}') on $REGISTRY, storage $SIM/registry/storage (log: $LL_LOGS/registry-sim-registry.log)"
}

# --- 2. the stand-ins ---

# hub_path NAME:TAG: the repository path Docker Hub (and so a mirror of it) serves NAME under.
hub_path() { case ${1%%:*} in */*) echo "$1" ;; *) echo "library/$1" ;; esac; }
# sim_tag NAME:TAG: the local tag of NAME's stand-in.
sim_tag() { local name=${1%%:*}; echo "$SIM_REPO/${name//\//-}:${1##*:}"; }

# temurin_dockerfile BASE KIND: eclipse-temurin:25-{jre,jdk}-noble (adoptium/containers 25/{jre,jdk}/
# ubuntu/noble/Dockerfile). Reproduced: JAVA_HOME=/opt/java/openjdk with its bin first on PATH, a Java
# 25 runtime (and javac, jshell in the JDK), ca-certificates, tar and gzip, neither curl nor wget (the
# official build purges wget; Ubuntu's base has no curl), root as the user, an entrypoint that runs the
# command (/__cacert_entrypoint.sh), jshell as the JDK's CMD. Not reproduced: Ubuntu 24.04 (this is
# Debian trixie), Temurin's own build (this is Debian's OpenJDK 25, linked at /opt/java/openjdk), the
# en_US.UTF-8 locale (C.UTF-8 here), fontconfig, tzdata, binutils, the CDS archive, JAVA_VERSION,
# the ubuntu user (uid 1000), and the entrypoint's USE_SYSTEM_CA_CERTS import.
temurin_dockerfile() {
  cat <<EOF
FROM $1
USER root
RUN set -eu; \\
    jvm=\$(dirname "\$(dirname "\$(readlink -f "\$(command -v java)")")"); \\
    mkdir -p /opt/java && ln -sfn "\$jvm" /opt/java/openjdk; \\
    for tool in curl wget; do if dpkg -s "\$tool" >/dev/null 2>&1; then dpkg --purge "\$tool"; fi; done; \\
    if command -v curl || command -v wget; then echo "curl or wget is still here" >&2; exit 1; fi
ENV JAVA_HOME=/opt/java/openjdk
ENV PATH=/opt/java/openjdk/bin:\$PATH
COPY entrypoint.sh /__cacert_entrypoint.sh
ENTRYPOINT ["/__cacert_entrypoint.sh"]
EOF
  [ "$2" = jre ] || echo 'CMD ["jshell"]'
}

temurin_entrypoint() {
  cat <<'EOF'
#!/bin/sh
# Stand-in of Temurin's /__cacert_entrypoint.sh: the official one first imports extra CA certificates
# when USE_SYSTEM_CA_CERTS is set; without it, as here, it only runs the command.
set -e
exec "$@"
EOF
}

# locust_dockerfile BASE VERSION: locustio/locust:VERSION (locustio/locust's Dockerfile: python:3-slim,
# a venv in /opt/venv first on PATH, `useradd --create-home locust`, WORKDIR /home/locust, ENTRYPOINT
# ["locust"], PYTHONUNBUFFERED=1, EXPOSE 8089 5557). Reproduced: all of that, with Python 3.13 and
# locust==VERSION from PyPI (the build's pip reaches PyPI through the CA the local image trusts). Not
# reproduced: the python:3.13-slim base (Python is Debian's /usr/bin/python3, not /usr/local/bin), and
# any package the official image adds beyond locust's own dependencies.
locust_dockerfile() {
  cat <<EOF
FROM $1
USER root
ENV PATH=/opt/venv/bin:\$PATH \\
    PYTHONUNBUFFERED=1
RUN python3 -m venv /opt/venv \\
 && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check locust==$2 \\
 && useradd --create-home locust
EXPOSE 8089 5557
USER locust
WORKDIR /home/locust
ENTRYPOINT ["locust"]
EOF
}

# node_cni_manifest: kindest/node's /kind/manifests/default-cni.yaml is kindnetd, which kind applies
# unless the config disables the default CNI (the registry path does not). kindnetd's image cannot be
# had here, and the locally built node image brings a static CNI config instead; so the stand-in's file
# holds one harmless object, which kind's `kubectl create` accepts (an object-less file fails it).
node_cni_manifest() {
  cat <<'EOF'
# kindest/node stand-in (scripts/test-registry.sh): pod networking is the static CNI config in
# /etc/cni/net.d of the locally built node image; kindnetd's image is not available here.
apiVersion: v1
kind: ConfigMap
metadata:
  name: liveness-lab-static-cni
  namespace: kube-system
data:
  note: "single-node static CNI (ptp + host-local + portmap), see /etc/cni/net.d"
EOF
}

# node_cni_has_object IMAGE: IMAGE's default-cni.yaml holds at least one object.
node_cni_has_object() {
  docker run --rm --network none --entrypoint grep "$1" -q '^kind:' /kind/manifests/default-cni.yaml
}

# build_standin KEY: the stand-in image for KEY (jre, jdk, locust, node), tagged sim_tag.
build_standin() {
  local key=$1 official local_base ctx tag
  read -r official local_base <<<"$(standin "$key")"
  tag=$(sim_tag "$official")
  ctx=$SIM/build/$key
  rm -rf "$ctx" && mkdir -p "$ctx"
  case $key in
    jre | jdk)
      temurin_dockerfile "$local_base" "$key" >"$ctx/Dockerfile"
      temurin_entrypoint >"$ctx/entrypoint.sh"
      chmod 0755 "$ctx/entrypoint.sh" ;;
    locust) locust_dockerfile "$local_base" "${official##*:}" >"$ctx/Dockerfile" ;;
    node)
      # kindest/node: the locally built node image under kindest/node's name, plus the CNI file
      # above when the local image's has no object.
      if node_cni_has_object "$local_base"; then
        docker tag "$local_base" "$tag"
        echo "$tag: $local_base retagged"
        return 0
      fi
      node_cni_manifest >"$ctx/default-cni.yaml"
      printf 'FROM %s\nCOPY default-cni.yaml /kind/manifests/default-cni.yaml\n' "$local_base" >"$ctx/Dockerfile" ;;
  esac
  docker build --label "io.livenesslab.standin=$official from $local_base" -t "$tag" "$ctx"
}

# standin KEY: "OFFICIAL-NAME LOCAL-BASE" of a stand-in.
standin() {
  case $1 in
    jre) echo "$JRE_BASE_IMAGE $LOCAL_JRE_BASE_IMAGE" ;;
    jdk) echo "$JDK_BASE_IMAGE $LOCAL_JDK_BASE_IMAGE" ;;
    locust) echo "$LOCUST_BASE_IMAGE $LOCAL_PYTHON_BASE_IMAGE" ;;
    node) echo "$HUB_NODE_IMAGE $(local_node_image)" ;;
  esac
}
STANDINS=(jre jdk locust node)

# push_standin KEY: the stand-in into the registry under its Docker Hub path; its digest in STATE.
push_standin() {
  local key=$1 official ref out digest
  read -r official _ <<<"$(standin "$key")"
  ref=$REGISTRY/$(hub_path "$official")
  docker tag "$(sim_tag "$official")" "$ref"
  out=$(docker push "$ref") || { echo "$out"; docker rmi "$ref" >/dev/null; return 1; }
  docker rmi "$ref" >/dev/null
  digest=$(echo "$out" | sed -n 's/.*: digest: \(sha256:[0-9a-f]*\) size: .*/\1/p' | tail -n 1)
  [ -n "$digest" ] || { echo "$out"; echo "no digest in docker push's output"; return 1; }
  echo "$digest" >"$STATE/digest-$key"
  echo "pushed $ref@$digest"
}

# registry_digest PATH:TAG: the digest the registry serves for PATH:TAG (Docker-Content-Digest).
registry_digest() {
  curl -fsS -I -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://$REGISTRY/v2/${1%%:*}/manifests/${1##*:}" | tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p'
}

# standin_pushed KEY: built from its local base, pushed, and served under Docker Hub's name.
standin_pushed() {
  local key=$1 official local_base served
  read -r official local_base <<<"$(standin "$key")"
  step "registry-sim-build-$key" build_standin "$key" || return 1
  step "registry-sim-push-$key" push_standin "$key" || return 1
  served=$(registry_digest "$(hub_path "$official")")
  echo "$official: $(docker image inspect --format '{{.Size}}' "$(sim_tag "$official")" | awk '{printf "%d MB", $1 / 1e6}'), served as $REGISTRY/$(hub_path "$official")@$served"
  [ -n "$served" ] && [ "$served" = "$(cat "$STATE/digest-$key")" ]
}

# in_standin KEY COMMAND...: COMMAND in a throw-away container of KEY's stand-in, without network.
in_standin() {
  local key=$1 official
  shift
  read -r official _ <<<"$(standin "$key")"
  docker run --rm --network none "$(sim_tag "$official")" "$@"
}

# verify_temurin KEY: what the service's build and image rely on, and no curl or wget.
verify_temurin() {
  # shellcheck disable=SC2016 # for the container's shell
  in_standin "$1" sh -c '
    set -e
    echo "JAVA_HOME=$JAVA_HOME, java: $(command -v java)"
    [ "$JAVA_HOME" = /opt/java/openjdk ] && [ "$(command -v java)" = /opt/java/openjdk/bin/java ]
    java -XshowSettings:properties -version 2>&1 | grep -q "java.specification.version = 25"
    java -version 2>&1 | head -n 1
    if [ "$1" = jdk ]; then javac -version && command -v jshell >/dev/null; fi
    for tool in curl wget; do
      if command -v "$tool"; then echo "$tool is present: the official image has none"; exit 1; fi
    done
    echo "no curl, no wget"' sh "$1"
}

verify_locust() {
  local official version out config
  read -r official _ <<<"$(standin locust)"
  version=${official##*:}
  out=$(in_standin locust --version 2>&1) || { echo "$out"; return 1; }
  echo "$out"
  case $out in *"locust $version from /opt/venv/"*"Python $STANDIN_PYTHON."*) ;; *) echo "want locust $version from /opt/venv on Python $STANDIN_PYTHON"; return 1 ;; esac
  # shellcheck disable=SC2016 # for the container's shell
  out=$(docker run --rm --network none --entrypoint sh "$(sim_tag "$official")" -c 'echo "$(id -un) $(pwd) ${PATH%%:*}"')
  echo "user, workdir, PATH first: $out"
  [ "$out" = "locust /home/locust /opt/venv/bin" ] || return 1
  config=$(docker image inspect --format '{{json .Config.Entrypoint}}' "$(sim_tag "$official")")
  echo "entrypoint: $config"
  [ "$config" = '["locust"]' ]
}

verify_node() {
  local official out
  read -r official _ <<<"$(standin node)"
  out=$(docker run --rm --network none --entrypoint cat "$(sim_tag "$official")" /kind/version)
  echo "/kind/version: $out"
  [ "$out" = "$KUBERNETES_VERSION" ] && node_cni_has_object "$(sim_tag "$official")"
}

# hub_refs KEY: the local references that shadow KEY's Docker Hub name (its tag, and a pull by the
# pushed digest), one per line.
hub_refs() {
  local official digest
  read -r official _ <<<"$(standin "$1")"
  docker image inspect "$official" >/dev/null 2>&1 && echo "$official"
  digest=$(cat "$STATE/digest-$1" 2>/dev/null || true)
  [ -z "$digest" ] || ! docker image inspect "${official%%:*}@$digest" >/dev/null 2>&1 || echo "${official%%:*}@$digest"
  return 0
}

# remove_hub_refs: untags every stand-in under its Docker Hub name, so cluster-up has to pull it (the
# image itself stays while a local sim tag or the locally built image holds it).
remove_hub_refs() {
  local key ref
  for key in "${STANDINS[@]}"; do
    # One at a time: untagging the last tag of a repository drops its digest reference too.
    for ref in $(hub_refs "$key"); do
      docker image inspect "$ref" >/dev/null 2>&1 || continue
      docker rmi "$ref" >/dev/null 2>&1 || echo "could not untag $ref"
    done
  done
}

no_hub_refs() {
  local key refs=
  remove_hub_refs
  for key in "${STANDINS[@]}"; do refs+=$(hub_refs "$key"); done
  [ -z "$refs" ] || { echo "still here: $refs"; return 1; }
  echo "none of $(for key in "${STANDINS[@]}"; do standin "$key" | awk '{printf "%s ", $1}'; done)is here: each must be pulled"
}

# ensure_local_images: the locally built bases of the stand-ins, as scripts/lib/airgap.sh makes them
# today. Its builders are called every time: an image of the current recipe is left alone ("up to
# date"), an older one (say, from before the bases trusted this machine's CA) is rebuilt, a minute or
# two each. The node image takes 15-20 minutes and comes from cluster-up; any one built here will do.
ensure_local_images() {
  local image builder
  for image in "$LOCAL_JRE_BASE_IMAGE:build_jre_image" "$LOCAL_JDK_BASE_IMAGE:build_jdk_image" \
    "$LOCAL_PYTHON_BASE_IMAGE:build_python_image"; do
    builder=${image##*:}
    image=${image%:*}
    declare -F "$builder" >/dev/null ||
      { echo "scripts/lib/airgap.sh has no $builder to build $image"; return 1; }
    step "registry-sim-$builder" "$builder" || return 1
    tail -n 1 "$LL_LOGS/registry-sim-$builder.log"
  done
  if ! docker image inspect "$(local_node_image)" >/dev/null 2>&1; then
    echo "the locally built node image $(local_node_image) is missing (the kindest/node stand-in is made from it)"
    echo "fix: LIVENESS_LAB_REGISTRY=no scripts/cluster-up.sh builds it (15-20 min), then scripts/cluster-down.sh"
    return 1
  fi
  echo "node image: $(local_node_image)"
}

# --- 3. the tool downloads: the Go-built binaries in the official layout, on a local file server ---

FILES_URL=
# built_tool NAME: the Go-built NAME of the pinned version in the cache, built when missing.
built_tool() {
  local name=$1 dir
  case $name in
    kubectl) dir=$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin ;;
    *) dir=$LL_CACHE/$name-$(pinned_version "$name")/bin ;;
  esac
  if [ ! -x "$dir/$name" ]; then
    ensure_go
    step "registry-sim-build-$name" "build_$name" "$dir" >&2
  fi
  echo "$dir/$name"
}

# publish FILE RELPATH: FILE at FILES/RELPATH.
publish() { mkdir -p "$FILES/$(dirname "$2")" && cp "$1" "$FILES/$2" && chmod 0755 "$FILES/$2"; }
sha_of() { sha256sum "$1" | awk '{print $1}'; }
# since START: seconds since START (ll_now_precise), to a tenth.
since() { awk -v a="$1" -v b="$(ll_now_precise)" 'BEGIN { printf "%.1f", b - a }'; }

# TOOL_PATHS: the official download paths (https://HOST/PATH, as HOST/PATH) of kind, helm, kubectl
# and their checksum files, written here from the projects' release pages, not from tools.sh (which is
# under test).
TOOL_PATHS=()
lay_out_downloads() {
  local os arch kind helm kubectl staging
  os=$(ll_os) arch=$(ll_arch)
  kind=github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION/kind-$os-$arch
  helm=get.helm.sh/helm-$HELM_VERSION-$os-$arch.tar.gz
  kubectl=dl.k8s.io/release/$KUBERNETES_VERSION/bin/$os/$arch/kubectl
  TOOL_PATHS=("$kind" "$kind.sha256sum" "$helm" "$helm.sha256sum" "$kubectl" "$kubectl.sha256")
  rm -rf "$FILES" && mkdir -p "$FILES"
  # kind: the binary; "HASH  kind-linux-amd64".
  publish "$(built_tool kind)" "$kind"
  printf '%s  %s\n' "$(sha_of "$FILES/$kind")" "${kind##*/}" >"$FILES/$kind.sha256sum"
  # helm: a tarball holding OS-ARCH/helm (and a README, as the official one has with LICENSE);
  # "HASH  helm-VERSION-OS-ARCH.tar.gz".
  staging=$(mktemp -d)
  mkdir -p "$staging/$os-$arch"
  install -m 0755 "$(built_tool helm)" "$staging/$os-$arch/helm"
  echo "helm $HELM_VERSION built from source: the stand-in of Helm's release tarball (scripts/test-registry.sh)" >"$staging/$os-$arch/README.md"
  mkdir -p "$FILES/$(dirname "$helm")"
  tar -C "$staging" --owner=0 --group=0 -czf "$FILES/$helm" "$os-$arch"
  rm -rf "$staging"
  printf '%s  %s\n' "$(sha_of "$FILES/$helm")" "${helm##*/}" >"$FILES/$helm.sha256sum"
  # kubectl: the binary; the bare hash, no newline.
  publish "$(built_tool kubectl)" "$kubectl"
  printf '%s' "$(sha_of "$FILES/$kubectl")" >"$FILES/$kubectl.sha256"
}

start_file_server() {
  local port
  lay_out_downloads
  port=$(free_port "${LIVENESS_LAB_SIM_FILES_PORT:-8780}")
  setsid python3 -u -m http.server --bind 127.0.0.1 --directory "$FILES" "$port" \
    >>"$LL_LOGS/registry-sim-files.log" 2>&1 </dev/null &
  echo "$! $FILES" >"$STATE/files.pid"
  FILES_URL=http://127.0.0.1:$port
  local path
  wait_http "$FILES_URL/" || return 1
  for path in "${TOOL_PATHS[@]}"; do
    curl -fsS -o /dev/null "$FILES_URL/$path" || { echo "not served: $FILES_URL/$path"; return 1; }
  done
  echo "serving $FILES on $FILES_URL (log: $LL_LOGS/registry-sim-files.log):"
  (cd "$FILES" && find . -type f -printf '  %P  %s bytes\n' | sort)
}

# --- 4. the registry as Docker's mirror for Docker Hub ---

DAEMON_JSON=/etc/docker/daemon.json
# dockerd_reload: SIGHUP to the running dockerd, which re-reads daemon.json (registry-mirrors is one of
# the settings it reloads); never a restart, which would stop every container.
dockerd_reload() {
  local pid
  pid=$(cat /var/run/docker.pid 2>/dev/null || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || pid=$(pgrep -x dockerd || true)
  [ "$(echo "$pid" | wc -w)" = 1 ] || { echo "want one dockerd, found: '${pid:-none}'"; return 1; }
  kill -HUP "$pid"
}

# daemon_json JQ-PROGRAM MIRROR: daemon.json rewritten by a jq program ($m is the mirror URL); every
# other key (runtimes, default-runtime...) is kept.
daemon_json() {
  local tmp
  tmp=$(mktemp)
  { [ -s "$DAEMON_JSON" ] && cat "$DAEMON_JSON" || echo '{}'; } | jq --arg m "$2" "$1" >"$tmp"
  mkdir -p "$(dirname "$DAEMON_JSON")"
  cat "$tmp" >"$DAEMON_JSON" # in place: keeps the file's owner and mode
  rm -f "$tmp"
}
# shellcheck disable=SC2016 # $m is jq's variable
ADD_MIRROR='.["registry-mirrors"] = [$m] + ((.["registry-mirrors"] // []) - [$m])'
# An empty list, not a missing key: dockerd's reload leaves its mirrors as they were when daemon.json
# does not name the setting at all.
# shellcheck disable=SC2016 # $m is jq's variable
DROP_MIRROR='.["registry-mirrors"] = ((.["registry-mirrors"] // []) - [$m])'

# docker_mirrors: the mirrors the daemon uses now, one per line.
docker_mirrors() { docker info --format '{{range .RegistryConfig.Mirrors}}{{println .}}{{end}}' 2>/dev/null; }

# mirror_listed URL: the daemon lists URL (it adds a trailing slash) among its mirrors.
mirror_listed() { docker_mirrors | grep -qxF "${1%/}/"; }

# mirror_in_effect URL: the daemon lists URL among its mirrors, within 10 s.
mirror_in_effect() { ll_retry 10 mirror_listed "$1"; }

# mirror_gone URL: the daemon does not list URL among its mirrors.
mirror_gone() { ! mirror_listed "$1"; }

set_mirror() {
  ensure_pkg jq jq
  echo "http://$REGISTRY" >"$STATE/mirror"
  # Whether daemon.json had the key before: if not, it goes again once the daemon has dropped our mirror.
  if [ -s "$DAEMON_JSON" ] && jq -e 'has("registry-mirrors")' "$DAEMON_JSON" >/dev/null; then
    echo 0 >"$STATE/mirror-key-added"
  else
    echo 1 >"$STATE/mirror-key-added"
  fi
  daemon_json "$ADD_MIRROR" "http://$REGISTRY"
  dockerd_reload || return 1
  mirror_in_effect "http://$REGISTRY" || { echo "docker info lists: $(docker_mirrors | tr '\n' ' ')"; return 1; }
  echo "daemon.json: $(jq -c . "$DAEMON_JSON")"
  echo "docker info: Registry Mirrors: $(docker_mirrors | tr '\n' ' ')"
}

# drop_mirror: the mirror an earlier or this run set, out of daemon.json and out of the running daemon
# (reloaded with the list without it), then daemon.json as it was.
drop_mirror() {
  local url
  url=$(cat "$STATE/mirror" 2>/dev/null || true)
  [ -n "$url" ] || return 0
  daemon_json "$DROP_MIRROR" "$url"
  dockerd_reload || true
  ll_retry 10 mirror_gone "$url" ||
    warn "dockerd still lists the mirror $url (docker info); its next reload or restart drops it"
  if [ "$(cat "$STATE/mirror-key-added" 2>/dev/null)" = 1 ] && jq -e '.["registry-mirrors"] == []' "$DAEMON_JSON" >/dev/null; then
    # No reload: the daemon has an empty list already, which is what a missing key means at start.
    daemon_json 'del(.["registry-mirrors"])' "$url"
  fi
  rm -f "$STATE/mirror" "$STATE/mirror-key-added"
}

# pull_through_mirror: a pull of Docker Hub names (the node by its pushed digest, as cluster-up's pin
# is, and the JRE by tag) goes to the mirror; the tags are removed again afterwards. The stand-ins'
# layers are already local (the node shares them with the locally built node image), so the pull moves
# manifests and configs only; what a pull without them would fetch is timed straight from the registry.
pull_through_mirror() {
  local node jre started digest layers bytes
  read -r node _ <<<"$(standin node)"
  read -r jre _ <<<"$(standin jre)"
  digest=$(cat "$STATE/digest-node")
  started=$(ll_now_precise)
  docker pull -q "${node%%:*}:${node##*:}@$digest" || return 1
  echo "docker pull of ${node%%:*}@$digest: $(since "$started")s"
  started=$(ll_now_precise)
  docker pull -q "$jre" || return 1
  echo "docker pull of $jre: $(since "$started")s"
  grep -q "GET /v2/$(hub_path "${node%%:*}")/manifests/$digest" "$LL_LOGS/registry-sim-registry.log" ||
    { echo "the registry's log shows no pull of the node image"; return 1; }
  remove_hub_refs
  # The node's layers, fetched as a pull without them would (compressed; no unpacking).
  layers=$(curl -fsS -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://$REGISTRY/v2/$(hub_path "${node%%:*}")/manifests/$digest" | jq -r '.layers[].digest')
  started=$(ll_now_precise)
  bytes=0
  for digest in $layers; do
    bytes=$((bytes + $(curl -fsS -o /dev/null -w '%{size_download}' "http://$REGISTRY/v2/$(hub_path "${node%%:*}")/blobs/$digest")))
  done
  echo "the node image's $(echo "$layers" | wc -w) layers, $((bytes / 1000000)) MB compressed, fetched from the registry in $(since "$started")s"
}

# --- 5. the registry path end to end, on a copy of the working tree ---

INNER_PATH=
CLUSTER_UP=0
NODE_REF=

# cluster_present: a kind node of cluster KIND_CLUSTER_NAME exists in Docker.
cluster_present() {
  [ -n "$(docker ps -aq --filter "label=io.x-k8s.kind.cluster=$KIND_CLUSTER_NAME")" ]
}
no_cluster_yet() {
  if cluster_present; then
    echo "a kind cluster '$KIND_CLUSTER_NAME' exists (another test or a demo?): it would be reused, not made by the registry path"
    echo "fix: scripts/cluster-down.sh (or scripts/test-registry.sh --down after a --keep run), then run this again"
    return 1
  fi
}

# copy_tree: the working tree's tracked and untracked-not-ignored files into TREE (its .venv is kept:
# the same pins install the same packages, and PyPI is not what is under test), made a git work tree
# with every file added, as a clone is: the images' source hashes leave out what .gitignore names
# (service/target/, which the e2e's Locust tests build, among them).
copy_tree() {
  mkdir -p "$TREE"
  find "$TREE" -mindepth 1 -maxdepth 1 ! -name .venv -exec rm -rf {} +
  (cd "$LL_ROOT" && git ls-files -z -c -o --exclude-standard |
    while IFS= read -r -d '' f; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done |
    tar --null -T - -cf -) | tar -C "$TREE" -xf -
  rm -rf "$TREE/.git"
  (cd "$TREE" && git init -q && git add -A) || return 1
  echo "$(find "$TREE" \( -path "$TREE/.venv" -o -path "$TREE/.git" \) -prune -o -type f -print | wc -l) files of $LL_ROOT in $TREE"
}

# make_inner_path: ORIG_PATH without Go, kind, helm, kubectl or a JDK (java, javac, mvn): a directory
# that holds one is replaced by a directory of links to everything else in it; .tools/bin of this tree
# is left out.
FORBIDDEN_TOOLS=(go gofmt kind helm kubectl java javac mvn)
# forbidden NAME: NAME is one of FORBIDDEN_TOOLS.
forbidden() { local tool; for tool in "${FORBIDDEN_TOOLS[@]}"; do [ "$1" != "$tool" ] || return 0; done; return 1; }
make_inner_path() {
  local dirs dir real n=0 farm entry seen=" " tool root
  root=$(cd "$LL_ROOT" && pwd -P)
  INNER_PATH=
  rm -rf "$SIM/path"
  IFS=: read -ra dirs <<<"$ORIG_PATH"
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || continue
    real=$(cd "$dir" && pwd -P)
    case $real in "$root"/*) continue ;; esac
    case $seen in *" $real "*) continue ;; esac
    seen+="$real "
    for tool in "${FORBIDDEN_TOOLS[@]}"; do [ ! -e "$dir/$tool" ] || break; done
    if [ -e "$dir/$tool" ]; then
      farm=$SIM/path/$n
      n=$((n + 1))
      mkdir -p "$farm"
      for entry in "$dir"/* "$dir"/.[!.]*; do
        if [ ! -e "$entry" ] || forbidden "${entry##*/}"; then continue; fi
        ln -s "$entry" "$farm/${entry##*/}"
      done
      echo "PATH: $dir -> $farm (the same without ${FORBIDDEN_TOOLS[*]})"
      dir=$farm
    fi
    INNER_PATH+=${INNER_PATH:+:}$dir
  done
  for tool in "${FORBIDDEN_TOOLS[@]}"; do
    if PATH=$INNER_PATH command -v "$tool" >/dev/null; then echo "$tool is still on the PATH: $(PATH=$INNER_PATH command -v "$tool")"; return 1; fi
  done
  for tool in docker curl git python3 tar; do
    PATH=$INNER_PATH command -v "$tool" >/dev/null || { echo "$tool is missing from the PATH"; return 1; }
  done
  # A Mac's userland where Debian can imitate it (scripts/libexec/macos-userland.sh): BWK awk as awk, BSD
  # date, sed -i, wc and paste, and none of GNU's timeout, nproc, sha256sum... that a Mac lacks.
  ensure_pkg original-awk original-awk
  make_userland "$SIM/path/macos" || return 1
  INNER_PATH=$SIM/path/macos:$(path_without_gnu_only "$INNER_PATH" "$SIM/path/gnu-less")
  [ "$(PATH=$INNER_PATH command -v awk)" = "$SIM/path/macos/awk" ] || { echo "awk is not BWK's"; return 1; }
  for tool in "${MACOS_MISSING[@]}"; do
    if PATH=$INNER_PATH command -v "$tool" >/dev/null; then echo "$tool (not on a Mac) is still on the PATH"; return 1; fi
  done
  echo "macOS userland: $(PATH=$INNER_PATH awk -version 2>&1 | head -n 1) as awk; no ${MACOS_MISSING[*]}"
  echo "PATH=$INNER_PATH"
}

# inner COMMAND...: COMMAND in TREE as the registry path sees it: the e2e PATH, the empty cache, the
# file server as download mirror, the stand-in node pinned by digest, registry detection automatic,
# and nothing of this script's own settings.
inner() {
  (
    for var in $(compgen -e); do
      case $var in LL_* | GOROOT | GOPATH | GOBIN | GOFLAGS | GOTOOLCHAIN | JAVA_HOME | LIVENESS_LAB_REGISTRY | LIVENESS_LAB_LOGS) unset "$var" ;; esac
    done
    export PATH=$INNER_PATH LIVENESS_LAB_CACHE=$E2E_CACHE LIVENESS_LAB_DOWNLOAD_MIRROR=$FILES_URL \
      LIVENESS_LAB_NODE_IMAGE=$NODE_REF
    cd "$TREE" && exec "$@"
  )
}

# pod_states: every pod of the cluster with its UID and restart counts, one per line, sorted.
pod_states() {
  inner .tools/bin/kubectl --context "kind-$KIND_CLUSTER_NAME" get pods -A \
    -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.metadata.uid} {.status.containerStatuses[*].restartCount}{"\n"}{end}' | sort
}

FILES_LOG_MARK=0
run_e2e() {
  local log=$LL_LOGS/registry-sim-e2e.log rc=0
  rm -rf "$E2E_CACHE" && mkdir -p "$E2E_CACHE"
  FILES_LOG_MARK=$(wc -l <"$LL_LOGS/registry-sim-files.log")
  CLUSTER_UP=1
  # --no-lab: the lab's scenarios prove nothing about where images and tools come from.
  step registry-sim-e2e inner scripts/test-e2e.sh --keep --no-lab || rc=$?
  grep -E '^(ok|FAIL)  ' "$log" | sed 's/^/  e2e: /'
  tail -n 1 "$log" | sed 's/^/  e2e: /'
  return "$rc"
}

said_mode_registry() {
  grep -E '^[[:space:]]*mode:' "$LL_LOGS/registry-sim-e2e.log" | head -n 1
  grep -qE '^[[:space:]]*mode:[[:space:]]+registry' "$LL_LOGS/registry-sim-e2e.log"
}

# tools_downloaded: kind, helm and kubectl came from the file server (every file asked for, answered
# 200), landed in the e2e's cache as the served bytes, and none was built.
tools_downloaded() {
  local path new name got want rc=0 os arch
  os=$(ll_os) arch=$(ll_arch)
  new=$(tail -n +"$((FILES_LOG_MARK + 1))" "$LL_LOGS/registry-sim-files.log")
  for path in "${TOOL_PATHS[@]}"; do
    if echo "$new" | grep -qF "\"GET /$path HTTP/1.1\" 200"; then echo "downloaded: $path"; else echo "NOT downloaded: $path"; rc=1; fi
  done
  for name in kind helm kubectl; do
    got=$E2E_CACHE/$name-$(pinned_version "$name")/bin/$name
    case $name in
      helm) want=$(tar -xzOf "$FILES/${TOOL_PATHS[2]}" "$os-$arch/helm" | sha256sum | awk '{print $1}') ;;
      kind) want=$(sha_of "$FILES/${TOOL_PATHS[0]}") ;;
      kubectl) want=$(sha_of "$FILES/${TOOL_PATHS[4]}") ;;
    esac
    if [ -x "$got" ] && [ "$(sha_of "$got")" = "$want" ]; then echo "in the cache as served: $got"; else echo "not the served file: $got"; rc=1; fi
  done
  if compgen -G "$E2E_CACHE/logs/build-kind-*" >/dev/null || compgen -G "$E2E_CACHE/logs/build-helm-*" >/dev/null ||
    compgen -G "$E2E_CACHE/logs/build-kubernetes-*" >/dev/null; then
    echo "a tool was built: $(ls "$E2E_CACHE/logs"/build-*)"
    rc=1
  fi
  return "$rc"
}

# second_cluster_up: scripts/cluster-up.sh again, after the demo, with everything up: every pod is the
# same pod (UID) with the same restart counts, and the registry path is taken again.
second_cluster_up() {
  local before after log=$LL_LOGS/registry-sim-rerun.log
  # The e2e ends with a swarm that gets the blocking pod killed (the Live tab's check): it may still be
  # restarting from that load. Wait until no pod changes for 30 s (at most 5 minutes), so a restart
  # counted below is cluster-up's doing.
  local waited=0 settled
  before=$(pod_states)
  while [ "$waited" -lt 300 ]; do
    sleep 30
    waited=$((waited + 30))
    settled=$(pod_states)
    [ "$settled" != "$before" ] || break
    before=$settled
  done
  echo "pods unchanged for 30 s after ${waited}s"
  step registry-sim-rerun inner scripts/cluster-up.sh || return 1
  after=$(pod_states)
  if [ -z "$before" ] || [ "$before" != "$after" ]; then
    echo "pods before:"; echo "$before"; echo "pods after:"; echo "$after"
    return 1
  fi
  echo "$(echo "$after" | wc -l) pods, the same UIDs and restart counts before and after"
  grep -qE '^[[:space:]]*mode:[[:space:]]+registry' "$log" || { echo "the second run did not take the registry path"; return 1; }
}

cluster_down() {
  inner scripts/cluster-down.sh >"$LL_LOGS/registry-sim-cluster-down.log" 2>&1 ||
    { tail -n 20 "$LL_LOGS/registry-sim-cluster-down.log"; return 1; }
  CLUSTER_UP=0
}

e2e_checks() {
  check "no kind cluster '$KIND_CLUSTER_NAME' before the run" no_cluster_yet || return 1
  check "copy of the working tree (tracked + untracked, not ignored)" copy_tree || return 1
  check "e2e PATH: macOS's userland (BWK awk...), without go, kind, helm, kubectl, java, mvn" make_inner_path || return 1
  NODE_REF=${HUB_NODE_IMAGE%%:*}:${HUB_NODE_IMAGE##*:}@$(cat "$STATE/digest-node")
  echo "LIVENESS_LAB_NODE_IMAGE=$NODE_REF LIVENESS_LAB_DOWNLOAD_MIRROR=$FILES_URL LIVENESS_LAB_CACHE=$E2E_CACHE (empty)"
  check "scripts/test-e2e.sh --keep: every check passed" run_e2e || true
  check "cluster-up chose the registry path (mode: registry)" said_mode_registry || true
  check "kind, helm, kubectl downloaded from the file server, not built" tools_downloaded || true
  if cluster_present; then
    check "a second cluster-up.sh, after the demo, restarts no pod" second_cluster_up || true
    if [ "$KEEP" = 0 ]; then check "scripts/cluster-down.sh" cluster_down || true; fi
  else
    check "a second cluster-up.sh, after the demo, restarts no pod (no cluster)" false || true
    CLUSTER_UP=0
  fi
}

# --- set-up, tear-down ---

# teardown: everything this script starts, in reverse: the cluster (when this run made it), the
# stand-ins' Docker Hub names, the mirror setting, the file server, the registry.
teardown() {
  if [ "$CLUSTER_UP" = 1 ] && cluster_present; then
    check "scripts/cluster-down.sh" cluster_down || true
  fi
  remove_hub_refs || true
  drop_mirror || true
  stop_started files
  stop_started registry
  drop_policy_rc
}

# down: what a --keep run left (the cluster only when TREE made it: its kind is in TREE/.tools/bin).
down() {
  mkdir -p "$STATE"
  if cluster_present && [ -x "$TREE/.tools/bin/kind" ]; then
    make_inner_path >/dev/null || true
    CLUSTER_UP=1
  fi
  teardown
  if [ "$PURGE" = 1 ]; then
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$SIM_REPO/*" | xargs -r docker rmi >/dev/null 2>&1 || true
    rm -rf "$SIM"
    echo "removed $SIM and the $SIM_REPO/* images"
  fi
}

# The terminal's stdout and stderr: a Ctrl-C during a step runs the trap inside the step's redirection
# to its log file; the report goes here instead.
exec {TERM_OUT}>&1 {TERM_ERR}>&2
on_exit() {
  local rc=$?
  [ "$BASHPID" = "$$" ] || return 0
  trap - EXIT
  exec 1>&"$TERM_OUT" 2>&"$TERM_ERR"
  [ "$rc" != 130 ] || echo "interrupted: cleaning up"
  ll_heartbeat_stop
  drop_policy_rc
  if [ "$DOWN" = 0 ]; then
    if [ "$KEEP" = 1 ]; then
      echo "kept: registry $REGISTRY (Docker's mirror), file server $FILES_URL$(cluster_present && echo ", cluster $KIND_CLUSTER_NAME (tools in $TREE/.tools/bin)")"
      echo "  stop them: scripts/test-registry.sh --down"
    else
      teardown
    fi
  fi
  checks_summary "$rc" || exit 1
}

main() {
  parse_args "$@"
  if [ "$(uname -s)" != Linux ] || [ "$(id -u)" != 0 ]; then
    die "scripts/test-registry.sh runs as root on Linux (it installs a package and reloads dockerd)"
  fi
  docker info >/dev/null 2>&1 || die "no Docker daemon answers" "start it (scripts/cluster-up.sh does, as root on Debian)"
  trap on_exit EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$STATE" "$LL_LOGS"
  if [ "$DOWN" = 1 ]; then down; return 0; fi
  # A run that was killed outright leaves its processes and the mirror setting: start from nothing.
  stop_started files
  stop_started registry
  drop_mirror
  ensure_pkg curl curl
  ensure_pkg jq jq
  check "docker-registry answers on 127.0.0.1" start_registry || exit 1
  check "kind, helm, kubectl served as their official downloads" start_file_server || exit 1
  check "local base images current (scripts/lib/airgap.sh)" ensure_local_images || exit 1
  local key official
  for key in "${STANDINS[@]}"; do
    read -r official _ <<<"$(standin "$key")"
    check "stand-in $official built and pushed" standin_pushed "$key" || exit 1
  done
  check "JRE stand-in: Java 25 at /opt/java/openjdk, no curl, no wget" verify_temurin jre || true
  check "JDK stand-in: JDK 25 at /opt/java/openjdk, no curl, no wget" verify_temurin jdk || true
  check "Locust stand-in: locust in /opt/venv, Python $STANDIN_PYTHON, user locust" verify_locust || true
  check "node stand-in: Kubernetes $KUBERNETES_VERSION, a default CNI kind can apply" verify_node || true
  check "Docker's registry mirror for Docker Hub is the local registry" set_mirror || exit 1
  check "a pull of Docker Hub names goes through the mirror" pull_through_mirror || true
  check "no local tag shadows a stand-in's Docker Hub name" no_hub_refs || true
  [ "$NO_E2E" = 1 ] || e2e_checks
}

main "$@"
