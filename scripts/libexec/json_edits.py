#!/usr/bin/env python3
"""The two JSON files the no-registry path edits (root on Debian), with the standard library only.

Usage: scripts/libexec/json_edits.py docker-runtime DAEMON_JSON WRAPPER
         Docker's default runtime becomes WRAPPER, as runtime "liveness-lab-runc" (scripts/lib/docker.sh,
         install_runc_wrapper); the file's other settings stay. A missing or empty file counts as {}.
       scripts/libexec/json_edits.py cri-base < `ctr oci spec` > cri-base.json
         containerd's base OCI spec for the kind node (scripts/lib/airgap.sh): kind's createContainer hook
         /kind/bin/mount-product-files.sh appended, the default rlimits dropped (kind's base image does both).
"""

import json
import os
import sys
import tempfile


def docker_runtime(conf: str, wrapper: str) -> None:
    try:
        with open(conf) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    settings = json.loads(text) if text.strip() else {}
    settings.setdefault("runtimes", {})["liveness-lab-runc"] = {"path": wrapper}
    settings["default-runtime"] = "liveness-lab-runc"
    os.makedirs(os.path.dirname(conf) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(conf) or ".")
    with os.fdopen(fd, "w") as f:
        json.dump(settings, f, indent=2)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, conf)


def cri_base() -> None:
    spec = json.load(sys.stdin)
    spec.setdefault("hooks", {}).setdefault("createContainer", []).append({"path": "/kind/bin/mount-product-files.sh"})
    spec.get("process", {}).pop("rlimits", None)
    json.dump(spec, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["docker-runtime"] and len(sys.argv) == 4:
        docker_runtime(sys.argv[2], sys.argv[3])
    elif sys.argv[1:] == ["cri-base"]:
        cri_base()
    else:
        sys.exit(__doc__)
