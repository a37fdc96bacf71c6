"""The pins agree: scripts/versions.env's base images are the Dockerfiles' defaults, the Locust base image's
tag is the locust pin, and the lock files hold the requirements files' pins (the image and the .venv
install the locks, so a pin changed without regenerating them would change nothing). The lock check is
scripts/libexec/lock_check.py, which cluster-up runs before every Locust image build, with a Mac's
python3 too: it is run here with the standard library alone (-I, no .venv packages)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSIONS = dict(re.findall(r"^([A-Z_]+)=(\S*)", (REPO / "scripts/versions.env").read_text(), re.M))
REQUIREMENTS, DEV_REQUIREMENTS = REPO / VERSIONS["LOCUST_REQUIREMENTS"], REPO / VERSIONS["LOCUST_DEV_REQUIREMENTS"]
LOCK, DEV_LOCK = REPO / VERSIONS["LOCUST_LOCK"], REPO / VERSIONS["LOCUST_DEV_LOCK"]


def dockerfile_arg(dockerfile: str, name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", (REPO / dockerfile).read_text(), re.M)
    assert match, f"{dockerfile} has no ARG {name}="
    return match.group(1)


@pytest.mark.parametrize(
    "dockerfile,arg,key",
    [
        ("locust/Dockerfile", "BASE_IMAGE", "LOCUST_BASE_IMAGE"),
        ("locust/Dockerfile", "NODE_IMAGE", "NODE_IMAGE"),
        ("service/Dockerfile", "BASE_IMAGE", "JRE_BASE_IMAGE"),
        ("service/Dockerfile", "JDK_IMAGE", "JDK_BASE_IMAGE"),
    ],
)
def test_dockerfile_default_is_the_pinned_image(dockerfile, arg, key):
    assert dockerfile_arg(dockerfile, arg) == VERSIONS[key], f"edit {dockerfile}'s ARG {arg} or {key} in scripts/versions.env"


def test_locust_base_image_tag_is_the_locust_pin():
    pinned = re.search(r"^locust==(\S+)$", REQUIREMENTS.read_text(), re.M).group(1)
    assert VERSIONS["LOCUST_BASE_IMAGE"].rsplit(":", 1)[1] == pinned, "give LOCUST_BASE_IMAGE and the locust pin the same version"


def lock_check(lock: Path, *pins: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", REPO / "scripts/libexec/lock_check.py", lock, *pins], capture_output=True, text=True)


@pytest.mark.parametrize(
    "lock,pins",
    [
        (LOCK, [REQUIREMENTS]),
        (DEV_LOCK, [REQUIREMENTS, DEV_REQUIREMENTS, LOCK]),
    ],
    ids=["requirements.lock", "requirements-dev.lock"],
)
def test_lock_holds_the_pins(lock, pins):
    done = lock_check(lock, *pins)
    assert done.returncode == 0, done.stdout + (
        "regenerate the locks: bash -c '. scripts/lib/common.sh && . scripts/lib/venv.sh && lock_locust_requirements'"
    )
    assert done.stdout == ""


def test_lock_check_catches_planted_differences(tmp_path):
    """A pin moved without a new lock, a pin added, a lock without hashes: each is named."""
    requirements = REQUIREMENTS.read_text()
    moved = tmp_path / "moved.txt"
    moved.write_text(re.sub(r"^locust==.*$", "locust==2.0.0", requirements, flags=re.M))
    added = tmp_path / "added.txt"
    added.write_text(requirements + "six==1.17.0\n")
    nohash = tmp_path / "nohash.lock"
    nohash.write_text("".join(line for line in LOCK.read_text().splitlines(True) if "--hash=" not in line))
    for lock, pins, says in [
        (LOCK, moved, f"has locust=={VERSIONS['LOCUST_BASE_IMAGE'].rsplit(':', 1)[1]}, moved.txt has 2.0.0"),
        (LOCK, added, "six==1.17.0 (added.txt) is not in it"),
        (nohash, REQUIREMENTS, "has no hash"),
    ]:
        done = lock_check(lock, pins)
        assert done.returncode == 1 and says in done.stdout, (lock.name, pins.name, done.stdout)
