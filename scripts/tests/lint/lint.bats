#!/usr/bin/env bats
# The lint suite (scripts/test.sh lint): shellcheck of every script and bats file, and no GNU-only
# construct in the scripts users run on macOS (the check tried on planted lines first); the bash-3 refusal;
# ruff on the Python of locust/, scripts/ and chart/ (tried on planted files first); the runner of
# scripts/test.sh (scripts/tests/run_suites.py) on a stand-in test.sh.

load ../test_helper
setup_file() { :; } # not in the macOS userland: shellcheck and the checks run as they are

# The scripts a user runs on a laptop, and the libraries they source: they must work with macOS's BSD
# tools (and bash >= 4). airgap.sh and gobuild.sh run only on the no-registry path
# (root on Debian); the test scripts and bench.sh are Linux-only and say so.
PORTABLE_SCRIPTS=(scripts/cluster-up.sh scripts/cluster-down.sh scripts/demo.sh scripts/lab.sh scripts/build-service-image.sh
  scripts/build-locust-image.sh scripts/lib/common.sh scripts/lib/tools.sh scripts/lib/docker.sh scripts/lib/cluster.sh
  scripts/lib/venv.sh scripts/lib/webui.sh scripts/build-webui.sh)
# GNU-only: coreutils timeout, nproc, date's %N, readlink -f, stat -c, sha256sum, install -D, cp --parents,
# base64 -w, sort -V; grep -P; sed -i without a suffix, sed's \n in a replacement and `p}` without `;`;
# xargs -r; find -printf; date -d; and the GNU tools a Mac lacks altogether (tac, shuf, numfmt, truncate,
# stdbuf, setsid, flock, getent, md5sum...). A line that needs one behind a check says so with a
# `# portable:` comment. The suites that run these scripts do so in macOS's userland as far as Debian can
# imitate it (scripts/tests/macos_userland.py), which catches what a pattern cannot.
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

# bash 4.0 has mapfile and $BASHPID but not `exec {fd}>` (4.1), which step's heartbeat and the registry
# check open: it passed a check of the major version only and died at the first step.
@test "bash 4.0 is refused with the fix, 4.1 let through (the {fd} redirections)" {
  . "$ROOT/scripts/lib/common.sh"
  run ll_check_bash 4 0
  assert_failure
  assert_output --partial "needs bash >= 4.1; this is bash 4.0"
  assert_output --partial "brew install bash"
  run ll_check_bash 4 1
  assert_success
  run ll_check_bash 5 0
  assert_success
}

# Issue 50, trap 1: `zsh scripts/cluster-up.sh` died with "BASH_SOURCE[0]: parameter not set" (dash: "Bad
# substitution"): a shell that is not bash reads the first line of code of every script a user runs, which
# must say, in that shell, to run it with bash. (scripts/test.sh lint installs zsh and mksh.)
@test "every script a user runs, started by sh, dash, zsh or mksh: says to run it with bash and exits 1" {
  local script shell
  cd "$ROOT"
  for shell in sh dash zsh mksh; do
    command -v "$shell" >/dev/null || fail "$shell is missing (apt-get install $shell)"
  done
  for script in scripts/*.sh; do
    for shell in sh dash zsh mksh; do
      run "$shell" "$script" --help
      assert_failure 1
      assert_output --partial "error: $script needs bash >= 4.1, not this shell"
      assert_output --partial "fix: run it as $script (its first line picks bash) or as: bash $script"
    done
    run bash "$script" --help # and bash passes the check
    refute_output --partial "not this shell"
  done
}

# scripts/test.sh's runner on a stand-in test.sh whose suites report what each name says.
@test "the runner: per-suite lines, the sum, and a suite with no test, only skipped ones or a bad exit fails" {
  cat >"$BATS_TEST_TMPDIR/test.sh" <<'SH'
#!/bin/sh
mkdir -p "$LIVENESS_LAB_JUNIT"
case $LL_TEST_SUITE in
  lint) echo '<testsuite><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>' >"$LIVENESS_LAB_JUNIT/r.xml" ;;
  docs) echo '<testsuite><testcase name="a"><skipped/></testcase></testsuite>' >"$LIVENESS_LAB_JUNIT/r.xml" ;;
  chart) echo 'summary: shown'; echo '<testsuite><testcase name="a"/></testsuite>' >"$LIVENESS_LAB_JUNIT/r.xml"; exit 3 ;;
esac
SH
  chmod +x "$BATS_TEST_TMPDIR/test.sh"
  run python3 "$ROOT/scripts/tests/run_suites.py" "$BATS_TEST_TMPDIR/test.sh" "$BATS_TEST_TMPDIR/logs" lint docs chart cluster
  assert_failure 1
  assert_line --regexp '^lint     passed in [0-9]+s \(2 tests, 1 skipped\)$'
  assert_line --regexp '^docs     FAILED in [0-9]+s \(exit 0; 1 tests, 1 skipped, 1 failed; every test was skipped\)'
  assert_line '  shown'
  assert_line --regexp '^chart    FAILED in [0-9]+s \(exit 3; 1 tests, 1 failed; no failing test reported\)'
  assert_line --regexp '^cluster  FAILED in [0-9]+s \(exit 0; 0 tests, 1 failed; no test reported\)'
  assert_line 'failed suites: docs chart cluster'
  assert_line '2 passed, 3 failed (2 skipped)' # chart's one test passed: its failure is the exit status
}

# The service suite and the cluster's images beside the suites that need no cluster: each stand-in suite
# passes only when it ran as the runner says (lint while service runs, told so, and while the images build at
# nice 19 in a session of their own; e2e after both ended, not told; serially, no images beforehand).
@test "the runner: the service suite and the images build beside lint, a cluster suite waits for both, LIVENESS_LAB_TEST_SERIAL=1 runs one at a time" {
  cat >"$BATS_TEST_TMPDIR/test.sh" <<'SH'
#!/bin/sh
mkdir -p "$LIVENESS_LAB_JUNIT"
d=$(dirname "$0")
verdict() { if eval "$1"; then echo '<testsuite><testcase name="a"/></testsuite>'; else echo '<testsuite><testcase name="a"><failure/></testcase></testsuite>'; fi >"$LIVENESS_LAB_JUNIT/r.xml"; }
case $LL_TEST_SUITE in
  service) touch "$d/service.started"; sleep 2; touch "$d/service.ended"; verdict true ;;
  lint) for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$d/service.started" ] && [ -e "$d/images.started" ] && break; sleep 0.5; done
    verdict "[ -e '$d/service.started' ] && [ ! -e '$d/service.ended' ] && [ \"\${LL_SERVICE_BESIDE:-}\" = 1 ] && [ -e '$d/images.started' ] && [ ! -e '$d/images.ended' ]" ;;
  e2e) verdict "[ -e '$d/service.ended' ] && [ -z \"\${LL_SERVICE_BESIDE:-}\" ] && { [ ! -e '$d/images.started' ] || [ -e '$d/images.ended' ]; }" ;;
esac
SH
  # The stand-in cluster-up says how it was started: its arguments, LL_BUILD_NICE, and whether it leads a session.
  cat >"$BATS_TEST_TMPDIR/cluster-up.sh" <<'SH'
#!/bin/sh
d=$(dirname "$0")
echo "$* nice=${LL_BUILD_NICE:-} own-session=$([ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] && echo yes || echo no)" >"$d/images.started"
sleep 3
touch "$d/images.ended"
SH
  chmod +x "$BATS_TEST_TMPDIR/test.sh" "$BATS_TEST_TMPDIR/cluster-up.sh"
  run python3 "$ROOT/scripts/tests/run_suites.py" "$BATS_TEST_TMPDIR/test.sh" "$BATS_TEST_TMPDIR/logs" lint service e2e
  assert_success
  assert_line --index 0 --regexp '^service  running beside lint \(log: '
  assert_line --index 1 --regexp '^images   building beside lint, service, at the lowest CPU priority \(log: '
  assert_line --regexp '^lint     passed in [0-9]+s \(1 tests\)$'
  assert_line --regexp '^images   ready in [0-9]+s$'
  assert_line --regexp '^e2e      passed in [0-9]+s \(1 tests\)$'
  assert_line '3 passed, 0 failed'
  assert_equal "$(cat "$BATS_TEST_TMPDIR/images.started")" "--images-only nice=19 own-session=yes"
  rm -f "$BATS_TEST_TMPDIR"/service.* "$BATS_TEST_TMPDIR"/images.*
  LIVENESS_LAB_TEST_SERIAL=1 run python3 "$ROOT/scripts/tests/run_suites.py" "$BATS_TEST_TMPDIR/test.sh" "$BATS_TEST_TMPDIR/logs" lint service e2e
  assert_failure 1
  assert_line --index 0 --regexp '^lint     running \(log: '
  assert_line --regexp '^lint     FAILED in'
  assert_line 'failed suites: lint'
  [ ! -e "$BATS_TEST_TMPDIR/images.started" ] || fail "LIVENESS_LAB_TEST_SERIAL=1 built the images beside a suite"
}

# Host-side Python that cluster-up runs with the user's python3 (scripts/libexec: tools.py, lock_check.py,
# pod_network.py...) must run on macOS's own, the Command Line Tools' 3.9 (vermin, VERMIN_VERSION).
vermin_39() { vermin -t=3.9- --violations --no-tips --no-make-paths-absolute "$@"; }

@test "vermin catches a planted line that needs Python 3.10 or 3.11" {
  command -v vermin >/dev/null || fail "vermin is not on PATH (scripts/test.sh lint installs it)"
  printf 'import tomllib\n' >"$BATS_TEST_TMPDIR/needs311.py"
  run vermin_39 "$BATS_TEST_TMPDIR/needs311.py"
  assert_failure
  assert_output --partial "tomllib"
  printf 'def f(x):\n    match x:\n        case 1:\n            return 2\n' >"$BATS_TEST_TMPDIR/needs310.py"
  run vermin_39 "$BATS_TEST_TMPDIR/needs310.py"
  assert_failure
}

@test "scripts/libexec runs on macOS's python3 (3.9): vermin finds nothing newer" {
  command -v vermin >/dev/null || fail "vermin is not on PATH (scripts/test.sh lint installs it)"
  cd "$ROOT"
  run ls scripts/libexec/*.py
  assert_success
  run vermin_39 scripts/libexec
  assert_success # else the line vermin names needs a newer Python than a Mac's own python3
}

# GNU sed's regular-expression extensions and escapes, which BSD sed (macOS's) reads as other characters
# or refuses: \+ \? \| in a basic expression, \s \S \w \W \b \B \< \> classes and anchors, \t. A sed
# program of the scripts users run must spell them portably ([[:space:]], [+], a literal tab, -E).
GNU_SED_ESCAPE='\\[+?|sSwWbB<>t]'
# gnu_sed_lines FILE...: the lines whose sed call has a quoted program with such an escape (a line marked
# `# portable:` and comment lines left out).
gnu_sed_lines() {
  local line program
  grep -HnE '(^|[^[:alnum:]_-])sed ' "$@" | grep -v '# portable:' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' |
    while IFS= read -r line; do
      program=$(printf '%s\n' "${line#*:*:}" | grep -oE "sed( +-[A-Za-z]+)*( +('[^']*'|\"[^\"]*\"))+" || true)
      if printf '%s\n' "$program" | grep -qE "$GNU_SED_ESCAPE"; then printf '%s\n' "$line"; fi
    done
}

@test "the GNU-only sed check catches the planted \\+ \\? \\| \\s \\t, not portable programs" {
  # shellcheck disable=SC2016 # the planted lines are text, not code
  printf '%s\n' "v=\$(sed -n 's/^a\\+//p' f)" "sed 's/x\\?\$//' f" "sed -n '/a\\|b/p' f" "sed 's/\\s*\$//' f" \
    'sed "s/\t/ /" f' "sed -n 's|^  <version>\\(.*\\)</version>|\\1|p' f" "sed -E 's/[[:space:]]+\$//' f" \
    "sed -e 's/\\[[^]]*\\]//' f" "  # sed 's/a\\+//' in a comment" >"$BATS_TEST_TMPDIR/probe"
  run gnu_sed_lines "$BATS_TEST_TMPDIR/probe"
  assert_equal "${#lines[@]}" 5
  assert_output --partial "probe:1:"
  assert_output --partial "probe:5:"
  refute_output --partial "probe:6:"
}

@test "the sed programs of the scripts users run use no GNU-only escape" {
  cd "$ROOT"
  run gnu_sed_lines "${PORTABLE_SCRIPTS[@]}"
  assert_output "" # else spell it portably, or mark a line that needs it behind a check '# portable: why'
}

# ruff, Python's linter and formatter (locust/ruff.toml; scripts/ruff.toml and chart/tests/ruff.toml extend it),
# from the dev .venv (scripts/test.sh lint installs it).
RUFF=$ROOT/.venv/bin/ruff

@test "ruff: the Python of locust/, scripts/ and chart/ passes ruff check and is as ruff format writes it" {
  cd "$ROOT"
  run "$RUFF" check locust scripts chart
  assert_success
  run "$RUFF" format --check locust scripts chart
  assert_success # else: .venv/bin/ruff format locust scripts chart && .venv/bin/ruff check --fix locust scripts chart
}

@test "ruff catches a planted unused import, a line over 140 characters and a file it would reformat" {
  local dir=$BATS_TEST_TMPDIR/locust
  mkdir -p "$dir" && cp "$ROOT/locust/ruff.toml" "$dir/" # the project's settings apply to files beside them
  printf '"""Clean."""\n\nX = 1\n' >"$dir/clean.py"
  printf 'import os\n' >"$dir/unused.py"
  printf 'X = "%s"\n' "$(printf 'a%.0s' $(seq 140))" >"$dir/long.py"
  printf 'x = {  "a":1 }\n' >"$dir/unformatted.py"
  cd "$dir"
  run "$RUFF" check clean.py
  assert_success
  run "$RUFF" format --check clean.py
  assert_success
  run "$RUFF" check --output-format concise unused.py
  assert_failure
  assert_output --partial "F401"
  run "$RUFF" check --output-format concise long.py
  assert_failure
  assert_output --partial "E501 Line too long (146 > 140)"
  run "$RUFF" format --check unformatted.py
  assert_failure
  assert_output --partial "1 file would be reformatted"
}
