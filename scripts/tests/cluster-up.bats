#!/usr/bin/env bats
# scripts/cluster-up.sh without a cluster or Docker: the plan --dry-run prints where a registry answers and
# where none does, how the registry check decides, what it refuses (bad settings, unknown arguments, the
# no-registry path off root Debian), all in macOS's userland. Docker and kind are stand-ins
# (test_helper.bash's stub_docker): nothing here talks to a Docker daemon. The real run: scripts/test-e2e.sh.

load test_helper

setup() {
  STUBS=$BATS_TEST_TMPDIR/stubs
  stub_docker "$STUBS"
  PATH=$STUBS:$PATH
  export LIVENESS_LAB_CACHE=$BATS_TEST_TMPDIR/cache
}

# plan REGISTRY [ARGS...]: the dry-run plan with the registry answer forced (REGISTRY empty: asked).
plan() {
  local answer=$1
  shift
  if [ -n "$answer" ]; then
    LIVENESS_LAB_REGISTRY=$answer "$ROOT/scripts/cluster-up.sh" --dry-run "$@"
  else
    "$ROOT/scripts/cluster-up.sh" --dry-run "$@"
  fi
}

@test "where a registry answers, the plan pulls the official node and base images" {
  run plan yes
  assert_success
  assert_output --regexp "mode: +registry"
  assert_output --partial "node image:    $KIND_NODE_IMAGE (pulled)"
  assert_output --partial "JRE base:      $JRE_BASE_IMAGE (pulled)"
  refute_output --partial "disableDefaultCNI"
}

@test "where no registry answers, the plan builds every image here, with the static CNI" {
  run plan no
  assert_success
  assert_output --regexp "mode: +airgap"
  assert_output --partial "node image:    $LOCAL_NODE_IMAGE:$KUBERNETES_VERSION (built here"
  assert_output --partial "JRE base:      $LOCAL_JRE_BASE_IMAGE (built here"
  assert_output --partial "Locust base:   $LOCAL_PYTHON_BASE_IMAGE (built here"
  assert_output --partial "disableDefaultCNI"
}

@test "--airgap builds locally even where a registry answers" {
  run plan yes --airgap
  assert_success
  assert_output --regexp "mode: +airgap \(--airgap given\)"
}

@test "the registry check: a pull that gets layers means the registry path" {
  STUB_PULL=answers run plan ""
  assert_success
  assert_output --regexp "mode: +registry \(a pull of $KIND_NODE_IMAGE is answered: .*Pulling fs layer\)"
}

@test "the registry check: a name that does not resolve means the local builds (root on Debian)" {
  [ "$(id -u)" = 0 ] || skip "the no-registry path is chosen by itself as root only (see the non-root test)"
  STUB_PULL=fails run plan ""
  assert_success
  assert_output --regexp "mode: +airgap \(no container registry answers .*no such host\)"
}

@test "the registry check: a pull that hangs is given up within LIVENESS_LAB_REGISTRY_WAIT" {
  [ "$(id -u)" = 0 ] || skip "the no-registry path is chosen by itself as root only"
  local started=$SECONDS
  STUB_PULL=hangs LIVENESS_LAB_REGISTRY_WAIT=2 run plan ""
  assert_success
  assert_output --regexp "mode: +airgap \(no container registry answers .*no answer within 2s\)"
  [ $((SECONDS - started)) -lt 15 ]
}

@test "--dry-run changes nothing: only read-only docker and kind commands" {
  local answer
  for answer in yes no; do
    run plan "$answer"
    assert_success
  done
  STUB_PULL=answers run plan ""
  assert_success
  # A pull is how the registry check asks (stopped at the first layer); nothing else may change a thing.
  # (A real kind in the clone's .tools/bin comes first on PATH and asks docker itself: -v, ps.)
  run grep -vE '^(docker (-v|ps|info|version|image inspect|pull)( |$)|docker exec [^ ]+ cat /kind/version$|kind (version|get clusters))' "$STUBS/calls"
  assert_failure 1
  assert_output ""
  run grep -c . "$STUBS/calls"
  refute_output 0
}

@test "LIVENESS_LAB_REGISTRY=maybe is refused" {
  run plan maybe
  assert_failure
  assert_output --partial "LIVENESS_LAB_REGISTRY must be yes, no or auto (it is 'maybe')"
}

@test "--workers 2 (or LIVENESS_LAB_WORKERS=2): three nodes in the plan on both paths, pod network named; default one" {
  run plan no --workers 2
  assert_success
  assert_output --partial "+ 2 worker node(s)"
  assert_output --regexp "nodes: +3: a control plane and 2 worker\(s\) \(--workers\); the NodePorts mapped on the control plane"
  assert_output --partial "routes to the other nodes' pod ranges, set from the host (no kindnetd)"
  LIVENESS_LAB_WORKERS=2 run plan yes
  assert_success
  assert_output --regexp "nodes: +3: a control plane and 2 worker\(s\) \(LIVENESS_LAB_WORKERS\)"
  assert_output --partial "kind's kindnetd"
  LIVENESS_LAB_WORKERS=2 run plan yes --workers 0
  assert_output --regexp "nodes: +1: the control plane runs everything"
  refute_output --partial "worker node(s)"
}

@test "a --workers that is not a number from 0 to 9: exit 2, naming the value and the fix" {
  run "$ROOT/scripts/cluster-up.sh" --dry-run --workers two
  assert_failure 2
  assert_output --partial "error: --workers must be a number of worker nodes from 0 to 9 (it is 'two')"
  assert_output --partial "fix: e.g. --workers 2"
  LIVENESS_LAB_WORKERS=-1 run "$ROOT/scripts/cluster-up.sh" --dry-run
  assert_failure 2
  assert_output --partial "LIVENESS_LAB_WORKERS must be a number of worker nodes from 0 to 9 (it is '-1')"
  run "$ROOT/scripts/cluster-up.sh" --workers
  assert_failure 2
  assert_output --partial "--workers needs a number"
}

@test "--max-restart-period 60 (or LIVENESS_LAB_MAX_RESTART_PERIOD=60): the kubelet's cap in the plan's kind config; none by default" {
  run plan yes --max-restart-period 60
  assert_success
  assert_output --partial "+ kubelet crashLoopBackOff.maxContainerRestartPeriod 60s (--max-restart-period)"
  LIVENESS_LAB_MAX_RESTART_PERIOD=45 run plan no
  assert_success
  assert_output --partial "+ kubelet crashLoopBackOff.maxContainerRestartPeriod 45s (LIVENESS_LAB_MAX_RESTART_PERIOD)"
  run plan yes --max-restart-period=300
  assert_output --partial "maxContainerRestartPeriod 300s"
  run plan yes
  refute_output --partial crashLoopBackOff
}

@test "a --max-restart-period that is not 1 to 300 seconds: exit 2, naming the value and the fix" {
  local bad
  for bad in 0 301 60s one -5; do
    run "$ROOT/scripts/cluster-up.sh" --dry-run --max-restart-period "$bad"
    assert_failure 2
    assert_output --partial "error: --max-restart-period must be a whole number of seconds from 1 to 300 (it is '$bad')"
    assert_output --partial "fix: e.g. --max-restart-period 60"
  done
  run "$ROOT/scripts/cluster-up.sh" --max-restart-period
  assert_failure 2
  assert_output --partial "--max-restart-period needs a number of seconds"
}

@test "an unknown argument: exit 2, the error and its fix on stderr, nothing on stdout" {
  refuses_unknown_argument cluster-up.sh
}

@test "--help prints the usage" {
  run "$ROOT/scripts/cluster-up.sh" --help
  assert_success
  assert_line "Usage: scripts/cluster-up.sh [--kubernetes-version V] [--airgap] [--workers N] [--max-restart-period SECONDS]"
  refute_output --partial "BASH_VERSION" # the any-shell check is code, not usage
}

# minor_pin MINOR KEY: scripts/versions.env's KEY (VERSION, NODE_IMAGE, ETCD, COREDNS) of MINOR, read as the
# file says: the default's unsuffixed keys, every other minor's KUBERNETES_<M>_<m>_KEY.
minor_pin() {
  local key=KUBERNETES_${1//./_}_$2
  if [ "v$1" = "$(echo "$KUBERNETES_VERSION" | cut -d. -f1-2)" ]; then
    case $2 in VERSION) key=KUBERNETES_VERSION ;; NODE_IMAGE) key=KIND_NODE_IMAGE ;; ETCD) key=ETCD_VERSION ;; COREDNS) key=COREDNS_VERSION ;; esac
  fi
  echo "${!key}"
}

# Issue 50: the lab's figures on each supported release.
@test "--kubernetes-version: every supported minor's plan names its release's node image, on both paths" {
  local minor release image
  [ "$(echo "$KUBERNETES_MINORS" | tr , '\n' | wc -l)" -ge 4 ] || fail "KUBERNETES_MINORS: $KUBERNETES_MINORS"
  for minor in ${KUBERNETES_MINORS//,/ }; do
    release=$(minor_pin "$minor" VERSION)
    image=$(minor_pin "$minor" NODE_IMAGE)
    [ -n "$release" ] || fail "scripts/versions.env pins no release of $minor"
    run plan yes --kubernetes-version "$minor"
    assert_success
    assert_line "plan for kind cluster 'liveness-lab' (Kubernetes $release)"
    if [ -n "$image" ]; then
      [[ $image == "kindest/node:$release@sha256:"* ]] || fail "$minor's node image $image is not kindest/node:$release by digest"
      assert_output --partial "node image:    $image (pulled)"
    else # a pre-release: kind publishes no image of it
      assert_output --partial "node image:    $LOCAL_NODE_IMAGE:$release-kind (built here by kind $KIND_VERSION: kind build node-image --type release $release"
    fi
    assert_output --regexp "kubectl: +$release: download https://dl.k8s.io/release/$release/bin/"
    if [[ ,$KUBELET_STARTUP_REGRESSION, == *",$release,"* ]]; then
      assert_output --partial "kubelet:       $release carries kubernetes#141155: a container restarted after a liveness kill"
    else
      assert_output --partial "kubelet:       $release: without kubernetes#141155"
    fi
    run plan no --kubernetes-version "v$minor"
    assert_success
    assert_output --partial "node image:    $LOCAL_NODE_IMAGE:$release (built here: Kubernetes $release"
    assert_output --partial "etcd $(minor_pin "$minor" ETCD), CoreDNS $(minor_pin "$minor" COREDNS),"
    LIVENESS_LAB_KUBERNETES_VERSION=$release run plan no
    assert_success
    assert_output --partial "kubernetes:    $release (LIVENESS_LAB_KUBERNETES_VERSION; supported: "
  done
  run plan yes
  assert_output --partial "kubernetes:    $KUBERNETES_VERSION (the default; supported: "
  run plan no --kubernetes-version 1.38
  assert_output --partial "(with Go $KUBERNETES_1_38_GO, GOTOOLCHAIN)"
}

@test "--kubernetes-version that is not supported, or not the pinned release: exit 2 with the list" {
  local bad
  for bad in 1.34 v1.39 1.3 latest ""; do
    run "$ROOT/scripts/cluster-up.sh" --dry-run --kubernetes-version "$bad"
    assert_failure 2
    assert_output --partial "error: --kubernetes-version: Kubernetes '$bad' is not one cluster-up runs"
    assert_output --partial "fix: give a minor or its release: 1.35 ($KUBERNETES_1_35_VERSION), 1.36 ($KUBERNETES_1_36_VERSION), 1.37 ($KUBERNETES_VERSION, the default), 1.38 ($KUBERNETES_1_38_VERSION, a pre-release)"
  done
  run "$ROOT/scripts/cluster-up.sh" --dry-run --kubernetes-version v1.36.0
  assert_failure 2
  assert_output --partial "error: --kubernetes-version: Kubernetes v1.36.0 is not pinned: cluster-up runs 1.36 as $KUBERNETES_1_36_VERSION"
  LIVENESS_LAB_KUBERNETES_VERSION=1.30 run "$ROOT/scripts/cluster-up.sh" --dry-run
  assert_failure 2
  assert_output --partial "error: LIVENESS_LAB_KUBERNETES_VERSION: Kubernetes '1.30' is not one"
  run "$ROOT/scripts/cluster-up.sh" --kubernetes-version
  assert_failure 2
  assert_output --partial "--kubernetes-version needs a version"
}

@test "a cluster that runs another Kubernetes: the plan says it is refused; the same one is reused" {
  STUB_CLUSTER_VERSION=$KUBERNETES_VERSION run plan yes --kubernetes-version 1.35
  assert_success
  assert_output --partial "cluster:       exists with Kubernetes $KUBERNETES_VERSION, not $KUBERNETES_1_35_VERSION: refused (one cluster at a time: scripts/cluster-down.sh first)"
  STUB_CLUSTER_VERSION=$KUBERNETES_1_35_VERSION run plan yes --kubernetes-version 1.35
  assert_output --partial "cluster:       exists (Kubernetes $KUBERNETES_1_35_VERSION): reuse it"
}

@test "--images-only: the plan makes the node and base images only, and says no cluster, image of ours or chart" {
  STUB_CLUSTER_VERSION=$KUBERNETES_VERSION run plan no --kubernetes-version 1.35 --images-only
  assert_success
  assert_output --regexp "node image: +$LOCAL_NODE_IMAGE:$KUBERNETES_1_35_VERSION"
  assert_output --regexp "JRE base: +$LOCAL_JRE_BASE_IMAGE \(built here"
  for line in "cluster:      " "service image:" "locust image: " "chart:        "; do
    assert_line "  $line none (--images-only)"
  done
}

# A laptop: no GNU timeout, no Go, other versions of kind, helm and kubectl on PATH, a registry that
# answers: the plan takes the registry path and says where every tool comes from, none built with Go.
@test "a laptop's plan: the registry path, tools on PATH or downloaded, none built with Go" {
  local bin=$BATS_TEST_TMPDIR/laptop-bin cmd
  mkdir -p "$bin"
  for cmd in bash sh env cat sed awk grep tr cut sort head tail uname mkdir rm ln dirname basename id \
    python3 curl git date mktemp ls wc pwd readlink sleep; do
    ln -s "$(command -v "$cmd")" "$bin/$cmd"
  done
  printf '#!/bin/sh\necho "kind v0.31.0 go1 darwin/arm64"\n' >"$bin/kind"
  printf '#!/bin/sh\necho "v4.0.1"\n' >"$bin/helm"
  printf '#!/bin/sh\necho "Client Version: v1.29.4"\n' >"$bin/kubectl"
  chmod +x "$bin"/kind "$bin"/helm "$bin"/kubectl
  PATH=$bin run plan yes
  assert_success
  assert_output --regexp "mode: +registry"
  assert_output --regexp "  kind: +$KIND_VERSION: download https://github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION/kind-"
  assert_output --regexp "  helm: +v4.0.1 on PATH"
  assert_output --regexp "  kubectl: +$KUBERNETES_VERSION: download https://dl.k8s.io/release/$KUBERNETES_VERSION/bin/"
  refute_output --regexp "[Bb]uild with [Gg]o"
}

# Off root Debian (here: as the user nobody), a registry check that fails stops with what was tried and
# the choice, instead of switching to the local builds.
@test "off root Debian a failed registry check stops, offering both choices" {
  [ "$(id -u)" = 0 ] || skip "needs root, to run the copy as the user nobody"
  command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
  local copy=$BATS_TEST_TMPDIR/repo
  mkdir -p "$copy"
  cp -R "$ROOT/scripts" "$ROOT/kind-config.yaml" "$copy/"
  cp -R "$STUBS" "$copy/stubs"
  mkdir "$copy/.tools"
  chmod -R a+rwX "$copy"
  chmod a+x "$BATS_TEST_TMPDIR" "$(dirname "$BATS_TEST_TMPDIR")" "$(dirname "$(dirname "$BATS_TEST_TMPDIR")")"
  run setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp LIVENESS_LAB_CACHE=/tmp/ll-nobody-cache \
    PATH="$copy/stubs:$PATH" "$copy/scripts/cluster-up.sh" --dry-run
  assert_failure 1
  assert_output --partial "the registry check failed"
  assert_output --partial "no such host" # the stand-in docker was asked
  assert_output --partial "LIVENESS_LAB_REGISTRY=yes"
  assert_output --partial "LIVENESS_LAB_REGISTRY=no"
  refute_output --partial "mode:"
}

@test "the no-registry path refuses macOS at once, saying why and what to do" {
  mkdir -p "$BATS_TEST_TMPDIR/darwin"
  # shellcheck disable=SC2016 # a script's text
  printf '#!/bin/sh\n[ "$1" = -s ] && { echo Darwin; exit 0; }\nexec /usr/bin/uname "$@"\n' >"$BATS_TEST_TMPDIR/darwin/uname"
  chmod +x "$BATS_TEST_TMPDIR/darwin/uname"
  PATH=$BATS_TEST_TMPDIR/darwin:$PATH run plan no
  assert_failure
  assert_output --partial "as root on Debian-like Linux only; this is Darwin"
  assert_output --partial "LIVENESS_LAB_REGISTRY unset or =yes"
  PATH=$BATS_TEST_TMPDIR/darwin:$PATH run plan yes --airgap
  assert_failure
  assert_output --partial "this is Darwin"
}

# next_steps TOOL...: cluster-up's closing lines (print_next_steps) where the user's own PATH finds only
# the TOOLs named; the others are this run's, under $LL_TOOLS/bin (no cluster: kube answers nothing, but
# $TOKEN when it is asked for Secrets, as the release's web UI Secret would).
next_steps() {
  local copy=$BATS_TEST_TMPDIR/copy f
  mkdir -p "$copy/scripts"
  for f in lib libexec versions.env; do ln -sfn "$ROOT/scripts/$f" "$copy/scripts/$f"; done
  sed '$d' "$ROOT/scripts/cluster-up.sh" >"$copy/scripts/cluster-up.sh" # all but its last line, `main "$@"`
  # shellcheck disable=SC2016 # the script below is expanded by the inner bash, which sources the copy
  TOKEN=${TOKEN:-} OWN=" $* " "$BASH" -c '. "$1"
    print_tool() { case $OWN in *" $1 "*) echo "$1" ;; *) echo "/tools/bin/$1" ;; esac; }
    kube() { case " $* " in *" secrets "*) printf %s "$TOKEN" ;; esac; }
    LL_START=$(ll_now) LL_TOOLS=/tools LL_KUBE_CONTEXT=kind-liveness-lab LL_NAMESPACE=liveness-lab LL_RELEASE=liveness-lab
    print_next_steps' _ "$copy/scripts/cluster-up.sh"
}

@test "the closing lines say where this run's helm is when the user's PATH has kubectl but no helm (the README's helm upgrade)" {
  run next_steps kubectl
  assert_success
  assert_output --partial "watch the pods:     kubectl --context"
  assert_output --partial "the kind, helm and kubectl of this run are in /tools/bin: put it first on PATH"
  run next_steps kubectl helm
  assert_success
  refute_output --partial "of this run are in"
}

@test "the closing lines link the web UI with the release's token, read from its Secret, and plainly without one" {
  TOKEN=s3cr3t-T0ken run next_steps kubectl helm
  assert_success
  assert_line "  Locust web UI:      http://127.0.0.1:8089/?token=s3cr3t-T0ken"
  run next_steps kubectl helm
  assert_success
  assert_line "  Locust web UI:      http://127.0.0.1:8089"
}
