# shellcheck shell=bash
# Builds of pinned Go programs from the Go module proxy, for machines where no release download and
# no container registry answers. Each build writes into $LL_CACHE/<thing>-<version>/bin and is skipped
# when its binaries are already there, so a second run costs nothing; Go's own build cache makes an
# interrupted build resume where it stopped. Source after common.sh.

# ensure_go: the Go toolchain, or a clear stop.
ensure_go() {
  need_cmd go "install Go >= 1.25 (https://go.dev/doc/install) or put the pinned tools on PATH yourself"
}

# go_static ARGS...: go with cgo off, so that the binaries run in any root filesystem.
go_static() { CGO_ENABLED=0 go "$@"; }

# kube_go COMMAND...: COMMAND (a function too) with GOTOOLCHAIN set to KUBERNETES_GO, the Go toolchain the
# Kubernetes release asks for when its go.mod needs a newer Go than this machine's (1.38: Go 1.27; the Go
# module proxy serves the toolchain); as it is when KUBERNETES_GO is empty.
kube_go() {
  if [ -n "${KUBERNETES_GO:-}" ]; then GOTOOLCHAIN=$KUBERNETES_GO "$@"; else "$@"; fi
}

# have_bins DIR NAME...: true when every NAME is an executable in DIR.
have_bins() {
  local dir=$1 name
  shift
  for name in "$@"; do [ -x "$dir/$name" ] || return 1; done
}

# go_install_into DIR PACKAGE@VERSION...: go install with GOBIN=DIR.
go_install_into() {
  local dir=$1
  shift
  mkdir -p "$dir"
  GOBIN=$dir go_static install -trimpath -ldflags=-s\ -w "$@"
}

# go_module_dir MODULE@VERSION: where the Go module cache keeps MODULE@VERSION's files (downloaded first;
# `go list -m` alone fetches only its go.mod).
go_module_dir() { go mod download "$1" && go list -m -f '{{.Dir}}' "$1"; }

# go_build_in_module OUT MODULE VERSION PACKAGE [LDFLAGS]: builds PACKAGE (./path inside MODULE) of
# MODULE@VERSION into the file OUT, inside the module as the Go module proxy serves it, so with its own
# go.mod and go.sum: the release's exact dependency set, and its replace directives, which `go install
# MODULE/PACKAGE@VERSION` refuses.
go_build_in_module() {
  local out=$1 module=$2 version=$3 package=$4 src
  src=$(go_module_dir "$module@$version")
  [ -n "$src" ] || { echo "could not download $module@$version from the Go module proxy (check 'go env GOPROXY')" >&2; return 1; }
  mkdir -p "$(dirname "$out")"
  (cd "$src" && go_static build -trimpath -ldflags "-s -w ${5:-}" -o "$out" "$package")
}

# cached_tool NAME VERSION BUILD-COMMAND...: NAME at VERSION, built once into
# $LL_CACHE/NAME-VERSION/bin by BUILD-COMMAND (called with that folder as its last argument) and
# linked into $LL_TOOLS/bin, so a second clone of the repository reuses the binary instead of
# building it again.
cached_tool() {
  local name=$1 version=$2 dir
  shift 2
  dir=$LL_CACHE/$name-$version/bin
  if ! have_bins "$dir" "$name"; then
    ensure_go
    mkdir -p "$dir"
    step "build-$name-$version" "$@" "$dir"
  fi
  mkdir -p "$LL_TOOLS/bin"
  ln -sf "$dir/$name" "$LL_TOOLS/bin/$name"
}

# scratch_module DIR NAME: an empty Go module in DIR (kept: its go.mod/go.sum make a rerun cheap).
scratch_module() {
  mkdir -p "$1"
  [ -f "$1/go.mod" ] || (cd "$1" && go mod init "$2" >/dev/null 2>&1)
}

# kube_ldflags VERSION: stamps the version the way Kubernetes' own build does; kubeadm refuses to run
# with the default "v0.0.0-master" version.
kube_ldflags() {
  local v=$1 minor pkg flags="-s -w"
  minor=$(printf '%s' "$v" | cut -d. -f2)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$flags"
}

# build_kubernetes VERSION COMMAND...: builds Kubernetes commands (kubeadm, kubelet, kubectl, ...) into
# $LL_CACHE/kubernetes-VERSION/bin. k8s.io/kubernetes cannot be 'go install'ed: its go.mod replaces
# every k8s.io/<staging> module with a local folder, so a scratch module requires it and points each
# staging module at its published v0.<minor>.<patch> twin instead.
build_kubernetes() {
  local v=$1 out mod gomod staging rest=${1#v1.} cmd pkgs=() missing=()
  shift
  out=$LL_CACHE/kubernetes-$v/bin
  for cmd in "$@"; do [ -x "$out/$cmd" ] || missing+=("$cmd"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  mod=$LL_CACHE/kubernetes-$v/module
  scratch_module "$mod" liveness-lab/build/kubernetes
  (
    cd "$mod" || exit
    [ -z "${KUBERNETES_GO:-}" ] || export GOTOOLCHAIN=$KUBERNETES_GO
    gomod=$(go_module_dir "k8s.io/kubernetes@$v")/go.mod
    [ -f "$gomod" ] || { echo "k8s.io/kubernetes@$v not found on the Go module proxy" >&2; exit 1; }
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => \./staging/.*#\1#p' "$gomod")
    {
      echo "module liveness-lab/build/kubernetes"
      echo
      grep -m1 '^go ' "$gomod"
      echo
      echo "replace ("
      for m in $staging; do echo "	$m => $m v0.$rest"; done
      echo ")"
    } >go.mod
    for cmd in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
    # 'go get' of the packages (not just the module) records every dependency they need in go.sum.
    go get "${pkgs[@]/%/@$v}"
    go_static build -trimpath -ldflags "$(kube_ldflags "$v")" -o "$out/" "${pkgs[@]}"
  )
}

# ensure_static_cc: a C compiler that links statically (gcc plus glibc's static libraries).
ensure_static_cc() {
  local probe
  probe=$(mktemp)
  if ! printf 'int main(void){return 0;}\n' | gcc -static -x c - -o "$probe" >/dev/null 2>&1; then
    log "installing gcc and libc6-dev (to build the pause program)"
    apt_install gcc libc6-dev || die "no C compiler that links statically" "apt-get install gcc libc6-dev"
  fi
  rm -f "$probe"
}

# build_pause VERSION OUT: kubelet's pod sandbox ("pause"), a static C program shipped in the
# kubernetes module.
build_pause() {
  local src
  [ -x "$2" ] && return 0
  src=$(kube_go go_module_dir "k8s.io/kubernetes@$1")/build/pause/linux/pause.c
  mkdir -p "$(dirname "$2")"
  gcc -Os -static -DVERSION="liveness-lab" -o "$2.tmp" "$src" && strip "$2.tmp" && mv "$2.tmp" "$2"
}

# build_etcd VERSION: etcd's server module replaces its sibling modules with local folders, so it is
# built from a scratch module that requires them at the same version.
build_etcd() {
  local v=$1 dir=$LL_CACHE/etcd-$1
  have_bins "$dir/bin" etcd && return 0
  scratch_module "$dir/module" liveness-lab/build/etcd
  (
    cd "$dir/module" || exit
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
      go mod edit -replace "go.etcd.io/etcd/$m=go.etcd.io/etcd/$m@$v"
    done
    go get "go.etcd.io/etcd/server/v3@$v"
    go_static build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
  )
}

# build_crictl VERSION: the proxy refuses cri-tools' version list, so 'go install crictl@VERSION'
# fails; a scratch module that 'go get's the exact version works.
build_crictl() {
  local v=$1 dir=$LL_CACHE/crictl-$1
  have_bins "$dir/bin" crictl && return 0
  scratch_module "$dir/module" liveness-lab/build/crictl
  (
    cd "$dir/module" || exit
    go get "sigs.k8s.io/cri-tools/cmd/crictl@$v"
    go_static build -trimpath -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$v" \
      -o "$dir/bin/crictl" sigs.k8s.io/cri-tools/cmd/crictl
  )
}

# build_coredns VERSION
build_coredns() {
  local dir=$LL_CACHE/coredns-$1/bin
  have_bins "$dir" coredns || go_install_into "$dir" "github.com/coredns/coredns@$1"
}

# build_containerd VERSION: containerd, ctr and the runc shim.
build_containerd() {
  local v=$1 dir=$LL_CACHE/containerd-$1/bin m=github.com/containerd/containerd/v2
  have_bins "$dir" containerd ctr containerd-shim-runc-v2 && return 0
  mkdir -p "$dir"
  # The tags leave out snapshotters that need cgo or host libraries, as kind's own build does.
  GOBIN=$dir go_static install -trimpath -tags "no_aufs no_zfs no_btrfs no_devmapper" \
    -ldflags "-s -w -X $m/version.Version=$v" \
    "$m/cmd/containerd@$v" "$m/cmd/ctr@$v" "$m/cmd/containerd-shim-runc-v2@$v"
}

# build_cni_plugins VERSION: the four plugins the static single-node network needs.
build_cni_plugins() {
  local v=$1 dir=$LL_CACHE/cni-plugins-$1/bin p=github.com/containernetworking/plugins/plugins
  have_bins "$dir" ptp host-local loopback portmap && return 0
  go_install_into "$dir" "$p/main/ptp@$v" "$p/ipam/host-local@$v" "$p/main/loopback@$v" "$p/meta/portmap@$v"
}
