#!/usr/bin/python3 -IS
"""runc wrapper for hosts whose capability bounding set lacks CAP_SYS_RESOURCE (some sandboxed VMs).

There, runc fails on privileged containers ("unable to apply caps: operation not permitted") and on
every pod sandbox, whose oom_score_adj (-998) is below the caller's own. This wrapper removes
CAP_SYS_RESOURCE from the container's capability sets and raises any oomScoreAdj below its own, then
runs the real runc with the same arguments. Where the capability is present it changes nothing and
execs the real runc at once (before importing json: it runs on every runc call).

  create|run: edits <bundle>/config.json's .process (--bundle X, -b X, --bundle=X; default: .)
  exec:       edits the --process file (--process X, -p X, --process=X)
The first of create, run and exec among the arguments is the command; the edited file keeps its mode.

Installed by scripts/lib/tools.sh as Docker's default runtime on such hosts, and into the locally
built kind node image as /usr/local/sbin/runc (scripts/lib/airgap.sh; the real one is Debian's
/usr/sbin/runc). Usage: as runc (containerd's shim calls it with runc's arguments). Python 3, the
standard library only (/usr/bin/python3: -I ignores PYTHON* settings, -S skips site-packages).
Tests: scripts/tests/test_runc_wrapper.py.
"""

import os
import sys

# Where the real runc may be; the first executable one that is not this file.
REAL_RUNCS = ("/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc.real")
PROC_STATUS = "/proc/self/status"
PROC_OOM_SCORE_ADJ = "/proc/self/oom_score_adj"
CAP_SYS_RESOURCE = 24


def fail(message: str) -> None:
    sys.stderr.write(f"runc-wrapper: {message}\n")
    sys.exit(1)


def real_runc() -> str:
    me = os.path.realpath(sys.argv[0])
    for candidate in REAL_RUNCS:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and os.path.realpath(candidate) != me:
            return candidate
    fail(f"no real runc found (looked for {', '.join(REAL_RUNCS)})")


def has_cap_sys_resource() -> bool:
    with open(PROC_STATUS) as status:
        for line in status:
            if line.startswith("CapBnd:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False  # no bounding set reported: edit, as where it lacks the capability


def target(args: list) -> tuple:
    """The command (the first of create, run, exec), the bundle and the --process file in ARGS."""
    command, bundle, process, prev = "", ".", "", ""
    for arg in args:
        if prev in ("--bundle", "-b"):
            bundle = arg
        elif prev in ("--process", "-p"):
            process = arg
        if arg.startswith("--bundle="):
            bundle = arg.split("=", 1)[1]
        elif arg.startswith("--process="):
            process = arg.split("=", 1)[1]
        elif arg in ("create", "run", "exec") and not command:
            command = arg
        prev = arg
    return command, bundle, process


def patch(path: str, in_process: bool) -> None:
    """Rewrites the OCI spec (in_process: its .process) or exec process file PATH in place."""
    import json

    with open(PROC_OOM_SCORE_ADJ) as f:
        own = int(f.read())
    with open(path) as f:
        spec = json.load(f)
    process = spec.get("process") if in_process else spec
    if not isinstance(process, dict):
        return
    changed = False
    capabilities = process.get("capabilities")
    if isinstance(capabilities, dict):
        for name, caps in capabilities.items():
            if isinstance(caps, list) and "CAP_SYS_RESOURCE" in caps:
                capabilities[name] = [cap for cap in caps if cap != "CAP_SYS_RESOURCE"]
                changed = True
    adj = process.get("oomScoreAdj")
    if isinstance(adj, (int, float)) and not isinstance(adj, bool) and adj < own:
        process["oomScoreAdj"] = own
        changed = True
    if not changed:
        return
    mode = os.stat(path).st_mode & 0o7777
    tmp = f"{path}.runc-wrapper.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            json.dump(spec, f)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main() -> None:
    runc = real_runc()
    args = sys.argv[1:]
    if not has_cap_sys_resource():
        command, bundle, process = target(args)
        try:
            if command in ("create", "run") and os.path.isfile(os.path.join(bundle, "config.json")):
                patch(os.path.join(bundle, "config.json"), True)
            elif command == "exec" and process and os.path.isfile(process):
                patch(process, False)
        except (OSError, ValueError) as e:
            fail(f"cannot edit the spec for runc {command}: {e}")
    os.execv(runc, [runc, *args])


if __name__ == "__main__":
    main()
