#!/usr/bin/env python3
"""Downloads the wheels of a lock file that a base image's Python installs, for an offline image build.

Usage: .venv/bin/python scripts/libexec/offline_wheels.py BASE_IMAGE LOCK OUT_DIR
(run by prepare_locust_wheels, scripts/lib/venv.sh, with the repository's .venv: it needs `packaging`)

BASE_IMAGE's python3 tells its marker environment (PEP 508) and glibc; the lock's entries whose markers
hold for that Python are downloaded, without their markers (pip download would evaluate them for the
host's Python), for its version and CPU and every manylinux tag its glibc runs, into OUT_DIR (replaced).
With LL_CACHE set (scripts/lib/common.sh exports it) they are kept in LL_CACHE/wheels-<key>, the key a hash
of the lock and of that Python's marker environment, and copied from there the next time (a clone's
download took 23 s). Errors say what failed and the fix, and exit 1.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from packaging.markers import Marker

# Printed by the base image's python3, with the standard library only.
PROBE = """
import json, os, platform, sys
v = sys.implementation.version
full = "%d.%d.%d" % v[:3] + ("" if v.releaselevel == "final" else v.releaselevel[0] + str(v.serial))
print(json.dumps({"implementation_name": sys.implementation.name, "implementation_version": full,
    "os_name": os.name, "platform_machine": platform.machine(), "platform_release": platform.release(),
    "platform_system": platform.system(), "platform_version": platform.version(),
    "python_full_version": platform.python_version(), "platform_python_implementation": platform.python_implementation(),
    "python_version": "%d.%d" % sys.version_info[:2], "sys_platform": sys.platform, "glibc": platform.libc_ver()[1]}))
"""


def die(message: str, fix: str) -> None:
    sys.exit(f"error: {message}\n  fix: {fix}")


def requirements(lock: str, target: dict) -> list[str]:
    """The lock's entries ("name==version --hash=...") whose markers hold for TARGET, without the markers."""
    out, entry = [], ""
    for line in open(lock).read().splitlines() + [""]:
        if line.strip().startswith("#"):
            continue
        entry += line.strip().rstrip("\\") + " "
        if line.rstrip().endswith("\\"):
            continue
        requirement, _, hashes = entry.partition(" --hash")
        entry = ""
        name, _, marker = requirement.partition(";")
        if name.strip() and (not marker.strip() or Marker(marker.strip()).evaluate(target)):
            out.append(name.strip() + (" --hash" + hashes if hashes else ""))
    return out


def main(base: str, lock: str, out: str) -> None:
    probe = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "python3", base, "-c", PROBE], capture_output=True, text=True
    )
    if probe.returncode != 0:
        die(f"could not run python3 in {base}: {probe.stderr.strip()}", f"build or pull {base} first")
    target = json.loads(probe.stdout)
    glibc, machine, pyver = target.pop("glibc") or "none", target["platform_machine"], target["python_version"]
    if not glibc.startswith("2."):
        die(f"{base} has no glibc ({glibc}): the offline wheels are manylinux ones", "use a Debian- or Ubuntu-based python3 image")
    # Every manylinux tag that glibc runs, newest last: pip takes the best file the lock has a hash of.
    platforms = ["--platform", f"manylinux2014_{machine}"]
    for minor in range(17, int(glibc.split(".")[1]) + 1):
        platforms += ["--platform", f"manylinux_2_{minor}_{machine}"]
    key = hashlib.sha256(open(lock, "rb").read() + json.dumps([target, glibc], sort_keys=True).encode()).hexdigest()[:16]
    cached = os.path.join(os.environ["LL_CACHE"], f"wheels-{key}") if os.environ.get("LL_CACHE") else None
    if cached and os.path.isdir(cached):
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(cached, out)
        print(f"the wheels of {os.path.basename(lock)} for Python {pyver} ({machine}, glibc {glibc}) from the cache ({cached})")
        return
    print(f"downloading the wheels of {os.path.basename(lock)} for Python {pyver} ({machine}, glibc {glibc}) into {out}")
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as reqs:
        reqs.write("\n".join(requirements(lock, target)) + "\n")
        reqs.flush()
        shutil.rmtree(out + ".new", ignore_errors=True)
        pip = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--disable-pip-version-check",
            "--require-hashes",
            "--no-deps",
            "-r",
            reqs.name,
            "-d",
            out + ".new",
            "--only-binary=:all:",
            "--implementation",
            "cp",
            "--python-version",
            pyver,
            "--platform",
            "any",
            *platforms,
        ]
        if subprocess.run(pip).returncode != 0:
            shutil.rmtree(out + ".new", ignore_errors=True)
            die(
                f"pip could not download the wheels for Python {pyver}",
                "check that PyPI answers, or build with a base whose pip reaches it",
            )
    shutil.rmtree(out, ignore_errors=True)
    os.rename(out + ".new", out)
    if cached:
        try:
            shutil.rmtree(cached + ".new", ignore_errors=True)
            shutil.copytree(out, cached + ".new")
            os.rename(cached + ".new", cached)
        except OSError as e:
            print(f"warning: could not keep the wheels in {cached} (the next clone downloads them again): {e}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
