# shellcheck shell=bash source-path=SCRIPTDIR
# The tools liveness-lab needs: kind, helm and kubectl, and the chart suite's helm-unittest, helm-docs
# and ct (Docker: docker.sh). Where each comes from is scripts/libexec/tools.py's to decide and do: a
# compatible one on PATH, the version-keyed cache under $LL_CACHE, or the official release download
# (SHA-256 checked), each with one line saying where from; the chosen binary is linked into the
# git-ignored $LL_TOOLS/bin, which use_tools_bin puts first on PATH. Here: the wrappers other scripts
# call, and the Go builds for when no download site answers (the no-registry path, or a failed download
# in the test suites). Source after common.sh (this sources gobuild.sh); sourcing changes nothing: a
# script that runs the tools calls use_tools_bin first.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_DOWNLOAD_MIRROR=       fetch https://HOST/PATH from MIRROR/HOST/PATH instead (tests, proxies)
#   LL_TOOL_DOWNLOADS=auto              yes | no | auto: download only, build only, download else build

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

# ll_tools COMMAND NAME: scripts/libexec/tools.py (its --help); its errors end the script with die's status.
ll_tools() {
  need_cmd python3 "$(ll_install_hint python3 python)"
  LL_START=$LL_START python3 "$LL_ROOT/scripts/libexec/tools.py" "$@" || exit "${LL_DIE_STATUS:-1}"
}

# tool_source NAME: "path BINARY VERSION", "cache BINARY", "download URL" or "build", fetching nothing.
tool_source() { ll_tools source "$1"; }
# describe_tool NAME: one line for the plan.
describe_tool() { ll_tools describe "$1"; }
# print_tool NAME: how the user runs NAME: the bare name when their own PATH finds the same binary.
print_tool() { ll_tools print "$1"; }

# ensure_tool NAME: NAME linked into $LL_TOOLS/bin (tools.py ensure), or built with Go when tools.py
# says so (LL_TOOL_DOWNLOADS=no, or auto after a failed download), then linked and checked.
ensure_tool() {
  # One process at a time per tool: scripts/test.sh builds the cluster's images (cluster-up.sh --images-only)
  # beside suites that want the same helm, and two Go builds must not write one binary.
  if command -v flock >/dev/null 2>&1; then # portable: macOS has no flock, and goes on without
    mkdir -p "$LL_CACHE"
    (flock 9 && ensure_tool_unlocked "$1") 9>"$LL_CACHE/.ensure-$1.lock" || exit # portable: checked first
  else
    ensure_tool_unlocked "$1"
  fi
}
ensure_tool_unlocked() {
  local how version dir
  how=$(ll_tools ensure "$1") || exit
  [ -n "$how" ] || return 0
  read -r _ version dir <<<"$how"
  ensure_go
  step "build-$1-$version" "build_${1//-/_}" "$dir" "$version" || exit
  ll_tools built "$1"
}
ensure_kind() { ensure_tool kind; }
ensure_helm() { ensure_tool helm; }
ensure_kubectl() { ensure_tool kubectl; }
ensure_helm_unittest() { ensure_tool helm-unittest; }
ensure_helm_docs() { ensure_tool helm-docs; }
ensure_ct() { ensure_tool ct; }

# build_kind DIR: kind KIND_VERSION into DIR.
build_kind() { go_install_into "$1" "sigs.k8s.io/kind@$KIND_VERSION"; }

# build_helm DIR [VERSION]: helm VERSION (tools.py's: HELM_VERSION, or LIVENESS_LAB_HELM_VERSION) into DIR,
# Helm 4 (helm.sh/helm/v4) or 3, with the version stamps of Helm's own Makefile, so `helm version` and the
# default Kubernetes version of `helm template` are what a release reports ('go install' alone leaves them
# at the module's placeholders). Helm 4 reads that Kubernetes version from its client-go at run time; Helm
# 3 has it stamped: its client-go's minor (k8s.io/client-go v0.37.x: 1.37), as its Makefile does.
build_helm() {
  local v=${2:-$HELM_VERSION} major m flags minor
  major=${v#v}
  major=${major%%.*}
  m=helm.sh/helm/v$major
  flags="-s -w -X $m/internal/version.version=$v"
  if [ "$major" = 3 ]; then
    minor=$(sed -n 's|^[[:space:]]*k8s\.io/client-go v0\.\([0-9][0-9]*\)\..*|\1|p' "$(go_module_dir "$m@$v")/go.mod")
    [ -n "$minor" ] || { echo "no k8s.io/client-go in the go.mod of $m@$v" >&2; return 1; }
    flags+=" -X $m/pkg/chartutil.k8sVersionMajor=1 -X $m/pkg/chartutil.k8sVersionMinor=$minor"
    flags+=" -X $m/pkg/lint/rules.k8sVersionMajor=1 -X $m/pkg/lint/rules.k8sVersionMinor=$minor"
  fi
  GOBIN=$1 CGO_ENABLED=0 go install -trimpath -ldflags "$flags" "$m/cmd/helm@$v"
}

# build_helm_unittest DIR: helm-unittest HELM_UNITTEST_VERSION into DIR, stamped as its Makefile does
# (the version a suite's skip.minimumVersion is compared with); `tools.py built` makes its Helm plugin folder.
build_helm_unittest() {
  go_build_in_module "$1/helm-unittest" github.com/helm-unittest/helm-unittest "$HELM_UNITTEST_VERSION" ./cmd/helm-unittest \
    "-X github.com/helm-unittest/helm-unittest/internal/build.version=${HELM_UNITTEST_VERSION#v}"
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
