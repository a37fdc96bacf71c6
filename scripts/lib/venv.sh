# shellcheck shell=bash
# The repository's Python environment for Locust, the recorder, the report and the tests: .venv/ at
# the repository root (git-ignored), with exactly the pins of locust/requirements*.txt, never global
# packages. Source after scripts/lib/common.sh; re-installs only when a requirements file changed.
#
# Environment it reads: LIVENESS_LAB_PYTHON=python3 (3.10 or newer, for Locust 2.47).

LL_VENV=$LL_ROOT/.venv

# ensure_locust_venv runtime|dev: .venv with locust/requirements.txt (and requirements-dev.txt with "dev").
ensure_locust_venv() {
  local python=${LIVENESS_LAB_PYTHON:-python3} reqs=$LL_ROOT/$LOCUST_REQUIREMENTS stamp want
  [ "$1" = dev ] && reqs=$LL_ROOT/$LOCUST_DEV_REQUIREMENTS
  need_cmd "$python" "install Python 3.10 or newer (Debian: apt-get install python3 python3-venv)"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$python is $("$python" -V 2>&1); Locust needs 3.10 or newer" "set LIVENESS_LAB_PYTHON to a newer python3"
  if [ ! -x "$LL_VENV/bin/python" ]; then
    "$python" -m venv "$LL_VENV" 2>/dev/null || {
      apt_install python3-venv && "$python" -m venv "$LL_VENV"
    } || die "could not create $LL_VENV" "apt-get install python3-venv"
  fi
  # The stamp: the requirement files' content, so an edited pin re-installs and nothing else does.
  want=$(cat "$LL_ROOT/$LOCUST_REQUIREMENTS" "$reqs" | sha256sum | cut -c1-16)
  stamp=$LL_VENV/.liveness-lab-$(basename "$reqs").stamp
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing $(basename "$reqs") into $LL_VENV"
    (cd "$(dirname "$reqs")" && "$LL_VENV/bin/python" -m pip install -q -r "$reqs") ||
      die "pip could not install $reqs" "check that PyPI answers (pip config list), then re-run"
    echo "$want" >"$stamp"
  fi
}

# prepare_locust_wheels BASE_IMAGE: the wheels of locust/requirements.txt for BASE_IMAGE's Python and
# this machine's CPU, in locust/wheels/ (git-ignored), so that `docker build locust` installs them
# offline. Call it before building the image where the build's own pip cannot reach PyPI (no network
# in builds, or a TLS proxy whose CA the base image does not trust); harmless elsewhere.
prepare_locust_wheels() {
  local base=$1 pyver arch
  ensure_locust_venv runtime
  pyver=$(docker run --rm --network none --entrypoint python3 "$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
    die "could not run python3 in $base" "build or pull $base first"
  arch=$(uname -m)
  log "downloading Locust's wheels for Python $pyver ($arch) into locust/wheels"
  "$LL_VENV/bin/python" -m pip download -q -r "$LL_ROOT/$LOCUST_REQUIREMENTS" -d "$LL_ROOT/locust/wheels" \
    --only-binary=:all: --python-version "$pyver" --platform any \
    --platform "manylinux2014_$arch" --platform "manylinux_2_17_$arch" --platform "manylinux_2_28_$arch" ||
    die "pip could not download the wheels for Python $pyver" "check that PyPI answers, or build with a base whose pip reaches it"
}
