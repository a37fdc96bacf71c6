#!/usr/bin/env bash
# Makes a folder of commands that behave like a stock Mac's where Debian can be made to: put it first on
# PATH (and use path_without_gnu_only for the rest) and a script meets macOS's userland, not GNU's.
# For the tests only: the registry-path e2e (the laptop simulation, scripts/test-registry.sh) and the
# suites that run the user-facing scripts' functions. What it proves and what it cannot: docs/laptop.md.
#
#   awk       Debian's original-awk: the BWK "one true awk" macOS ships (the same code, a 2022 version),
#             which refuses what GNU awk and mawk accept (e.g. "[=" in a bracket expression)
#   date      GNU date with BSD's interface: -d/--date refused ("illegal option"), -r SECONDS is a time
#             (GNU's -r is a file's), %N is not expanded (BSD prints "N")
#   sed       -i takes the next argument as the backup suffix, as BSD's does ('' for none): GNU's
#             `sed -i 's/a/b/' f` fails here as it does on a Mac
#   wc        counts right-aligned in 8 columns, as BSD's wc prints them ("       3")
#   paste     refuses to read standard input without "-" (BSD's needs a file operand)
#   grep, stat, base64, find, cp, install, xargs, mktemp, readlink, sort
#             refuse the GNU-only options a Mac's do not have (grep -P, stat -c, base64 -w, find -printf,
#             cp --parents, install -D, xargs -r, sort -V, any --long option of those)
# and leaves out, via path_without_gnu_only, the GNU tools a Mac does not have at all: timeout, nproc,
# sha256sum and friends (macOS has shasum), tac, shuf, numfmt, truncate, stdbuf, setsid, flock.
#
# Usage: scripts/libexec/macos-userland.sh DIR     (makes DIR; prints nothing on success)
#        . scripts/libexec/macos-userland.sh        (sourced: defines MACOS_MISSING and path_without_gnu_only)
# Needs: original-awk (apt-get install original-awk).

# The GNU tools a stock macOS (14, 15) does not have.
MACOS_MISSING=(timeout nproc sha256sum sha224sum sha384sum sha512sum sha1sum md5sum b2sum tac shuf numfmt truncate stdbuf setsid flock)

# path_without_gnu_only PATH FARM: PATH with every folder that holds one of MACOS_MISSING replaced by a
# folder of links (under FARM) to everything else in it. Prints the new PATH.
path_without_gnu_only() {
  local dirs dir n=0 farm entry name tool out='' hit
  IFS=: read -ra dirs <<<"$1"
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || continue
    hit=0
    for tool in "${MACOS_MISSING[@]}"; do [ ! -e "$dir/$tool" ] || { hit=1; break; }; done
    if [ "$hit" = 1 ]; then
      farm=$2/$n
      n=$((n + 1))
      rm -rf "$farm" && mkdir -p "$farm"
      for entry in "$dir"/* "$dir"/.[!.]*; do
        [ -e "$entry" ] || continue
        name=${entry##*/}
        case " ${MACOS_MISSING[*]} " in *" $name "*) continue ;; esac
        ln -s "$entry" "$farm/$name"
      done
      dir=$farm
    fi
    out+=${out:+:}$dir
  done
  echo "$out"
}

# refusing NAME REAL PATTERN MESSAGE: a wrapper NAME that fails like BSD's when an argument matches the
# extended regular expression PATTERN, else runs REAL.
refusing() {
  cat >"$DIR/$1" <<EOF
#!/bin/sh
# macOS userland stand-in (scripts/libexec/macos-userland.sh): $4
for a in "\$@"; do
  if printf '%s\n' "\$a" | /bin/grep -Eq -- '$3'; then
    echo "$1: illegal option \$a ($4; this is the macOS userland simulation)" >&2
    exit 64
  fi
done
exec $2 "\$@"
EOF
  chmod 0755 "$DIR/$1"
}

make_userland() {
  DIR=$1
  command -v original-awk >/dev/null 2>&1 || { echo "original-awk is missing: apt-get install original-awk" >&2; return 1; }
  mkdir -p "$DIR"
  ln -sf "$(command -v original-awk)" "$DIR/awk"

  cat >"$DIR/date" <<'EOF'
#!/bin/sh
# macOS userland stand-in: BSD date's interface on GNU date (-d refused, -r SECONDS, no %N).
set -e
n=$#
while [ "$n" -gt 0 ]; do
  a=$1; shift; n=$((n - 1))
  case $a in
    -d | --date* | -d*) echo "date: illegal option -- d (BSD date: use -r SECONDS or -j -f; macOS userland simulation)" >&2; exit 1 ;;
    -r) set -- "$@" -d "@$1"; shift; n=$((n - 1)) ;;
    +*) set -- "$@" "$(printf '%s' "$a" | /bin/sed 's/%N/N/g')" ;;
    --*) echo "date: illegal option $a (macOS userland simulation)" >&2; exit 1 ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec /bin/date "$@"
EOF

  cat >"$DIR/sed" <<'EOF'
#!/bin/sh
# macOS userland stand-in: BSD sed's -i takes the next argument as the backup suffix ('' for none).
n=$#
while [ "$n" -gt 0 ]; do
  a=$1; shift; n=$((n - 1))
  case $a in
    -i) [ "$n" -gt 0 ] || { echo "sed: option requires an argument -- i" >&2; exit 1; }
        suffix=$1; shift; n=$((n - 1)); set -- "$@" "-i$suffix" ;;
    --*) echo "sed: illegal option $a (macOS userland simulation)" >&2; exit 1 ;;
    *) set -- "$@" "$a" ;;
  esac
done
exec /bin/sed "$@"
EOF

  cat >"$DIR/wc" <<'EOF'
#!/bin/sh
# macOS userland stand-in: BSD wc right-aligns every count in 8 columns ("       3").
/usr/bin/wc "$@" | /usr/bin/original-awk '{ line = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^[0-9]+$/) line = line sprintf("%8d", $i); else line = line " " $i } print line }'
EOF

  cat >"$DIR/paste" <<'EOF'
#!/bin/sh
# macOS userland stand-in: BSD paste needs a file operand ("-" for standard input).
for a in "$@"; do case $a in -*) ;; *) exec /usr/bin/paste "$@" ;; esac; done
for a in "$@"; do [ "$a" = - ] && exec /usr/bin/paste "$@"; done
echo "usage: paste [-s] [-d delimiters] file ... (macOS userland simulation: BSD paste needs a file, - for standard input)" >&2
exit 1
EOF

  refusing grep /bin/grep '^(-[[:alpha:]]*P|--perl-regexp)' "BSD grep has no -P"
  refusing stat /usr/bin/stat '^(-[[:alpha:]]*c|--format|--printf)' "BSD stat takes -f FORMAT, not -c"
  refusing base64 /usr/bin/base64 '^(-w|--wrap)' "BSD base64 wraps with -b"
  refusing find /usr/bin/find '^-(printf|fprintf|regextype)$' "BSD find has no -printf"
  refusing cp /bin/cp '^--' "BSD cp has no long options (--parents...)"
  refusing install /usr/bin/install '^(-[[:alpha:]]*D|--)' "BSD install has no -D"
  refusing xargs /usr/bin/xargs '^(-[[:alpha:]]*r|--no-run-if-empty)$' "BSD xargs has no -r"
  refusing mktemp /bin/mktemp '^--' "BSD mktemp has no long options"
  refusing sort /usr/bin/sort '^(-[[:alpha:]]*V|--version-sort)$' "BSD sort has no -V before macOS 15"
  chmod 0755 "$DIR/date" "$DIR/sed" "$DIR/wc" "$DIR/paste"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -o errexit -o nounset -o pipefail
  case ${1:-} in
    "" | -h | --help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ] || exit 2; exit 0 ;;
  esac
  make_userland "$1"
fi
