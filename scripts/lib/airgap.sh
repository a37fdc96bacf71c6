# shellcheck shell=bash
# Images built locally where no container registry answers: the kind node image (Kubernetes and its
# component images from the Go module proxy, a Debian root filesystem, kind's own base files read
# from the kind module in the Go module cache) and the Debian base images for the JRE, the JDK and Python.
# Each image carries a liveness-lab.recipe label (a hash of the versions and of these scripts): an
# image whose label matches is reused, anything else is rebuilt. Binaries and Debian packages stay
# cached under $LL_CACHE, so a rebuild after 'docker image rm' takes a few minutes, not twenty.
# Source after common.sh, gobuild.sh and tools.sh.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_DEBIAN_MIRROR=<from the host's apt sources>   Debian mirror for debootstrap
#   LIVENESS_LAB_CA_DIR=/usr/local/share/ca-certificates       CAs this machine added, trusted by the base images

# Packages of kind's node image (kind's images/base/Dockerfile, less rootless/NFS/iSCSI extras; its jq
# is for kind's createContainer hook, /kind/bin/mount-product-files.sh), plus Debian's runc (kind builds
# its own), dbus for systemd, and /usr/bin/python3 with json for the runc wrapper (python3-minimal alone
# has no json: libpython3-stdlib has it).
LL_NODE_PACKAGES=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod
LL_NODE_PACKAGES+=,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,runc
LL_NODE_PACKAGES+=,python3-minimal,libpython3-stdlib
LL_JRE_PACKAGES=openjdk-25-jre-headless,ca-certificates
# The build stage of service/Dockerfile: javac for the Maven wrapper and Maven (no curl needed: the
# wrapper downloads Maven with Java where neither curl nor wget is there).
LL_JDK_PACKAGES=openjdk-25-jdk-headless,ca-certificates
LL_PYTHON_PACKAGES=python3,python3-venv,python3-pip,ca-certificates
# The pod subnet slice of the one node (kind's default podSubnet is 10.244.0.0/16).
LL_POD_CIDR=10.244.0.0/24

local_node_image() { echo "$LOCAL_NODE_IMAGE:$KUBERNETES_VERSION"; }

# kind_module_dir: kind's sources in the Go module cache (downloads the module if needed).
kind_module_dir() { go_module_dir "sigs.k8s.io/kind@$KIND_VERSION"; }

# recipe_hash WORDS...: what a locally built image was made from (the words and the Debian suite).
recipe_hash() { printf '%s\n' "$LOCAL_BASE_SUITE" "$@" | sha256sum | cut -c1-12; }

# node_recipe: the node image's recipe: its pinned versions and the scripts that assemble it.
node_recipe() {
  recipe_hash node "$LL_NODE_PACKAGES" "$KIND_VERSION" "$KUBERNETES_VERSION" "$ETCD_VERSION" \
    "$COREDNS_VERSION" "$CONTAINERD_VERSION" "$CRICTL_VERSION" "$CNI_PLUGINS_VERSION" \
    "$(cat "$LL_ROOT/scripts/lib/airgap.sh" "$LL_ROOT/scripts/lib/gobuild.sh" "$LL_ROOT/scripts/libexec/runc_wrapper.py")"
}

# image_current IMAGE RECIPE: the image exists and was built from RECIPE.
image_current() {
  [ "$(docker image inspect --format '{{index .Config.Labels "liveness-lab.recipe"}}' "$1" 2>/dev/null)" = "$2" ]
}

# image_id IMAGE: the local image's ID, or nothing.
image_id() { docker image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }

# drop_replaced OLD-ID: removes an image that a rebuild left without a tag (a node image is 1.5 GB).
drop_replaced() {
  [ -n "$1" ] || return 0
  [ -n "$(docker image inspect --format '{{join .RepoTags ""}}' "$1" 2>/dev/null)" ] ||
    docker image rm "$1" >/dev/null 2>&1 || true
}

# debian_mirror: the Debian mirror for debootstrap: the user's setting, else the host's apt sources
# (deb822 *.sources first, then one-line *.list), skipping security suites.
debian_mirror() {
  local uri
  if [ -n "${LIVENESS_LAB_DEBIAN_MIRROR:-}" ]; then
    echo "$LIVENESS_LAB_DEBIAN_MIRROR"
    return 0
  fi
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
      /^$/ { if (uri != "" && suites !~ /security/) { print uri; exit } uri = ""; suites = "" }
      /^URIs:/ { uri = $2 } /^Suites:/ { suites = $0 }
      END { if (uri != "" && suites !~ /security/) print uri }' | head -n 1)
  if [ -z "$uri" ]; then
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -e 's/\[[^]]*\]//' | awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }')
  fi
  [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*" \
    "set LIVENESS_LAB_DEBIAN_MIRROR to a Debian mirror URL"
  echo "$uri"
}

# debootstrap_tree DIR PACKAGES: a minimal Debian $LOCAL_BASE_SUITE tree with PACKAGES (comma list).
# Packages are kept in a shared cache, so a rebuild downloads nothing; a finished tree carries a
# stamp and is reused as it is.
debootstrap_tree() {
  local dir=$1 packages=$2 debs=$LL_CACHE/debian-$LOCAL_BASE_SUITE/debs stamp
  stamp="$LOCAL_BASE_SUITE $packages"
  if [ "$(cat "$dir/.liveness-lab-debootstrap" 2>/dev/null)" = "$stamp" ]; then
    echo "reusing $dir"
    return 0
  fi
  ensure_pkg debootstrap debootstrap
  mkdir -p "$debs"
  rm -rf "$dir"
  debootstrap --variant=minbase --include="$packages" --cache-dir="$debs" \
    "$LOCAL_BASE_SUITE" "$dir" "$(debian_mirror)"
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  echo "$stamp" >"$dir/.liveness-lab-debootstrap"
}

# import_tree DIR IMAGE RECIPE CHANGE...: 'docker import' of a root filesystem tree.
import_tree() {
  local dir=$1 image=$2 recipe=$3 change args=() old
  shift 3
  for change in "$@" "LABEL liveness-lab.recipe=$recipe"; do args+=(--change "$change"); done
  old=$(image_id "$image")
  tar -C "$dir" --numeric-owner -c . | docker import "${args[@]}" - "$image"
  drop_replaced "$old"
}

LL_DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Certificate authorities that this machine added itself, where Debian keeps them (a TLS-intercepting
# proxy's CA goes there): the local base images trust them too, so that Maven and pip inside a
# `docker build` reach what the host reaches. Official images know nothing of them.
LL_LOCAL_CA_DIR=${LIVENESS_LAB_CA_DIR:-/usr/local/share/ca-certificates}

# local_ca_files: the locally added CA files (*.crt, as update-ca-certificates reads them), relative
# to LL_LOCAL_CA_DIR and sorted; nothing when the machine added none.
local_ca_files() {
  [ -d "$LL_LOCAL_CA_DIR" ] || return 0
  (cd "$LL_LOCAL_CA_DIR" && find . -type f -name '*.crt' | sed 's|^\./||' | LC_ALL=C sort)
}

# local_ca_hash: a hash of the locally added CAs' names and contents (part of a base image's recipe,
# so that a changed CA rebuilds it), or nothing when there are none (the recipe stays as it was).
local_ca_hash() {
  local files
  files=$(local_ca_files)
  [ -n "$files" ] || return 0
  (cd "$LL_LOCAL_CA_DIR" && echo "$files" | tr '\n' '\0' | xargs -0 sha256sum) | sha256sum | cut -c1-12
}

# trust_local_cas DIR: the locally added CAs trusted inside the Debian tree DIR as on this machine:
# copied to the same place, then update-ca-certificates regenerates /etc/ssl/certs (OpenSSL, Python,
# pip) and, through ca-certificates-java's trigger where Java is installed, Java's cacerts.
trust_local_cas() {
  local dir=$1 files f rc=0
  files=$(local_ca_files)
  [ -n "$files" ] || return 0
  while IFS= read -r f; do
    install -D -m 0644 "$LL_LOCAL_CA_DIR/$f" "$dir/usr/local/share/ca-certificates/$f"
  done <<<"$files"
  # Java needs /proc in the chroot (the loader finds libjli.so through /proc/self/exe); without it the
  # trigger only says "Unable to execute Java" and leaves cacerts as it was.
  mount -t proc proc "$dir/proc"
  update_trust_stores "$dir" "$files" || rc=$?
  umount "$dir/proc" || umount -l "$dir/proc"
  [ "$rc" = 0 ] || die "the local CAs are not trusted inside $dir (see the lines above)" \
    "check $LL_LOCAL_CA_DIR/*.crt (PEM certificates); ca-certificates-java's trigger must be able to run Java in the chroot"
  echo "trusted in $dir: $(echo "$files" | tr '\n' ' ')"
}

# update_trust_stores DIR FILES: update-ca-certificates in the chroot, then a check that Java's store
# has every file of FILES (a silent failure would surface only as a TLS error in a later Maven build).
update_trust_stores() {
  local dir=$1 files=$2 f alias
  chroot "$dir" update-ca-certificates || return 1
  [ -x "$dir/usr/bin/keytool" ] || return 0
  while IFS= read -r f; do
    # ca-certificates-java names each entry after its link in /etc/ssl/certs, which
    # update-ca-certificates names <name>.pem with spaces, parentheses and commas replaced.
    alias="debian:$(basename "$f" .crt | sed -e 's/ /_/g' -e 's/[()]/=/g' -e 's/,/_/g').pem"
    chroot "$dir" keytool -list -cacerts -storepass changeit -alias "$alias" >/dev/null || {
      echo "Java does not trust $f: no '$alias' in /etc/ssl/certs/java/cacerts" >&2
      return 1
    }
  done <<<"$files"
}

# build_debian_image IMAGE PACKAGES CHANGE...: a Debian base image (JRE, JDK, Python) from debootstrap,
# trusting the CAs this machine added.
build_debian_image() {
  local image=$1 packages=$2 recipe dir ca
  shift 2
  ca=$(local_ca_hash)
  recipe=$(recipe_hash "$image" "$packages" "$@" ${ca:+"local-ca $ca"})
  image_current "$image" "$recipe" && { echo "$image is up to date"; return 0; }
  dir=$LL_CACHE/build/$(echo "$image" | tr '/:' '__')
  # A run interrupted in trust_local_cas leaves /proc mounted in the tree: never rm -rf through it.
  ! mountpoint -q "$dir/proc" 2>/dev/null || umount -l "$dir/proc"
  debootstrap_tree "$dir" "$packages"
  rm -f "$dir/.liveness-lab-debootstrap"
  trust_local_cas "$dir"
  import_tree "$dir" "$image" "$recipe" "ENV PATH=$LL_DEFAULT_PATH" "ENV LANG=C.UTF-8" "$@"
  rm -rf "$dir"
}

# java_home_change: the image setting of JAVA_HOME for Debian's OpenJDK 25 on this architecture.
java_home_change() { echo "ENV JAVA_HOME=/usr/lib/jvm/java-25-openjdk-$(dpkg --print-architecture)"; }

build_jre_image() {
  build_debian_image "$LOCAL_JRE_BASE_IMAGE" "$LL_JRE_PACKAGES" "$(java_home_change)" 'CMD ["java", "-version"]'
}

# build_jdk_image: the build stage's base in service/Dockerfile where no registry answers.
build_jdk_image() {
  build_debian_image "$LOCAL_JDK_BASE_IMAGE" "$LL_JDK_PACKAGES" "$(java_home_change)" 'CMD ["java", "-version"]'
}

build_python_image() {
  build_debian_image "$LOCAL_PYTHON_BASE_IMAGE" "$LL_PYTHON_PACKAGES" 'CMD ["python3"]'
}

# build_node_binaries: every program of the node image, from the Go module proxy (the first time on 2
# cores Kubernetes 11 to 38 minutes, the others about 10; nothing afterwards: docs/no-registry.md).
build_node_binaries() {
  step "build-kubernetes-$KUBERNETES_VERSION" build_kubernetes "$KUBERNETES_VERSION" \
    kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy
  step "build-pause" build_pause "$KUBERNETES_VERSION" "$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin/pause"
  step "build-etcd-$ETCD_VERSION" build_etcd "$ETCD_VERSION"
  step "build-coredns-$COREDNS_VERSION" build_coredns "$COREDNS_VERSION"
  step "build-containerd-$CONTAINERD_VERSION" build_containerd "$CONTAINERD_VERSION"
  step "build-cni-plugins-$CNI_PLUGINS_VERSION" build_cni_plugins "$CNI_PLUGINS_VERSION"
  step "build-crictl-$CRICTL_VERSION" build_crictl "$CRICTL_VERSION"
}

# cni_conflist: the static network of the single node (kindnetd's image cannot be had offline):
# a veth per pod with host-local addresses from the node's slice, and hostPort support.
cni_conflist() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "liveness-lab",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$LL_POD_CIDR" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      },
      "mtu": 1500
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
}

# assemble_node_tree DIR: what kind's base-image Dockerfile does, on a debootstrap tree, plus the
# Kubernetes node binaries that kind's node-image build copies in.
assemble_node_tree() {
  local dir=$1 kind files bin=$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin
  kind=$(kind_module_dir)
  files=$kind/images/base/files
  [ -d "$files" ] || die "kind's base files not found in the Go module cache ($files)"
  debootstrap_tree "$dir" "$LL_NODE_PACKAGES"
  rm -f "$dir/.liveness-lab-debootstrap" # from here on the tree is no longer pristine
  # kind's files, with the modes its Dockerfile gives them (the module cache is read-only).
  (cd "$files" && find usr etc kind -type d -exec install -d -m 0755 "$dir/{}" \; &&
    find usr etc kind -type f -exec install -m 0644 "{}" "$dir/{}" \;)
  chmod 0755 "$dir"/usr/local/bin/* "$dir"/kind/bin/*
  # kind's systemd clean-up: only what a container needs, no udev, no getty.
  find "$dir/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
  rm -f "$dir"/lib/systemd/system/multi-user.target.wants/* "$dir"/etc/systemd/system/*.wants/* \
    "$dir"/lib/systemd/system/local-fs.target.wants/* "$dir"/lib/systemd/system/sockets.target.wants/*udev* \
    "$dir"/lib/systemd/system/sockets.target.wants/*initctl* "$dir"/lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>"$dir/etc/systemd/journald.conf"
  ln -sfn /usr/lib/systemd/systemd "$dir/usr/sbin/init"
  chroot "$dir" systemctl enable kubelet.service containerd.service undo-mount-hacks.service
  chroot "$dir" systemctl mask systemd-binfmt.service
  mkdir -p "$dir/etc/kubernetes/manifests" "$dir/opt/cni/bin" "$dir/etc/cni/net.d" "$dir/kind/manifests"
  # containerd, crictl, CNI plugins, and the runc wrapper in front of Debian's runc (a no-op on
  # hosts that have CAP_SYS_RESOURCE).
  install -m 0755 "$LL_CACHE/containerd-$CONTAINERD_VERSION/bin/"* "$LL_CACHE/crictl-$CRICTL_VERSION/bin/crictl" \
    "$dir/usr/local/bin/"
  install -m 0755 "$LL_CACHE/cni-plugins-$CNI_PLUGINS_VERSION/bin/"* "$dir/opt/cni/bin/"
  install -D -m 0755 "$LL_ROOT/scripts/libexec/runc_wrapper.py" "$dir/usr/local/sbin/runc"
  "$dir/usr/local/bin/ctr" oci spec | python3 "$LL_ROOT/scripts/libexec/json_edits.py" cri-base >"$dir/etc/containerd/cri-base.json"
  cni_conflist >"$dir/etc/cni/net.d/10-liveness-lab.conflist"
  # kind applies default-cni.yaml unless the config disables it (ours does); without
  # default-storage.yaml it falls back to a host-path StorageClass that needs no image.
  echo "# the static CNI config in /etc/cni/net.d is the network of this image" >"$dir/kind/manifests/default-cni.yaml"
  install -m 0755 "$bin/kubeadm" "$bin/kubelet" "$bin/kubectl" "$dir/usr/bin/"
  echo "$KUBERNETES_VERSION" >"$dir/kind/version"
}

# component_image_tars BASE-IMAGE OUTDIR: one 'docker save' archive per image that kubeadm and
# containerd need, tagged exactly as 'kubeadm config images list' prints them.
component_image_tars() {
  local base=$1 out=$2 bin=$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin recipe image name sandbox ctx old
  local kind
  kind=$(kind_module_dir)
  recipe=$(node_recipe)
  sandbox=$(sed -n 's/^[[:space:]]*sandbox_image = "\(.*\)"/\1/p' "$kind/images/base/files/etc/containerd/config.toml")
  mkdir -p "$out"
  ctx=$(mktemp -d)
  for image in $("$bin/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION") $sandbox; do
    name=${image##*/}
    name=${name%%:*}
    rm -rf "$ctx" && mkdir -p "$ctx/tmp" "$ctx/usr/local/bin" && chmod 1777 "$ctx/tmp"
    case $name in
      kube-apiserver | kube-controller-manager | kube-scheduler)
        install -m 0755 "$bin/$name" "$ctx/usr/local/bin/"
        import_tree "$ctx" "$image" "$recipe" "ENV PATH=$LL_DEFAULT_PATH" ;;
      etcd)
        install -m 0755 "$LL_CACHE/etcd-$ETCD_VERSION/bin/etcd" "$ctx/usr/local/bin/"
        mkdir -p "$ctx/var/lib/etcd"
        import_tree "$ctx" "$image" "$recipe" "ENV PATH=$LL_DEFAULT_PATH" ;;
      coredns)
        install -m 0755 "$LL_CACHE/coredns-$COREDNS_VERSION/bin/coredns" "$ctx/coredns"
        import_tree "$ctx" "$image" "$recipe" 'ENTRYPOINT ["/coredns"]' ;;
      pause)
        install -m 0755 "$bin/pause" "$ctx/pause"
        import_tree "$ctx" "$image" "$recipe" 'ENTRYPOINT ["/pause"]' ;;
      kube-proxy)
        # kube-proxy programs iptables: the node's own Debian tree has it.
        install -m 0755 "$bin/kube-proxy" "$ctx/kube-proxy"
        printf 'FROM %s\nCOPY kube-proxy /usr/local/bin/kube-proxy\nENTRYPOINT []\nCMD []\n' "$base" >"$ctx/Dockerfile"
        old=$(image_id "$image")
        docker build -q -t "$image" "$ctx"
        drop_replaced "$old" ;;
      *) die "kubeadm wants image $image, which this build does not know" ;;
    esac
    docker save -o "$out/$(echo "${image##*/}" | tr : _).tar" "$image"
  done
  rm -rf "$ctx"
}

LL_BUILD_CONTAINER=
# cleanup_build_container: the node-image build container, if one is left (called from traps).
cleanup_build_container() {
  [ -n "$LL_BUILD_CONTAINER" ] || return 0
  docker rm -f -v "$LL_BUILD_CONTAINER" >/dev/null 2>&1 || true
  LL_BUILD_CONTAINER=
}

# preload_images BASE-IMAGE TARDIR IMAGE RECIPE: as kind's node-image build does: run the base image,
# start containerd in it, import every archive, commit the result as the node image.
preload_images() {
  local base=$1 tars=$2 image=$3 recipe=$4 tar id old
  LL_BUILD_CONTAINER=liveness-lab-node-build-$$
  id=$LL_BUILD_CONTAINER
  docker rm -f -v "$id" >/dev/null 2>&1 || true
  docker run -d --name "$id" --entrypoint=sleep --security-opt seccomp=unconfined "$base" infinity
  docker exec "$id" bash -c 'nohup containerd >/dev/null 2>&1 &'
  docker exec "$id" bash -c 'for i in $(seq 60); do [ -S /run/containerd/containerd.sock ] && ctr info >/dev/null 2>&1 && exit 0; sleep 1; done; exit 1'
  for tar in "$tars"/*.tar; do
    docker exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack --digests - <"$tar"
  done
  docker exec "$id" ctr --namespace=k8s.io images list -q
  docker exec "$id" pkill containerd
  sleep 2
  old=$(image_id "$image")
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
    --change "LABEL liveness-lab.recipe=$recipe" "$id" "$image"
  cleanup_build_container
  drop_replaced "$old"
}

# node_image_current: the local node image is there and built from today's recipe.
node_image_current() { image_current "$(local_node_image)" "$(node_recipe)"; }

# node_build_dir: where the node image is assembled (removed when it is done).
node_build_dir() { echo "$LL_CACHE/build/node-$KUBERNETES_VERSION"; }

# prepare_node_tree: the node's Debian tree alone; needs no binaries, so it can run while they build.
prepare_node_tree() {
  local image recipe
  image=$(local_node_image)
  recipe=$(node_recipe)
  image_current "$image" "$recipe" || image_current "$LOCAL_NODE_IMAGE-base:$KUBERNETES_VERSION" "$recipe" ||
    debootstrap_tree "$(node_build_dir)/tree" "$LL_NODE_PACKAGES"
}

# build_node_image: the kind node image $LOCAL_NODE_IMAGE:$KUBERNETES_VERSION, built here.
build_node_image() {
  local image base recipe work old
  image=$(local_node_image)
  base=$LOCAL_NODE_IMAGE-base:$KUBERNETES_VERSION
  recipe=$(node_recipe)
  image_current "$image" "$recipe" && { echo "$image is up to date"; return 0; }
  work=$(node_build_dir)
  if ! image_current "$base" "$recipe"; then
    assemble_node_tree "$work/tree"
    import_tree "$work/tree" "$base-stage" "$recipe" "ENV container=docker" \
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]'
    # 'docker import --change' rejects STOPSIGNAL; systemd wants SIGRTMIN+3 to shut down cleanly.
    old=$(image_id "$base")
    printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$base-stage" | docker build -q -t "$base" -
    docker image rm "$base-stage" >/dev/null
    drop_replaced "$old"
    rm -rf "$work/tree"
  fi
  component_image_tars "$base" "$work/images"
  preload_images "$base" "$work/images" "$image" "$recipe"
  rm -rf "$work"
}
