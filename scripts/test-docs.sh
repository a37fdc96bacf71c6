#!/usr/bin/env bash
# Keeps the READMEs and docs/*.md honest: every script they name exists and answers --help, every option they show
# for a script is one its --help lists, every LIVENESS_LAB_* setting they name is read by the code, and
# every `--set` they show is a value the chart accepts.
# Run by `scripts/test.sh docs`. No cluster needed.
#
# Usage: scripts/test-docs.sh
# Ends with "N passed, N failed"; exits 1 when anything failed.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"
use_tools_bin

case ${1:-} in
  -h | --help) ll_usage; exit 0 ;;
  "") ;;
  *) die "unknown argument '$1'" "scripts/test-docs.sh takes none (see --help)" ;;
esac

DOCS=("$LL_ROOT/README.md" "$LL_ROOT/chart/README.md" "$LL_ROOT/locust/README.md" "$LL_ROOT"/docs/*.md)
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$*"; }

# Each `scripts/NAME.sh` the docs name, once.
mapfile -t scripts < <(grep -oh 'scripts/[a-z-]*\.sh' "${DOCS[@]}" | sort -u)
for script in "${scripts[@]}"; do
  if [ ! -x "$LL_ROOT/$script" ]; then
    fail "$script: named in the docs but not an executable script"
    continue
  fi
  # A time limit, so that a script that does not know --help cannot run its real job here.
  help=$(timeout 120 "$LL_ROOT/$script" --help 2>&1) || { fail "$script --help exits non-zero or hangs"; continue; }
  ok "$script --help"
  # Every --option shown right after the script on one line of the docs is one its --help knows.
  while read -r option; do
    [ -n "$option" ] || continue
    if grep -q -- "$option\b" <<<"$help"; then ok "$script $option is in its --help"; else fail "$script $option: shown in the docs, not in its --help"; fi
  done < <(grep -oh "$script\( [^ #|\`]*\)*" "${DOCS[@]}" | grep -o -- ' --[a-z-]*' | sort -u)
done

# Each LIVENESS_LAB_* setting the docs name is read by some script or module.
mapfile -t settings < <(grep -oh 'LIVENESS_LAB_[A-Z_]*[A-Z]' "${DOCS[@]}" | sort -u)
for setting in "${settings[@]}"; do
  if grep -rqs --include='*.sh' --include='*.py' -- "$setting" "$LL_ROOT/scripts" "$LL_ROOT/locust"; then
    ok "$setting is read by the code"
  else
    fail "$setting: named in the docs, read by no script"
  fi
done

# Each `--set KEY=VALUE` the docs show renders with the chart (the schema refuses unknown keys).
ensure_helm >/dev/null
mapfile -t sets < <(grep -oh -- '--set [^] `),;]*' "${DOCS[@]}" | sed 's/[.]$//' | sort -u)
for set in "${sets[@]}"; do
  # shellcheck disable=SC2086 # "--set KEY=VALUE" is two words on purpose
  if helm template liveness-lab "$LL_ROOT/chart" --namespace liveness-lab --kube-version "$KUBERNETES_VERSION" $set >/dev/null 2>&1; then
    ok "chart accepts $set"
  else
    fail "chart refuses $set, shown in the docs"
  fi
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
