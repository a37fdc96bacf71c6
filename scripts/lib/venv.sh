# shellcheck shell=bash
# The Python side of liveness-lab's scripts: the repository's .venv/ (Locust, the recorder, the report
# and the tests; git-ignored) installed from the lock files, never global packages; the lock files
# themselves; and the wheels for an offline image build. Source after scripts/lib/common.sh.
#
#   locust/requirements.txt       the top-level pins (requirements-dev.txt adds the test tools)
#   locust/requirements.lock      those and every dependency of theirs, pinned with hashes, generated
#   locust/requirements-dev.lock  the same for requirements-dev.txt, with the same versions
#
# Environment it reads: LIVENESS_LAB_PYTHON=python3 (LOCUST_PYTHON_MIN, 3.11, or newer; on macOS
# LOCUST_PYTHON_MIN_MACOS, 3.12).

LL_VENV=$LL_ROOT/.venv

# ll_python_at_least PYTHON VERSION: PYTHON is VERSION (3.12) or newer.
ll_python_at_least() {
  "$1" -c 'import sys; sys.exit(sys.version_info[:2] < tuple(map(int, sys.argv[1].split("."))))' "$2" 2>/dev/null
}

# ensure_locust_venv runtime|dev: .venv with locust/requirements.lock (requirements-dev.lock with
# "dev"). Re-installs only when the lock file changed.
ensure_locust_venv() {
  local python=${LIVENESS_LAB_PYTHON:-python3} lock=$LL_ROOT/$LOCUST_LOCK stamp want min=$LOCUST_PYTHON_MIN why=
  [ "$1" = dev ] && lock=$LL_ROOT/$LOCUST_DEV_LOCK
  if [ "$(uname -s)" = Darwin ]; then
    min=$LOCUST_PYTHON_MIN_MACOS why=" on macOS (gevent's macOS wheels start at $LOCUST_PYTHON_MIN_MACOS; with an older Python pip would compile it)"
  fi
  # macOS's own python3 (the Command Line Tools') is 3.9: Homebrew's comes first on PATH once installed.
  need_cmd "$python" "install Python $min or newer: $(ll_install_hint "python3 python3-venv" python)"
  ll_python_at_least "$python" "$min" ||
    die "$python is $("$python" -V 2>&1); Locust needs $min or newer$why" \
      "$(ll_install_hint python3 python) (a newer python3 first on PATH), or set LIVENESS_LAB_PYTHON to one, e.g. LIVENESS_LAB_PYTHON=python3.13"
  if [ -x "$LL_VENV/bin/python" ] && ! ll_python_at_least "$LL_VENV/bin/python" "$min"; then
    log "$LL_VENV has $("$LL_VENV/bin/python" -V 2>&1), older than $min$why: making it again with $python"
    rm -rf "$LL_VENV"
  fi
  if [ ! -x "$LL_VENV/bin/python" ]; then
    "$python" -m venv "$LL_VENV" 2>/dev/null || {
      is_root_debian && apt_install python3-venv && "$python" -m venv "$LL_VENV"
    } || die "could not create $LL_VENV with $python" "$(ll_install_hint python3-venv python)"
  fi
  # The stamp: the lock's content, so a regenerated lock re-installs and nothing else does.
  want=$(ll_sha256 <"$lock" | cut -c1-16)
  stamp=$LL_VENV/.liveness-lab-$(basename "$lock").stamp
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing $(basename "$lock") into $LL_VENV"
    # --require-hashes: every package must be in the lock, with a file of the hash recorded there.
    "$LL_VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r "$lock" ||
      die "pip could not install $lock" "check that PyPI answers (pip config list), then re-run"
    echo "$want" >"$stamp"
  fi
}

# exec_liveness_lab SCRIPT SUBCOMMAND [ARG...]: replaces this shell with `python -m liveness_lab
# SUBCOMMAND ARG...` (locust/liveness_lab/__main__.py) from the .venv, installed first; SCRIPT (demo.sh)
# names the command in its --help and messages. --help answers without installing anything: the parser
# needs only the standard library.
exec_liveness_lab() {
  local script=$1 sub=$2 python=$LL_VENV/bin/python
  shift 2
  export LIVENESS_LAB_PROG="scripts/$script" PYTHONPATH="$LL_ROOT/locust${PYTHONPATH:+:$PYTHONPATH}"
  # The release's coordinates, all three (common.sh): the user's where set, else kind's.
  export LIVENESS_LAB_KUBE_CONTEXT="${LIVENESS_LAB_KUBE_CONTEXT:-$LL_KUBE_CONTEXT}" \
    LIVENESS_LAB_NAMESPACE="${LIVENESS_LAB_NAMESPACE:-$LL_NAMESPACE}" LIVENESS_LAB_RELEASE="${LIVENESS_LAB_RELEASE:-$LL_RELEASE}"
  case " $* " in
    *" -h "* | *" --help "*)
      [ -x "$python" ] || python=${LIVENESS_LAB_PYTHON:-python3}
      exec "$python" -m liveness_lab "$sub" "$@" ;;
  esac
  ensure_locust_venv runtime
  exec "$python" -m liveness_lab "$sub" "$@"
}

# exec_pytest ARG...: replaces this shell with pytest from the dev .venv (installed first), run from
# locust/ (its pytest.ini); with LIVENESS_LAB_JUNIT=DIR (scripts/test.sh) pytest also writes
# DIR/pytest.xml, which the suite's count reads.
exec_pytest() {
  ensure_locust_venv dev
  cd "$LL_ROOT/locust" || die "no locust/ in $LL_ROOT"
  exec "$LL_VENV/bin/python" -m pytest -v ${LIVENESS_LAB_JUNIT:+--junitxml "$LIVENESS_LAB_JUNIT/pytest.xml"} "$@"
}

# lock_locust_requirements [UV-OPTION...]: regenerates requirements.lock from requirements.txt, then
# requirements-dev.lock from requirements-dev.txt within it, with the uv pinned in requirements-dev.txt.
# uv resolves once for every platform (--universal) from LOCUST_PYTHON_MIN on, one version per package
# (--fork-strategy fewest: the host's tests run what the image runs), with the hashes of every file.
# Versions already in a lock stay unless a requirement moved; --upgrade moves every dependency on.
lock_locust_requirements() {
  ensure_locust_venv dev
  [ -x "$LL_VENV/bin/uv" ] || die "uv is not in $LL_VENV" "add the uv pin to $LOCUST_DEV_REQUIREMENTS"
  (
    cd "$LL_ROOT" || exit 1
    ll_lock_one "$LOCUST_REQUIREMENTS" "$LOCUST_LOCK" "$@" &&
      ll_lock_one "$LOCUST_DEV_REQUIREMENTS" "$LOCUST_DEV_LOCK" --constraint "$LOCUST_LOCK" "$@"
  ) || die "uv could not lock the Locust requirements (above)" "check that PyPI answers and that the pins can go together"
  locust_lock_problems "$LL_ROOT/$LOCUST_LOCK" "$LL_ROOT/$LOCUST_REQUIREMENTS" &&
    locust_lock_problems "$LL_ROOT/$LOCUST_DEV_LOCK" "$LL_ROOT/$LOCUST_REQUIREMENTS" "$LL_ROOT/$LOCUST_DEV_REQUIREMENTS" "$LL_ROOT/$LOCUST_LOCK"
}

# ll_lock_one REQUIREMENTS LOCK [UV-OPTION...]: one lock file, with a header saying what it is.
ll_lock_one() {
  local in=$1 out=$2
  shift 2
  "$LL_VENV/bin/uv" pip compile --quiet --universal --python-version "$LOCUST_PYTHON_MIN" --fork-strategy fewest \
    --generate-hashes "$@" "$in" -o "$out" || return 1
  {
    printf '%s\n' \
      "# Generated from $(basename "$in"), do not edit: the pins there and every dependency of theirs, one" \
      "# version each, with the hashes of their files (pip refuses any other file). Resolved by uv for Python" \
      "# $LOCUST_PYTHON_MIN and newer on Linux, macOS and Windows. After changing $(basename "$in") (or with" \
      "# --upgrade, to move every dependency on), from the repository root:" \
      "#   bash -c '. scripts/lib/common.sh && . scripts/lib/venv.sh && lock_locust_requirements [--upgrade]'" \
      "# scripts/test-locust.sh fails when the pins there and here differ."
    cat "$out"
  } >"$out.tmp" && mv "$out.tmp" "$out"
}

# locust_lock_problems LOCK PINS...: says what makes LOCK out of date and returns 1, or returns 0
# (scripts/libexec/lock_check.py, the standard library only: it runs before every Locust image build).
locust_lock_problems() { "${LIVENESS_LAB_PYTHON:-python3}" "$LL_ROOT/scripts/libexec/lock_check.py" "$@"; }

# prepare_locust_wheels BASE_IMAGE: the wheels of locust/requirements.lock that BASE_IMAGE's Python
# installs (its version, CPU and glibc; the lock's markers evaluated as that Python would), in
# locust/wheels/ (git-ignored, replaced each time), so that `docker build --build-arg WHEELS=wheels
# locust` installs them offline. For builds whose pip cannot reach PyPI (no network in builds, or a
# TLS proxy whose CA the base image does not trust): the host's pip downloads them instead.
prepare_locust_wheels() {
  ensure_locust_venv runtime
  "$LL_VENV/bin/python" "$LL_ROOT/scripts/libexec/offline_wheels.py" "$1" "$LL_ROOT/$LOCUST_LOCK" "$LL_ROOT/locust/wheels"
}
