# shellcheck shell=bash
# What every .bats file here loads (`load test_helper` at its top): bats-support and
# bats-assert (Debian's bats-support and bats-assert, found in BATS_LIB_PATH, default /usr/lib/bats), ROOT,
# and the helpers below. Run the files with `scripts/test.sh cluster`, or one of them with
# `bats scripts/tests/cluster-up.bats` (after `apt-get install bats bats-support bats-assert original-awk`).

# run's flags (--separate-stderr) need bats 1.5; Debian bookworm has 1.8.2.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../versions.env
. "$ROOT/scripts/versions.env"

# use_macos_userland: from here on (called in setup_file, the default one below: the PATH it exports holds
# for every test of the file) commands are macOS's as far as Debian can imitate them: BWK awk, BSD date, sed -i, wc and
# paste, no timeout, nproc or sha256sum (scripts/tests/macos_userland.py), because the scripts under
# test are the ones users run on their Macs.
use_macos_userland() {
  # Made once per bats run (the folders of links to PATH's other commands take seconds).
  local dir=$BATS_RUN_TMPDIR/macos
  if [ ! -e "$dir/path" ]; then
    mkdir -p "$dir"
    python3 "$ROOT/scripts/tests/macos_userland.py" "$dir/bin" "$PATH" "$dir/farm" >"$dir/path.new"
    mv "$dir/path.new" "$dir/path"
  fi
  PATH=$(cat "$dir/path")
  export PATH
}

# use_a_mac: MAC_PATH and MAC_BASH (exported) for running the user's scripts as a Mac would (on_mac):
# MAC_PATH is the macOS userland with this machine a Mac as the scripts ask about it (macos_userland.py
# --mac: uname Darwin arm64, id 501, bash 3.2 first, the Python a Mac user installs), and MAC_BASH the bash
# the user chose by hand (Homebrew's). bats itself keeps its PATH: its own bash must not be the 3.2.
use_a_mac() {
  local dir=$BATS_RUN_TMPDIR/mac
  if [ ! -e "$dir/path" ]; then
    mkdir -p "$dir"
    python3 "$ROOT/scripts/tests/macos_userland.py" --bash >"$dir/bash"
    python3 "$ROOT/scripts/tests/macos_userland.py" --mac "$dir/bin" "$PATH" "$dir/farm" >"$dir/path.new"
    mv "$dir/path.new" "$dir/path"
  fi
  MAC_PATH=$(cat "$dir/path")
  MAC_BASH=$(cat "$dir/bash")
  export MAC_PATH MAC_BASH
}

# on_mac SCRIPT [ARG...]: scripts/SCRIPT as a Mac user runs it: `$MAC_BASH scripts/SCRIPT` on MAC_PATH.
on_mac() { PATH=$MAC_PATH "$MAC_BASH" "$ROOT/scripts/$1" "${@:2}"; }
# on_mac_bash PROGRAM [ARG...]: PROGRAM in the Mac user's chosen bash on MAC_PATH ($1 ... are ARGs).
on_mac_bash() { PATH=$MAC_PATH "$MAC_BASH" -c "$1" bash "${@:2}"; }

# refuses_unknown_argument SCRIPT [STATUS]: scripts/SCRIPT --no-such-flag exits STATUS (default 2),
# with the error and its fix on stderr and nothing on stdout.
refuses_unknown_argument() {
  run --separate-stderr "$ROOT/scripts/$1" --no-such-flag
  assert_failure "${2:-2}"
  assert_output ""
  # shellcheck disable=SC2154 # run --separate-stderr sets $stderr
  [[ $stderr == *"unknown argument: --no-such-flag"* && $stderr == *"fix:"* ]] || fail "stderr: $stderr"
}

# stub_docker DIR: stand-ins for docker and kind in DIR (put it first on PATH), so nothing here talks to
# a real Docker daemon. Every call is appended to DIR/calls. No daemon answers (`docker info` fails, no
# image is present) unless STUB_INFO="CPUS MEMTOTAL-BYTES" says what Docker Desktop's VM reports; `docker
# pull` does what STUB_PULL says: "answers" (a registry sends layers), "fails" (no registry: the name does
# not resolve) or "hangs" (a network that drops packets). STUB_CLUSTER_VERSION=v1.x.y: kind has a cluster
# liveness-lab whose control plane's /kind/version says that release (`docker exec ... cat /kind/version`).
stub_docker() {
  mkdir -p "$1"
  cat >"$1/docker" <<EOF
#!/bin/sh
exec 3>&- # bats waits for whatever holds its fd 3: a hanging pull must not
echo "docker \$*" >>"$1/calls"
case \$1 in
  pull)
    case \${STUB_PULL:-fails} in
      answers) echo "v1.35.0: Pulling from kindest/node"; echo "a1b2c3: Pulling fs layer"; sleep 3 ;;
      hangs) sleep 20 ;;
      *) echo "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host" >&2 ;;
    esac
    exit 1 ;;
  exec)
    case "\$*" in
      *"-control-plane cat /kind/version") [ -n "\${STUB_CLUSTER_VERSION:-}" ] && { echo "\$STUB_CLUSTER_VERSION"; exit 0; } ;;
    esac
    echo "Error response from daemon: No such container" >&2; exit 1 ;;
  info | version)
    if [ -n "\${STUB_INFO:-}" ]; then
      case "\$*" in
        *NCPU*) echo "\$STUB_INFO" ;;
        *OperatingSystem*) echo "Docker Desktop|6.10.14-linuxkit" ;;
        *CgroupVersion*) echo 2 ;;
        *DefaultRuntime*) echo runc ;;
        *Server.Version*) echo 28.5.1 ;;
      esac
      exit 0
    fi
    echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1 ;;
  *) echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1 ;;
esac
EOF
  cat >"$1/kind" <<EOF
#!/bin/sh
echo "kind \$*" >>"$1/calls"
case \$1 in
  version) echo "kind $KIND_VERSION go1.24 linux/amd64" ;;
  get) if [ -n "\${STUB_CLUSTER_VERSION:-}" ]; then echo liveness-lab; else echo "No kind clusters found." >&2; fi ;;
  *) exit 1 ;;
esac
EOF
  chmod +x "$1/docker" "$1/kind"
  : >"$1/calls"
}

# free_port: a TCP port nothing listens on, on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The scripts under test are the ones users run on their Macs: every file runs in the macOS userland
# unless it defines a setup_file of its own.
setup_file() { use_macos_userland; }
