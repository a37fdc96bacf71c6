#!/usr/bin/env python3
"""Makes a folder of commands that behave like a stock Mac's where Debian can be made to: put it first on
PATH (and PATH's other folders without the GNU-only tools, path_without_gnu_only) and a script meets
macOS's userland, not GNU's. For the tests only: the registry-path e2e (the laptop simulation,
scripts/test-registry.sh) and the suites that run the user-facing scripts' functions
(scripts/tests/test_helper.bash use_macos_userland). What it proves and what it cannot: docs/laptop.md.

  awk       Debian's original-awk: the BWK "one true awk" macOS ships (the same code, a 2022 version),
            which refuses what GNU awk and mawk accept (e.g. "[=" in a bracket expression)
  date      GNU date with BSD's interface: -d/--date refused ("illegal option"), -r SECONDS is a time
            (GNU's -r is a file's; -r FILE stays a file's, as on a Mac), %N is not expanded (BSD prints "N")
  sed       -i takes the next argument as the backup suffix, as BSD's does ('' for none): GNU's
            `sed -i 's/a/b/' f` fails here as it does on a Mac
  wc        counts right-aligned in 8 columns, as BSD's wc prints them ("       3")
  paste     refuses to read standard input without "-" (BSD's needs a file operand)
  grep, stat, base64, find, cp, install, xargs, mktemp, readlink, sort
            refuse the GNU-only options a Mac's do not have (grep -P, stat -c, base64 -w, find -printf,
            cp --parents, install -D, xargs -r, readlink -e/-m, sort -V, any --long option of those)
and leaves out, via path_without_gnu_only, the GNU tools a Mac does not have at all (MACOS_MISSING):
timeout, nproc, sha256sum and friends (macOS has shasum), tac, shuf, numfmt, truncate, stdbuf, setsid, flock.

Every stand-in but awk (a link to original-awk) is a three-line Python script calling stand_in() in this
file's copy, DIR/.lib/macos_userland.py.

Usage: scripts/tests/macos_userland.py DIR              makes DIR (prints nothing on success)
       scripts/tests/macos_userland.py DIR PATH FARM    makes DIR, then prints the PATH of the userland:
                                                          DIR, then PATH without the GNU-only tools (their
                                                          folders replaced by folders of links under FARM)
       scripts/tests/macos_userland.py --missing        prints MACOS_MISSING
Needs: original-awk (apt-get install original-awk). Python 3, the standard library only.
Tests: scripts/tests/test_macos_userland.py (the stand-ins), scripts/tests/macos.bats (scripts in them).
"""
import os
import sys

# The GNU tools a stock macOS (14, 15) does not have.
MACOS_MISSING = ("timeout", "nproc", "sha256sum", "sha224sum", "sha384sum", "sha512sum", "sha1sum", "md5sum",
                 "b2sum", "tac", "shuf", "numfmt", "truncate", "stdbuf", "setsid", "flock")

# The stand-ins that refuse what BSD's lacks: the real command, the arguments refused (a regular
# expression matched at an argument's start) and why.
REFUSING = {
    "grep": ("/bin/grep", r"-[A-Za-z]*P|--perl-regexp", "BSD grep has no -P"),
    "stat": ("/usr/bin/stat", r"-[A-Za-z]*c|--format|--printf", "BSD stat takes -f FORMAT, not -c"),
    "base64": ("/usr/bin/base64", r"-w|--wrap", "BSD base64 wraps with -b"),
    "find": ("/usr/bin/find", r"-(printf|fprintf|regextype)$", "BSD find has no -printf"),
    "cp": ("/bin/cp", r"--", "BSD cp has no long options (--parents...)"),
    "install": ("/usr/bin/install", r"-[A-Za-z]*D|--", "BSD install has no -D"),
    "xargs": ("/usr/bin/xargs", r"(-[A-Za-z]*r|--no-run-if-empty)$", "BSD xargs has no -r"),
    "mktemp": ("/bin/mktemp", r"--", "BSD mktemp has no long options"),
    "readlink": ("/bin/readlink", r"-[A-Za-z]*[emz]|--", "BSD readlink has only -f and -n"),
    "sort": ("/usr/bin/sort", r"(-[A-Za-z]*V|--version-sort)$", "BSD sort has no -V before macOS 15"),
}
STAND_INS = ("date", "sed", "wc", "paste", *REFUSING)
SIMULATION = "macOS userland simulation"


def fail(message: str, status: int = 1) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(status)


def run(real: str, args: list) -> None:
    os.execv(real, [real, *args])


def date(args: list) -> None:
    out = []
    while args:
        a = args.pop(0)
        if a == "-d" or a.startswith(("--date", "-d")):
            fail(f"date: illegal option -- d (BSD date: use -r SECONDS or -j -f; {SIMULATION})")
        elif a == "-r":
            if not args:
                fail("date: option requires an argument -- r")
            seconds = args.pop(0)
            out += ["-d", f"@{seconds}"] if seconds.lstrip("-").isdigit() else ["-r", seconds]
        elif a.startswith("+"):
            out.append(a.replace("%N", "N"))
        elif a.startswith("--"):
            fail(f"date: illegal option {a} ({SIMULATION})")
        else:
            out.append(a)
    run("/bin/date", out)


def sed(args: list) -> None:
    out = []
    while args:
        a = args.pop(0)
        if a == "-i":
            if not args:
                fail("sed: option requires an argument -- i")
            out.append("-i" + args.pop(0))
        elif a.startswith("--"):
            fail(f"sed: illegal option {a} ({SIMULATION})")
        else:
            out.append(a)
    run("/bin/sed", out)


def wc(args: list) -> None:
    import subprocess

    done = subprocess.run(["/usr/bin/wc", *args], stdout=subprocess.PIPE)
    for line in done.stdout.splitlines():
        sys.stdout.buffer.write(b"".join(b"%8d" % int(f) if f.isdigit() else b" " + f for f in line.split()) + b"\n")
    sys.stdout.flush()
    sys.exit(done.returncode)


def paste(args: list) -> None:
    files, rest = [], list(args)
    while rest:
        a = rest.pop(0)
        if a == "--":
            files += rest
            break
        if a == "-d":
            rest = rest[1:]  # the delimiters
        elif a == "-" or not a.startswith("-"):
            files.append(a)
    if not files:
        fail(f"usage: paste [-s] [-d delimiters] file ... ({SIMULATION}: BSD paste needs a file, - for standard input)")
    run("/usr/bin/paste", args)


def refusing(name: str, args: list) -> None:
    import re

    real, pattern, why = REFUSING[name]
    for a in args:
        if re.match(pattern, a):
            fail(f"{name}: illegal option {a} ({why}; this is the {SIMULATION})", 64)
    run(real, args)


def stand_in(name: str, args: list) -> None:
    """Runs the stand-in NAME with ARGS: what the generated scripts call."""
    {"date": date, "sed": sed, "wc": wc, "paste": paste}.get(name, lambda a: refusing(name, a))(list(args))


def make_userland(folder: str) -> None:
    """Makes FOLDER, the stand-ins (awk a link to original-awk). Raises SystemExit without original-awk."""
    import shutil

    awk = shutil.which("original-awk")
    if not awk:
        fail("original-awk is missing: apt-get install original-awk")
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "awk")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(awk, link)
    # The stand-ins run this file's copy in FOLDER with the system's python3 (any user may run both: the
    # cluster suite runs a copy of cluster-up.sh as the user nobody).
    lib = os.path.join(folder, ".lib")
    os.makedirs(lib, exist_ok=True)
    shutil.copyfile(os.path.abspath(__file__), os.path.join(lib, "macos_userland.py"))
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else os.path.realpath(sys.executable)
    for name in STAND_INS:
        path = os.path.join(folder, name)
        why = REFUSING[name][2] if name in REFUSING else "BSD's interface"
        with open(path, "w") as f:
            f.write(f"#!{python} -IS\n# macOS userland stand-in (scripts/tests/macos_userland.py): {why}\n"
                    f"import sys; sys.path.insert(0, {lib!r}); import macos_userland\n"
                    f"macos_userland.stand_in({name!r}, sys.argv[1:])\n")
        os.chmod(path, 0o755)


def path_without_gnu_only(path: str, farm: str) -> str:
    """PATH with every folder that holds one of MACOS_MISSING replaced by a folder of links (under FARM)
    to everything else in it."""
    import shutil

    out, n = [], 0
    for folder in path.split(":"):
        if not os.path.isdir(folder):
            continue
        if any(os.path.exists(os.path.join(folder, tool)) for tool in MACOS_MISSING):
            links = os.path.join(farm, str(n))
            n += 1
            shutil.rmtree(links, ignore_errors=True)
            os.makedirs(links)
            for name in sorted(os.listdir(folder)):
                entry = os.path.join(folder, name)
                if name not in MACOS_MISSING and os.path.exists(entry):
                    os.symlink(entry, os.path.join(links, name))
            folder = links
        out.append(folder)
    return ":".join(out)


def main(argv: list) -> None:
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(__doc__)
        sys.exit(0)
    if argv == ["--missing"]:
        print(" ".join(MACOS_MISSING))
    elif len(argv) == 1:
        make_userland(argv[0])
    elif len(argv) == 3:
        make_userland(argv[0])
        print(f"{argv[0]}:{path_without_gnu_only(argv[1], argv[2])}")
    else:
        fail(f"error: expected DIR, DIR PATH FARM or --missing, got {len(argv)} arguments\n  fix: see {sys.argv[0]} --help", 2)


if __name__ == "__main__":
    main(sys.argv[1:])
