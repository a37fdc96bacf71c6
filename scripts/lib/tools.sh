# shellcheck shell=bash source-path=SCRIPTDIR
# The tools liveness-lab needs, each found or fetched with one line saying where from: Docker (started
# here if need be), kind, helm and kubectl, and the chart suite's helm-unittest, helm-docs and ct. A tool on PATH is used when it is compatible (the rule is in
# tool_compatible); otherwise the pinned version comes from the version-keyed cache under $LL_CACHE,
# else from its official release download (checked against its published SHA-256), else, where no
# download site answers (the no-registry path), it is built with Go. The chosen binaries are linked
# into the git-ignored $LL_TOOLS/bin, which use_tools_bin puts first on PATH.
# Source after common.sh (this sources gobuild.sh, for the no-registry builds); sourcing changes nothing:
# a script that runs the tools calls use_tools_bin first.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_DOCKERD_WAIT=60        seconds to wait for a dockerd started here to answer
#   LIVENESS_LAB_DOWNLOAD_MIRROR=       fetch https://HOST/PATH from MIRROR/HOST/PATH instead (tests, proxies)

# shellcheck source=gobuild.sh
. "$LL_ROOT/scripts/lib/gobuild.sh"

# use_tools_bin: makes $LL_TOOLS/bin, where ensure_tool links the tools, and puts it first on PATH.
# LL_USER_PATH keeps the user's own PATH from before: commands printed for the user are checked
# against it (print_tool).
use_tools_bin() {
  LL_USER_PATH=${LL_USER_PATH:-$PATH}
  export LL_USER_PATH
  mkdir -p "$LL_TOOLS/bin"
  case ":$PATH:" in *":$LL_TOOLS/bin:"*) ;; *) PATH="$LL_TOOLS/bin:$PATH" ;; esac
  export PATH
}

LL_RUNC_WRAPPER=/usr/local/libexec/liveness-lab/runc

# tool_version NAME BINARY: the version BINARY reports (v1.2.3), or nothing.
tool_version() {
  case $1 in
    kind) "$2" version 2>/dev/null | awk '{print $2}' ;;
    helm) "$2" version --template '{{.Version}}' 2>/dev/null ;;
    kubectl) "$2" version --client 2>/dev/null | sed -n 's/^Client Version: //p' ;;
    helm-docs) "$2" --version 2>/dev/null | awk '{print $3}' ;;
    ct) "$2" version 2>/dev/null | awk '/^Version:/ {print $2}' ;;
    # The plugin's binary cannot tell its version: the cache folder it was installed into does.
    helm-unittest) resolve_link "$2" | sed -n 's|.*/helm-unittest-\(v[^/]*\)/bin/helm-unittest$|\1|p' ;;
  esac
}

# pinned_version NAME: the version scripts/versions.env pins for NAME.
pinned_version() {
  case $1 in
    kind) echo "$KIND_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    kubectl) echo "$KUBERNETES_VERSION" ;;
    helm-unittest) echo "$HELM_UNITTEST_VERSION" ;;
    helm-docs) echo "$HELM_DOCS_VERSION" ;;
    ct) echo "$CHART_TESTING_VERSION" ;;
  esac
}

# version_minor VERSION: "major minor" of v1.2.3 (or 1.2.3-rc.1), or nothing.
version_minor() { printf '%s\n' "$1" | sed -n 's/^v\{0,1\}\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p'; }

# tool_compatible NAME VERSION: the rule for using a tool the user already has.
#   kind    the pinned minor or newer within v0 (kind keeps old node images working; v0.33 is what the
#           node image is pinned for)
#   helm    3.17 or newer (--take-ownership), or Helm 4
#   kubectl within one minor of the cluster's Kubernetes (the Kubernetes skew policy)
#   helm-unittest, helm-docs, ct: the pinned version only (a test's verdict, or the generated table,
#           must not depend on which one a machine has)
tool_compatible() {
  local major minor want_major want_minor
  case $1 in helm-unittest | helm-docs | ct) [ "$2" = "$(pinned_version "$1")" ]; return ;; esac
  read -r major minor <<<"$(version_minor "$2")"
  read -r want_major want_minor <<<"$(version_minor "$(pinned_version "$1")")"
  [ -n "$minor" ] && [ -n "$want_minor" ] || return 1
  case $1 in
    kind) [ "$major" = "$want_major" ] && [ "$minor" -ge "$want_minor" ] ;;
    helm) [ "$major" -ge 4 ] || { [ "$major" = 3 ] && [ "$minor" -ge 17 ]; } ;;
    kubectl) [ "$major" = "$want_major" ] && [ "$minor" -ge $((want_minor - 1)) ] && [ "$minor" -le $((want_minor + 1)) ] ;;
  esac
}

# compatible_on_path NAME: the first NAME on PATH that tool_compatible accepts, as "PATH VERSION".
# The clone's own .tools/bin is not the user's: what it links to is found in the cache instead.
compatible_on_path() {
  local candidate version
  while read -r candidate; do
    [ "$(dirname "$candidate")" != "$LL_TOOLS/bin" ] || continue
    version=$(tool_version "$1" "$candidate")
    tool_compatible "$1" "$version" && { echo "$candidate $version"; return 0; }
  done < <(type -ap "$1" | awk '!seen[$0]++')
  return 1
}

# tool_url NAME: the official release download of the pinned NAME for this OS and CPU, and
# tool_sum_url NAME: its published SHA-256 file.
tool_url() {
  local os arch
  os=$(ll_os) arch=$(ll_arch)
  case $1 in
    kind) echo "https://github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION/kind-$os-$arch" ;;
    helm) echo "https://get.helm.sh/helm-$HELM_VERSION-$os-$arch.tar.gz" ;;
    kubectl) echo "https://dl.k8s.io/release/$KUBERNETES_VERSION/bin/$os/$arch/kubectl" ;;
    helm-unittest)
      [ "$os" != darwin ] || os=macos
      echo "$(github_release helm-unittest/helm-unittest "$HELM_UNITTEST_VERSION")/helm-unittest-$os-$arch-${HELM_UNITTEST_VERSION#v}.tgz" ;;
    helm-docs)
      [ "$arch" != amd64 ] || arch=x86_64
      echo "$(github_release norwoodj/helm-docs "$HELM_DOCS_VERSION")/helm-docs_${HELM_DOCS_VERSION#v}_$(ll_title "$os")_$arch.tar.gz" ;;
    ct) echo "$(github_release helm/chart-testing "$CHART_TESTING_VERSION")/chart-testing_${CHART_TESTING_VERSION#v}_${os}_$arch.tar.gz" ;;
  esac
}
tool_sum_url() {
  case $1 in
    kubectl) echo "$(tool_url "$1").sha256" ;;
    helm-unittest) echo "$(github_release helm-unittest/helm-unittest "$HELM_UNITTEST_VERSION")/helm-unittest-checksum.sha" ;;
    helm-docs) echo "$(github_release norwoodj/helm-docs "$HELM_DOCS_VERSION")/checksums.txt" ;;
    ct) echo "$(github_release helm/chart-testing "$CHART_TESTING_VERSION")/checksums.txt" ;;
    *) echo "$(tool_url "$1").sha256sum" ;;
  esac
}
github_release() { echo "https://github.com/$1/releases/download/$2"; }
ll_title() { printf '%s' "$1" | awk '{print toupper(substr($0, 1, 1)) substr($0, 2)}'; }

# mirrored URL: URL, or its copy under LIVENESS_LAB_DOWNLOAD_MIRROR.
mirrored() {
  if [ -n "${LIVENESS_LAB_DOWNLOAD_MIRROR:-}" ]; then echo "${LIVENESS_LAB_DOWNLOAD_MIRROR%/}/${1#https://}"; else echo "$1"; fi
}

# download_tool NAME DIR: the pinned NAME's official release into DIR, verified against its SHA-256.
download_tool() {
  local name=$1 dir=$2 url tmp want have
  url=$(mirrored "$(tool_url "$name")")
  tmp=$(mktemp -d)
  echo "downloading $url"
  # A checksum file holds one hash, or one line per release file ("HASH  [*][dir/]FILE"): take FILE's.
  if ! curl -fsSL --retry 3 -o "$tmp/download" "$url" ||
    ! want=$(curl -fsSL --retry 3 "$(mirrored "$(tool_sum_url "$name")")" |
      awk -v want="${url##*/}" '{ f = $2; sub(/^\*/, "", f); sub(/.*\//, "", f) } NF == 1 || f == want { print $1; exit }'); then
    rm -rf "$tmp"
    return 1
  fi
  have=$(ll_sha256 "$tmp/download" | awk '{print $1}')
  if [ -z "$want" ] || [ "$have" != "$want" ]; then
    echo "SHA-256 mismatch for $url: published '$want', downloaded '$have'"
    rm -rf "$tmp"
    return 1
  fi
  echo "SHA-256 $have verified"
  mkdir -p "$dir"
  case $name in
    helm) tar -xzf "$tmp/download" -C "$tmp" && mv "$tmp/$(ll_os)-$(ll_arch)/helm" "$dir/helm" ;;
    helm-unittest)
      tar -xzf "$tmp/download" -C "$tmp" && mv "$tmp"/untt-* "$dir/helm-unittest" && helm_unittest_plugin "$dir" ;;
    helm-docs) tar -xzf "$tmp/download" -C "$tmp" && mv "$tmp/helm-docs" "$dir/helm-docs" ;;
    # The release's etc/ holds the Chart.yaml schema and yamllint configuration ct lint reads (CT_CONFIG_DIR).
    ct) tar -xzf "$tmp/download" -C "$tmp" && mv "$tmp/ct" "$dir/ct" && rm -rf "$dir/../etc" && mv "$tmp/etc" "$dir/../etc" ;;
    *) mv "$tmp/download" "$dir/$name" ;;
  esac
  chmod 0755 "$dir/$name"
  rm -rf "$tmp"
}

# build_kind DIR: kind KIND_VERSION into DIR.
build_kind() { go_install_into "$1" "sigs.k8s.io/kind@$KIND_VERSION"; }

# build_helm DIR: helm HELM_VERSION into DIR, with the version stamps of Helm's own Makefile, so
# `helm version` and the default Kubernetes version of `helm template` are what a release reports
# ('go install' alone leaves them at the module's placeholders).
build_helm() {
  local minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  GOBIN=$1 CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# build_helm_unittest DIR: helm-unittest HELM_UNITTEST_VERSION into DIR, stamped as its Makefile does
# (the version a suite's skip.minimumVersion is compared with), installed as a Helm plugin beside it.
build_helm_unittest() {
  go_build_in_module "$1/helm-unittest" github.com/helm-unittest/helm-unittest "$HELM_UNITTEST_VERSION" ./cmd/helm-unittest \
    "-X github.com/helm-unittest/helm-unittest/internal/build.version=${HELM_UNITTEST_VERSION#v}" &&
    helm_unittest_plugin "$1"
}

# helm_unittest_plugin DIR: the plugin folder DIR/../plugins/unittest for DIR/helm-unittest, so that
# `HELM_PLUGINS=DIR/../plugins helm unittest` runs it without touching the user's own Helm plugins.
# No install hooks: the binary is already there.
helm_unittest_plugin() {
  local plugin=$1/../plugins/unittest
  mkdir -p "$plugin"
  ln -sf ../../bin/helm-unittest "$plugin/untt"
  # shellcheck disable=SC2016 # $HELM_PLUGIN_DIR is Helm's to expand, when it runs the plugin
  printf '%s\n' 'name: "unittest"' "version: \"${HELM_UNITTEST_VERSION#v}\"" 'usage: "unittest for helm charts"' \
    'description: "helm-unittest, built or downloaded by liveness-lab (scripts/lib/tools.sh)"' \
    'command: "$HELM_PLUGIN_DIR/untt"' >"$plugin/plugin.yaml"
}

# build_helm_docs DIR: helm-docs HELM_DOCS_VERSION into DIR, version stamped as its release does.
build_helm_docs() {
  go_build_in_module "$1/helm-docs" github.com/norwoodj/helm-docs "$HELM_DOCS_VERSION" ./cmd/helm-docs \
    "-X main.version=$HELM_DOCS_VERSION"
}

# build_ct DIR: chart-testing's ct CHART_TESTING_VERSION into DIR, version stamped as its release does,
# with the release's etc/ (Chart.yaml schema, yamllint configuration; CT_CONFIG_DIR) beside DIR.
build_ct() {
  local m=github.com/helm/chart-testing/v3 src
  go_build_in_module "$1/ct" "$m" "$CHART_TESTING_VERSION" ./ct "-X $m/ct/cmd.Version=$CHART_TESTING_VERSION" || return 1
  src=$(go_module_dir "$m@$CHART_TESTING_VERSION")
  rm -rf "$1/../etc" && cp -R "$src/etc" "$1/../etc" && chmod -R u+w "$1/../etc"
}

# build_kubectl DIR: kubectl KUBERNETES_VERSION (with the rest of Kubernetes' node binaries, which the
# no-registry path needs anyway) into the Kubernetes cache, linked into DIR.
build_kubectl() {
  local cached=$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin
  [ -x "$cached/kubectl" ] || build_kubernetes "$KUBERNETES_VERSION" kubectl
  mkdir -p "$1" && ln -sf "$cached/kubectl" "$1/kubectl"
}

# tool_source NAME: where ensure_tool NAME will take it from, without fetching anything:
# "path BINARY VERSION", "cache BINARY", "download URL" or "build".
tool_source() {
  local name=$1 version found cached
  version=$(pinned_version "$name")
  if found=$(compatible_on_path "$name"); then
    echo "path $found"
    return 0
  fi
  # kubectl is also in the Kubernetes build of the no-registry path.
  cached=$LL_CACHE/$name-$version/bin/$name
  [ -x "$cached" ] || [ "$name" != kubectl ] || cached=$LL_CACHE/kubernetes-$version/bin/kubectl
  if [ -x "$cached" ]; then
    echo "cache $cached"
    return 0
  fi
  case ${LL_TOOL_DOWNLOADS:-auto} in
    no) echo "build" ;;
    *) echo "download $(mirrored "$(tool_url "$name")")" ;;
  esac
}

# describe_tool NAME: one line for the plan.
describe_tool() {
  local how where version
  read -r how where version <<<"$(tool_source "$1")"
  case $how in
    path) echo "$version on PATH ($where)" ;;
    cache) echo "$(pinned_version "$1") cached ($where)" ;;
    download) echo "$(pinned_version "$1"): download $where (SHA-256 checked)$([ "${LL_TOOL_DOWNLOADS:-auto}" = yes ] || echo ", else build with Go")" ;;
    build) echo "$(pinned_version "$1"): build with Go (no download site answers)" ;;
  esac
}

# ensure_tool NAME: NAME linked into $LL_TOOLS/bin from where tool_source says. LL_TOOL_DOWNLOADS:
# yes (the registry path) downloads and stops when that fails; no (the no-registry path, where no
# download site answers) builds with Go; auto (the test suites) downloads, else builds with Go.
ensure_tool() {
  local name=$1 version dir how where found
  version=$(pinned_version "$name")
  dir=$LL_CACHE/$name-$version/bin
  read -r how where found <<<"$(tool_source "$name")"
  case $how in
    path)
      [ "$where" = "$LL_TOOLS/bin/$name" ] || ln -sf "$where" "$LL_TOOLS/bin/$name"
      log "$name $found: $where" ;;
    cache)
      ln -sf "$where" "$LL_TOOLS/bin/$name"
      log "$name $version: $where" ;;
    download)
      mkdir -p "$LL_LOGS"
      log "$name $version: downloading $where (log: $LL_LOGS/download-$name-$version.log)"
      if download_tool "$name" "$dir" >"$LL_LOGS/download-$name-$version.log" 2>&1; then
        ln -sf "$dir/$name" "$LL_TOOLS/bin/$name"
        log "$name $version: downloaded into $dir, SHA-256 verified"
      elif [ "${LL_TOOL_DOWNLOADS:-auto}" = auto ]; then
        log "$name $version: the download failed ($(tail -n 1 "$LL_LOGS/download-$name-$version.log")); building it with Go"
        ensure_tool_build "$name" "$dir"
      else
        tail -n 5 "$LL_LOGS/download-$name-$version.log" >&2
        die "could not download $name $version from $where" \
          "put $name $version (or a compatible one: see tool_compatible in scripts/lib/tools.sh) on PATH, or set LIVENESS_LAB_DOWNLOAD_MIRROR"
      fi ;;
    build) ensure_tool_build "$name" "$dir" ;;
  esac
  tool_compatible "$name" "$(tool_version "$name" "$LL_TOOLS/bin/$name")" ||
    die "$name $version did not install" "read the step log in $LL_LOGS"
}

# ensure_tool_build NAME DIR: the pinned NAME built with Go into DIR and linked into $LL_TOOLS/bin.
ensure_tool_build() {
  local name=$1 dir=$2 version
  version=$(pinned_version "$name")
  ensure_go
  step "build-$name-$version" "build_$(printf '%s' "$name" | tr - _)" "$dir"
  ln -sf "$dir/$name" "$LL_TOOLS/bin/$name"
  log "$name $version: built into $dir"
}

ensure_kind() { ensure_tool kind; }
ensure_helm() { ensure_tool helm; }
ensure_kubectl() { ensure_tool kubectl; }
ensure_helm_unittest() { ensure_tool helm-unittest; }
ensure_helm_docs() { ensure_tool helm-docs; }
ensure_ct() { ensure_tool ct; }

# print_tool NAME: how the user runs NAME as resolved here: the bare name when their own PATH finds
# the same binary, else its path under $LL_TOOLS/bin (so a printed command works as printed).
print_tool() {
  local mine theirs
  mine=$(cd "$LL_TOOLS/bin" && pwd -P)/$1
  mine=$(resolve_link "$mine")
  theirs=$(PATH=$LL_USER_PATH command -v "$1" 2>/dev/null || true)
  if [ -n "$theirs" ] && [ "$(resolve_link "$theirs")" = "$mine" ]; then echo "$1"; else echo "$LL_TOOLS/bin/$1"; fi
}


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

# install_runc_wrapper: Docker's default runtime becomes a runc wrapper that drops CAP_SYS_RESOURCE
# and keeps oom_score_adj within reach (see scripts/libexec/runc_wrapper.py).
install_runc_wrapper() {
  ensure_pkg python3 python3
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
