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

With --mac, DIR also makes this machine a Mac as the scripts ask about it (the branches a Mac takes):
  uname     Darwin on Apple Silicon: -s Darwin, -m arm64, -p arm, -r 24.6.0 (macOS 15)
  id        a user's, not root's: -u 501, -g 20, -un mac, -gn staff (the processes still run as this user)
  bash      the /bin/bash a Mac has first on PATH where `brew shellenv` never ran: bash 3.2. LIVENESS_LAB_SIM_BASH32
            when set (a bash 3.2 built from GNU's sources), else Debian's bash built from its source package
            with its version set to 3.2.57, Apple's (cached under <cache>/bash-as-3.2.57-debian-VERSION): it
            stops at the scripts' version check as Apple's does, and is bash 5 in everything else. Its
            downloads are tried 4 times (5, 10, 20 s apart); a failed build's log is kept in
            LIVENESS_LAB_LOGS (default <cache>/logs) as bash-as-3.2.57-failed-TIME-PID.log, named in the error
  python3   the Python a Mac user is told to install, LOCUST_PYTHON_MIN_MACOS (LIVENESS_LAB_SIM_PYTHON, else
            python3.12 on PATH or pyenv's)
The bash a Mac user chooses by hand (Homebrew's, /opt/homebrew/bin/bash) is --bash's answer: LIVENESS_LAB_SIM_BASH,
else this machine's /bin/bash. What the simulation proves and what only a real Mac can: docs/laptop.md.

Usage: scripts/tests/macos_userland.py [--mac] DIR            makes DIR (prints nothing on success)
       scripts/tests/macos_userland.py [--mac] DIR PATH FARM  makes DIR, then prints the PATH of the userland:
                                                              DIR, then PATH without the GNU-only tools (their
                                                              folders replaced by folders of links under FARM)
       scripts/tests/macos_userland.py --missing              prints MACOS_MISSING
       scripts/tests/macos_userland.py --bash                 prints the bash chosen by hand
       scripts/tests/macos_userland.py --bash32               prints the bash 3.2 (building it first if need be)
Needs: original-awk (apt-get install original-awk); for the bash 3.2 stand-in Debian's apt-get, gcc and make.
Python 3, the standard library only.
Tests: scripts/tests/test_macos_userland.py (the stand-ins), scripts/tests/macos.bats (scripts in them).
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

CACHE = Path(os.environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab")
REPO = Path(__file__).resolve().parents[2]
# Apple's /bin/bash (macOS 10.3 to 15): GNU bash 3.2.57.
APPLE_BASH = "3.2.57"

# The GNU tools a stock macOS (14, 15) does not have.
MACOS_MISSING = (
    "timeout",
    "nproc",
    "sha256sum",
    "sha224sum",
    "sha384sum",
    "sha512sum",
    "sha1sum",
    "md5sum",
    "b2sum",
    "tac",
    "shuf",
    "numfmt",
    "truncate",
    "stdbuf",
    "setsid",
    "flock",
)

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
# In a folder of links of path_without_gnu_only: the folder it stands for.
FARM_OF = ".macos-userland-farm-of"


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
            f.write(
                f"#!{python} -IS\n# macOS userland stand-in (scripts/tests/macos_userland.py): {why}\n"
                f"import sys; sys.path.insert(0, {lib!r}); import macos_userland\n"
                f"macos_userland.stand_in({name!r}, sys.argv[1:])\n"
            )
        os.chmod(path, 0o755)


UNAME = r"""#!/bin/sh
# macOS identity stand-in (scripts/tests/macos_userland.py --mac): Darwin 24.6.0 (macOS 15) on Apple Silicon.
host=$(/bin/uname -n)
[ $# -gt 0 ] || set -- -s
out=
for arg in "$@"; do
  case $arg in -?*) ;; *) echo "usage: uname [-amnoprsv]" >&2; exit 64 ;; esac
  flags=${arg#-}
  while [ -n "$flags" ]; do
    flag=${flags%"${flags#?}"} flags=${flags#?}
    case $flag in
      s | o) out="$out Darwin" ;;
      m) out="$out arm64" ;;
      p) out="$out arm" ;;
      r) out="$out 24.6.0" ;;
      n) out="$out $host" ;;
      v) out="$out Darwin Kernel Version 24.6.0" ;;
      a) out="Darwin $host 24.6.0 Darwin Kernel Version 24.6.0 arm64" ;;
      *) echo "uname: illegal option -- $flag" >&2; echo "usage: uname [-amnoprsv]" >&2; exit 64 ;;
    esac
  done
done
echo "${out# }"
"""

ID = r"""#!/bin/sh
# macOS identity stand-in (scripts/tests/macos_userland.py --mac): a Mac's first user, not root.
case "$*" in
  -u | -ru) echo 501 ;;
  -g | -rg) echo 20 ;;
  -un | -nu | "-u -n" | "-n -u") echo mac ;;
  -gn | -ng | "-g -n" | "-n -g") echo staff ;;
  -G) echo "20 12 61 79 80 81 98 701" ;;
  "") echo "uid=501(mac) gid=20(staff) groups=20(staff),12(everyone),61(localaccounts),80(admin)" ;;
  *) echo "id: $* (the macOS simulation answers -u, -g, -un, -gn, -G)" >&2; exit 1 ;;
esac
"""


def sim_python() -> str:
    """The Python a Mac user is told to install (LOCUST_PYTHON_MIN_MACOS in scripts/versions.env):
    LIVENESS_LAB_SIM_PYTHON, else pythonX.Y on PATH, else pyenv's."""
    want = re.search(r"^LOCUST_PYTHON_MIN_MACOS=(\S+)", (REPO / "scripts" / "versions.env").read_text(), re.M).group(1)
    given = os.environ.get("LIVENESS_LAB_SIM_PYTHON")
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates = (
        [given]
        if given
        else [shutil.which(f"python{want}")] + sorted((str(p) for p in root.glob(f"versions/{want}*/bin/python{want}")), reverse=True)
    )
    for found in filter(None, candidates):
        check = "import sys, venv; sys.exit(sys.version_info[:2] != tuple(map(int, sys.argv[1].split('.'))))"
        if subprocess.run([found, "-c", check, want], capture_output=True).returncode == 0:
            return found
    fail(
        f"no Python {want} with venv found (the version a Mac user is told to install)\n"
        f"  fix: set LIVENESS_LAB_SIM_PYTHON to one, or put python{want} on PATH"
    )


def explicit_bash() -> str:
    """The bash a Mac user chooses by hand (Homebrew's): LIVENESS_LAB_SIM_BASH, else /bin/bash."""
    return os.environ.get("LIVENESS_LAB_SIM_BASH") or "/bin/bash"


def _apt_sources() -> tuple:
    """(URI, SUITE, SIGNED-BY) of this machine's first Debian source that is not a security suite."""
    for sources in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in sources.read_text().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", stanza, re.M))
            if fields.get("URIs") and "security" not in fields.get("Suites", "") and "deb" in fields.get("Types", ""):
                return fields["URIs"].split()[0], fields["Suites"].split()[0], fields.get("Signed-By", "").split()[0:1]
    for line in Path("/etc/apt/sources.list").read_text().splitlines() if Path("/etc/apt/sources.list").exists() else []:
        words = re.sub(r"\[[^]]*\]", "", line).split()
        if len(words) >= 3 and words[0] == "deb" and "security" not in words[2]:
            return words[1], words[2], []
    fail("no Debian source found in /etc/apt (the bash 3.2 stand-in is built from Debian's bash source package)")


# The bash 3.2 stand-in's downloads (apt-get update, apt-get source) are tried this many times, waiting
# RETRY_WAIT_S, then twice, four times as long between tries: a mirror's hiccup on a fresh machine must not
# fail the suite (issue 50: one did, once, and its log was gone).
ATTEMPTS = 4
RETRY_WAIT_S = 5


class BuildFailed(Exception):
    """A step of the bash 3.2 stand-in's build failed; the message says which."""


def _run_step(argv: list, cwd: Path, log: Path, attempts: int = 1) -> None:
    """ARGV in CWD, its output appended to LOG, tried up to ATTEMPTS times with a doubling wait between; raises
    BuildFailed when the last try fails."""
    env = {**os.environ, "PATH": host_path(os.environ.get("PATH", os.defpath))}
    for attempt in range(1, attempts + 1):
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, argv))}" + (f"  (try {attempt} of {attempts})" if attempts > 1 else "") + "\n")
            f.flush()
            rc = subprocess.run(argv, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
            if rc == 0:
                return
            if attempt < attempts:
                wait = RETRY_WAIT_S * 2 ** (attempt - 1)
                f.write(f"exit {rc}; trying again in {wait} s\n")
        if attempt < attempts:
            time.sleep(wait)
    raise BuildFailed(f"{' '.join(map(str, argv[:3]))}... (exit {rc}" + (f", {attempts} tries" if attempts > 1 else "") + ")")


def _keep_log(log: Path) -> Path:
    """The failed build's LOG moved where no later build removes it: LIVENESS_LAB_LOGS (default <cache>/logs),
    named with the time and this process."""
    logs = Path(os.environ.get("LIVENESS_LAB_LOGS") or CACHE / "logs")
    logs.mkdir(parents=True, exist_ok=True)
    stem, n = f"bash-as-{APPLE_BASH}-failed-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}", 1
    kept = logs / f"{stem}.log"
    while kept.exists():
        n += 1
        kept = logs / f"{stem}-{n}.log"
    if log.exists():
        shutil.copyfile(log, kept)
    else:
        kept.write_text("the build failed before its log was written\n")
    return kept


def bash32() -> str:
    """A bash that says it is 3.2.57: LIVENESS_LAB_SIM_BASH32, else built here (see the module's doc) into the
    cache, once. Each build works in a folder of its own (two suites may build at once), tries its downloads
    ATTEMPTS times, and on failure keeps its log (_keep_log), naming it in the error."""
    given = os.environ.get("LIVENESS_LAB_SIM_BASH32")
    if given:
        return given
    uri, suite, signed = _apt_sources()
    out = CACHE / f"bash-as-{APPLE_BASH}-debian-{suite}"
    binary = out / "bin" / "bash"
    if os.access(binary, os.X_OK):
        return str(binary)
    work = CACHE / "build" / f"bash-as-{APPLE_BASH}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    log = work / "build.log"
    try:
        _build_bash32(work, log, uri, suite, signed, binary)
    except BuildFailed as error:
        kept = _keep_log(log)
        shutil.rmtree(work, ignore_errors=True)
        fail(f"building the bash 3.2 stand-in failed at {error}; log: {kept}")
    shutil.rmtree(work, ignore_errors=True)
    return str(binary)


def _build_bash32(work: Path, log: Path, uri: str, suite: str, signed: list, binary: Path) -> None:
    """Debian SUITE's bash source from URI into WORK, its version set to APPLE_BASH, built and installed as
    BINARY (atomically: a build finishing at the same time replaces it with the same). BuildFailed on failure."""
    (work / "lists" / "partial").mkdir(parents=True)
    (work / "archives" / "partial").mkdir(parents=True)
    option = f"[signed-by={signed[0]}] " if signed else ""
    (work / "sources.list").write_text(f"deb-src {option}{uri} {suite} main\n")
    apt = [
        "-o",
        f"Dir::Etc::SourceList={work / 'sources.list'}",
        "-o",
        "Dir::Etc::SourceParts=/dev/null",
        "-o",
        f"Dir::State::Lists={work / 'lists'}",
        "-o",
        f"Dir::Cache={work}",
        "-q",
    ]
    _run_step(["apt-get", *apt, "update"], work, log, ATTEMPTS)
    _run_step(["apt-get", *apt, "source", "--download-only", f"bash/{suite}"], work, log, ATTEMPTS)
    tarball = next(work.glob("bash_*.orig.tar.*"), None)
    if tarball is None:
        raise BuildFailed(f"apt-get source: no bash orig tarball in {work}")
    _run_step(["tar", "-xf", str(tarball)], work, log)
    src = next(p for p in work.iterdir() if p.is_dir() and p.name.startswith("bash-"))
    # The version it reports ($BASH_VERSION, BASH_VERSINFO), not the one it is built as (its compatibility
    # levels stay bash 5's).
    major_minor, patch = APPLE_BASH.rsplit(".", 1)
    version_c = (src / "version.c").read_text()
    for old, new in (
        (" dist_version = DISTVERSION;", f' dist_version = "{major_minor}";'),
        (" patch_level = PATCHLEVEL;", f" patch_level = {patch};"),
    ):
        if old not in version_c:
            raise BuildFailed(f"{src / 'version.c'} has no '{old.strip()}': this bash source is laid out otherwise")
        version_c = version_c.replace(old, new)
    (src / "version.c").write_text(version_c)
    _run_step(["./configure", "--without-bash-malloc", "--disable-nls", "--quiet"], src, log)
    _run_step(["make", "-j2", "-s", "bash"], src, log)
    got = subprocess.run([str(src / "bash"), "-c", "echo $BASH_VERSION"], capture_output=True, text=True).stdout.strip()
    if not got.startswith(APPLE_BASH + "("):
        raise BuildFailed(f"the built bash says it is {got!r}")
    binary.parent.mkdir(parents=True, exist_ok=True)
    new_binary = binary.with_name(f".bash.{os.getpid()}")
    shutil.copyfile(src / "bash", new_binary)
    new_binary.chmod(0o755)
    (binary.parent.parent / "SOURCE").write_text(f"{tarball.name} from {uri} {suite}, version set to {APPLE_BASH}\n")
    os.replace(new_binary, binary)


def make_mac(folder: str) -> None:
    """The --mac additions in FOLDER (made by make_userland): uname, id, bash 3.2, python3."""
    for name, text in (("uname", UNAME), ("id", ID)):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    for name, target in (("bash", bash32()), ("python3", sim_python())):
        link = os.path.join(folder, name)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)


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
            # Which folder it stands for (host_path).
            with open(os.path.join(links, FARM_OF), "w") as f:
                f.write(folder + "\n")
            folder = links
        out.append(folder)
    return ":".join(out)


def host_path(path: str) -> str:
    """PATH as this machine has it, where PATH may be the simulated userland's (path_without_gnu_only): its
    stand-ins' folder left out, each folder of links the folder it stands for. The bash 3.2 stand-in is built
    with it: its build is this machine's (apt-get, Debian's apt-key, configure, make), not a Mac user's script,
    and it is started from a userland whose mktemp refuses apt-key's `mktemp --directory` (issue 50: the
    build failed at apt-get under the cluster suite's userland, and passed minutes later outside it)."""
    out = []
    for folder in path.split(os.pathsep):
        if os.path.exists(os.path.join(folder, ".lib", "macos_userland.py")):
            continue
        try:
            with open(os.path.join(folder, FARM_OF)) as f:
                folder = f.read().strip()
        except OSError:
            pass
        out.append(folder)
    return os.pathsep.join(out)


def main(argv: list) -> None:
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(__doc__)
        sys.exit(0)
    mac = argv[:1] == ["--mac"]
    if mac:
        argv = argv[1:]
    if argv == ["--missing"]:
        print(" ".join(MACOS_MISSING))
    elif argv == ["--bash"]:
        print(explicit_bash())
    elif argv == ["--bash32"]:
        print(bash32())
    elif len(argv) in (1, 3):
        make_userland(argv[0])
        if mac:
            make_mac(argv[0])
        if len(argv) == 3:
            print(f"{argv[0]}:{path_without_gnu_only(argv[1], argv[2])}")
    else:
        fail(
            f"error: expected [--mac] DIR, [--mac] DIR PATH FARM, --missing, --bash or --bash32, got {len(argv)} arguments\n"
            f"  fix: see {sys.argv[0]} --help",
            2,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
