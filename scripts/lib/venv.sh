# shellcheck shell=bash
# The Python side of liveness-lab's scripts: the repository's .venv/ (Locust, the recorder, the report
# and the tests; git-ignored) installed from the lock files, never global packages; the lock files
# themselves; and the wheels for an offline image build. Source after scripts/lib/common.sh.
#
#   locust/requirements.txt       the top-level pins (requirements-dev.txt adds the test tools)
#   locust/requirements.lock      those and every dependency of theirs, pinned with hashes, generated
#   locust/requirements-dev.lock  the same for requirements-dev.txt, with the same versions
#
# Environment it reads: LIVENESS_LAB_PYTHON=python3 (LOCUST_PYTHON_MIN, 3.11, or newer).

LL_VENV=$LL_ROOT/.venv

# ensure_locust_venv runtime|dev: .venv with locust/requirements.lock (requirements-dev.lock with
# "dev"). Re-installs only when the lock file changed.
ensure_locust_venv() {
  local python=${LIVENESS_LAB_PYTHON:-python3} lock=$LL_ROOT/$LOCUST_LOCK stamp want
  [ "$1" = dev ] && lock=$LL_ROOT/$LOCUST_DEV_LOCK
  # macOS's own python3 (the Command Line Tools') is 3.9: Homebrew's comes first on PATH once installed.
  need_cmd "$python" "install Python $LOCUST_PYTHON_MIN or newer: $(ll_install_hint "python3 python3-venv" python)"
  "$python" -c 'import sys; sys.exit(sys.version_info[:2] < tuple(map(int, sys.argv[1].split("."))))' "$LOCUST_PYTHON_MIN" ||
    die "$python is $("$python" -V 2>&1); Locust needs $LOCUST_PYTHON_MIN or newer" \
      "$(ll_install_hint python3 python) (a newer python3 first on PATH), or set LIVENESS_LAB_PYTHON to one, e.g. LIVENESS_LAB_PYTHON=python3.13"
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
  export LIVENESS_LAB_KUBE_CONTEXT="${LIVENESS_LAB_KUBE_CONTEXT:-kind-$KIND_CLUSTER_NAME}"
  case " $* " in
    *" -h "* | *" --help "*)
      [ -x "$python" ] || python=${LIVENESS_LAB_PYTHON:-python3}
      exec "$python" -m liveness_lab "$sub" "$@" ;;
  esac
  ensure_locust_venv runtime
  exec "$python" -m liveness_lab "$sub" "$@"
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

# locust_lock_problems LOCK PINS...: says what makes LOCK out of date and returns 1, or returns 0.
# PINS are requirements files (their `name==version` lines) or other locks (all their packages): each
# pin must be in LOCK with the same version. And every package in LOCK is pinned with == and at least
# one hash, appears once, and is top-level ("via -r") only when a requirements file among PINS names it.
locust_lock_problems() {
  local lock=$1
  shift
  awk -v lockfile="$(basename "$lock")" '
    function norm(name) { name = tolower(name); gsub(/[-_.]+/, "-", name); return name }
    # pin(LINE): "name version" from "name[extra]==version ; marker \", or "" when not a == pin.
    function pin(line,    name, version) {
      sub(/[ \t]*\\$/, "", line); sub(/[ \t]*;.*/, "", line)
      if (line !~ /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^]]*\])?==[^ =]+$/) return ""
      # Two subs, not sub(/[[=].*/): BWK awk (macOS) reads "[=" in a bracket as an equivalence class.
      name = line; sub(/=.*/, "", name); sub(/\[.*/, "", name)
      version = line; sub(/.*==/, "", version)
      return norm(name) " " version
    }
    function problem(text) { print lockfile ": " text; bad = 1 }
    FNR == 1 { nfiles++ }
    nfiles == 1 && /^[A-Za-z0-9]/ {
      p = pin($0)
      if (p == "") { problem("\"" $0 "\" is not pinned with =="); current = ""; next }
      split(p, f, " "); current = f[1]
      if (current in locked) problem(current " appears twice (" locked[current] ", " f[2] "): one version per package")
      locked[current] = f[2]; hashes[current] += 0
      next
    }
    nfiles == 1 && /^[ \t]+--hash=/ { if (current != "") hashes[current]++; next }
    nfiles == 1 && /^[ \t]*#( via)?[ \t]+-r / { if (current != "") toplevel[current] = 1; next }
    nfiles == 1 { next }
    /^[ \t]*(#|-|$)/ { next }
    {
      p = pin($0); src = FILENAME; sub(/.*\//, "", src)
      if (p == "") { if (src ~ /\.txt$/) problem(src ": \"" $0 "\" is not pinned with =="); next }
      split(p, f, " ")
      if (!(f[1] in wanted)) { wanted[f[1]] = f[2]; source[f[1]] = src }
      if (src ~ /\.txt$/) direct[f[1]] = 1
    }
    END {
      for (name in wanted) {
        if (!(name in locked)) problem(name "==" wanted[name] " (" source[name] ") is not in it")
        else if (locked[name] != wanted[name]) problem("has " name "==" locked[name] ", " source[name] " has " wanted[name])
      }
      for (name in locked) {
        if (hashes[name] == 0) problem(name "==" locked[name] " has no hash")
        if ((name in toplevel) && !(name in direct)) problem(name " is top-level in it, but no requirements file names it")
      }
      exit bad
    }' "$lock" "$@"
}

# prepare_locust_wheels BASE_IMAGE: the wheels of locust/requirements.lock that BASE_IMAGE's Python
# installs (its version, CPU and glibc; the lock's markers evaluated as that Python would), in
# locust/wheels/ (git-ignored, replaced each time), so that `docker build --build-arg WHEELS=wheels
# locust` installs them offline. For builds whose pip cannot reach PyPI (no network in builds, or a
# TLS proxy whose CA the base image does not trust): the host's pip downloads them instead.
prepare_locust_wheels() {
  local base=$1 target wheels=$LL_ROOT/locust/wheels requirements platforms=() pyver machine glibc minor
  ensure_locust_venv runtime
  # The base's marker environment (PEP 508) and glibc, from its python3 with the standard library only.
  target=$(docker run --rm --network none --entrypoint python3 "$base" -c '
import json, os, platform, sys
v = sys.implementation.version
full = "%d.%d.%d" % v[:3] + ("" if v.releaselevel == "final" else v.releaselevel[0] + str(v.serial))
print(json.dumps({"implementation_name": sys.implementation.name, "implementation_version": full,
    "os_name": os.name, "platform_machine": platform.machine(), "platform_release": platform.release(),
    "platform_system": platform.system(), "platform_version": platform.version(),
    "python_full_version": platform.python_version(), "platform_python_implementation": platform.python_implementation(),
    "python_version": "%d.%d" % sys.version_info[:2], "sys_platform": sys.platform, "glibc": platform.libc_ver()[1]}))') ||
    die "could not run python3 in $base" "build or pull $base first"
  read -r pyver machine glibc < <("$LL_VENV/bin/python" -c 'import json, sys; t = json.loads(sys.argv[1]); print(t["python_version"], t["platform_machine"], t["glibc"] or "none")' "$target")
  case $glibc in
    2.*) ;;
    *) die "$base has no glibc ($glibc): the offline wheels are manylinux ones" "use a Debian- or Ubuntu-based python3 image" ;;
  esac
  # Every manylinux tag that glibc runs, newest last: pip takes the best file the lock has a hash of.
  platforms=(--platform "manylinux2014_$machine")
  glibc=${glibc#2.}
  for ((minor = 17; minor <= ${glibc%%.*}; minor++)); do platforms+=(--platform "manylinux_2_${minor}_$machine"); done
  requirements=$(mktemp)
  # The lock's entries whose markers hold for the base's Python, without the markers: pip download
  # would evaluate them for the host's Python, which may be another version or OS.
  "$LL_VENV/bin/python" - "$LL_ROOT/$LOCUST_LOCK" "$target" >"$requirements" <<'EOF' || { rm -f "$requirements"; die "could not read $LOCUST_LOCK"; }
import json, sys
from packaging.markers import Marker
lock, target = sys.argv[1], json.loads(sys.argv[2])
target.pop("glibc")
entry = ""
for line in list(open(lock)) + [""]:
    if line.strip().startswith("#"):
        continue
    entry += line.strip().rstrip("\\") + " "
    if line.rstrip().endswith("\\"):
        continue
    requirement, _, hashes = entry.partition(" --hash")
    entry = ""
    name, _, marker = requirement.partition(";")
    if name.strip() and (not marker.strip() or Marker(marker.strip()).evaluate(target)):
        print(name.strip(), "--hash" + hashes if hashes else "")
EOF
  log "downloading Locust's wheels for Python $pyver ($machine, glibc 2.$glibc) into locust/wheels"
  rm -rf "$wheels.new"
  "$LL_VENV/bin/python" -m pip download -q --disable-pip-version-check --require-hashes --no-deps -r "$requirements" \
    -d "$wheels.new" --only-binary=:all: --implementation cp --python-version "$pyver" --platform any "${platforms[@]}" || {
    rm -rf "$requirements" "$wheels.new"
    die "pip could not download the wheels for Python $pyver" "check that PyPI answers, or build with a base whose pip reaches it"
  }
  rm -rf "$requirements" "$wheels"
  mv "$wheels.new" "$wheels"
}
