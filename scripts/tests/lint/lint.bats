#!/usr/bin/env bats
# The lint suite (scripts/test.sh lint): shellcheck of every script and bats file, and no GNU-only
# construct in the scripts users run on macOS (the check tried on planted lines first); the bash-3 refusal.

load ../test_helper
setup_file() { :; } # not in the macOS userland: shellcheck and the checks run as they are

# The scripts a user runs on a laptop, and the libraries they source: they must work with macOS's BSD
# tools (and bash >= 4). airgap.sh, gobuild.sh and libexec/runc-wrapper.sh run only on the no-registry path
# (root on Debian); the test scripts and bench.sh are Linux-only and say so.
PORTABLE_SCRIPTS=(scripts/cluster-up.sh scripts/cluster-down.sh scripts/demo.sh scripts/lab.sh scripts/build-service-image.sh
  scripts/build-locust-image.sh scripts/lib/common.sh scripts/lib/tools.sh scripts/lib/cluster.sh
  scripts/lib/venv.sh scripts/lib/webui.sh scripts/build-webui.sh)
# GNU-only: coreutils timeout, nproc, date's %N, readlink -f, stat -c, sha256sum, install -D, cp --parents,
# base64 -w, sort -V; grep -P; sed -i without a suffix, sed's \n in a replacement and `p}` without `;`;
# xargs -r; find -printf; date -d; and the GNU tools a Mac lacks altogether (tac, shuf, numfmt, truncate,
# stdbuf, setsid, flock, getent, md5sum...). A line that needs one behind a check says so with a
# `# portable:` comment. The suites that run these scripts do so in macOS's userland as far as Debian can
# imitate it (scripts/libexec/macos-userland.sh), which catches what a pattern cannot.
GNU_ONLY='(^|[^[:alnum:]_.-])(timeout [0-9$]|nproc|date [^|;]*%N|date [^|;]*(-d |--date)|readlink -f|stat -c|sha256sum|sha1sum|sha512sum|md5sum|install -D|cp --parents|base64 -w|sort -V|grep -[[:alpha:]]*P|sed -i|sed [^|;]*\\n|sed [^|]*[;{][pd]}|xargs -r|find [^|;]*-printf|(tac|shuf|numfmt|truncate|stdbuf|setsid|flock|getent)( |$))'

# gnu_only_lines FILE...: the lines of FILEs that use a GNU-only construct.
gnu_only_lines() { grep -HnE "$GNU_ONLY" "$@" | grep -v '# portable:' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#'; }

@test "shellcheck: every script, the bats files and their helper" {
  cd "$ROOT"
  run bash -c "{ git ls-files '*.sh' '*.bats' '*.bash' .ci/run; find scripts -name '*.sh' -o -name '*.bats' -o -name '*.bash'; } | sort -u"
  mapfile -t scripts <<<"$output"
  [ "${#scripts[@]}" -gt 20 ] || fail "found only ${#scripts[@]} scripts"
  run shellcheck -x -P SCRIPTDIR "${scripts[@]}"
  assert_success
}

@test "the GNU-only check catches 7 planted constructs, not a comment or a line marked portable" {
  # shellcheck disable=SC2016 # the planted lines are text, not code
  printf '%s\n' 'timeout 5 docker pull x' 'cpus=$(nproc)' "sed -i 's/a/b/' f" 'x=$(readlink -f y)' \
    'date -u -d "@$t"' 'tac log | head' 'setsid dockerd &' '  # timeout 5 in a comment' 'sha256sum f # portable: checked first' >"$BATS_TEST_TMPDIR/probe"
  run gnu_only_lines "$BATS_TEST_TMPDIR/probe"
  assert_equal "${#lines[@]}" 7
}

@test "the scripts users run on macOS use no GNU-only construct" {
  cd "$ROOT"
  run ls "${PORTABLE_SCRIPTS[@]}"
  assert_success
  run gnu_only_lines "${PORTABLE_SCRIPTS[@]}"
  assert_output "" # else use a portable form, or mark a guarded line with '# portable: why'
}

@test "bash 3 (macOS's /bin/bash) is refused with the fix, bash 5 let through" {
  . "$ROOT/scripts/lib/common.sh"
  run ll_check_bash 3
  assert_failure
  assert_output --partial "needs bash >= 4"
  assert_output --partial "brew install bash"
  run ll_check_bash 5
  assert_success
}
