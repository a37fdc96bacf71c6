"""What the bench runs, built with the service's Maven wrapper, each step's output in LOGS/<step>.log: the
service's jar (again only when a source is newer), the jar of a git revision (--baseline: built once into
the cache, keyed by commit), and the classpath of the floor and the open-loop client (the service's test
classes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from liveness_lab.base import ROOT
from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError


def step(logs: Path, name: str, argv: list[str], cwd: Path | None = None) -> None:
    """A build step with its output in LOGS/NAME.log, as the shell's `step` does."""
    log = logs / f"{name}.log"
    LOG.info("%s ... (log: %s)", name, log)
    started = time.time()
    with open(log, "w") as f:
        if subprocess.run(argv, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode:
            tail = log.read_text(errors="replace").splitlines()[-5:]
            raise SetupError(f"{name} failed: " + " | ".join(t.strip() for t in tail), f"see {log}")
    LOG.info("%s done in %.0fs", name, time.time() - started)


def ensure_jar(logs: Path) -> Path:
    """service/target's jar, built with the Maven wrapper when missing or older than a source."""
    service = ROOT / "service"
    jar = service / "target" / "liveness-lab-service.jar"
    if jar.is_file():
        built = jar.stat().st_mtime
        sources = [service / "pom.xml", *(p for p in (service / "src").rglob("*") if p.is_file())]
        if not any(p.stat().st_mtime > built for p in sources):
            return jar
    step(logs, "bench-jar", [str(service / "mvnw"), "-f", str(service / "pom.xml"), "-B", "-q", "package", "-DskipTests"])
    return jar


def ensure_test_classpath(logs: Path) -> str:
    """The classpath of the floor and the open-loop client: the service's classes and test classes
    (FloorServer and OpenLoopClient are among the tests, so they never go into the jar or the image) and
    the test scope's dependencies, from Maven (their versions: service/pom.xml's Spring Boot parent)."""
    service = ROOT / "service"
    cp_file = service / "target" / "floor.classpath"
    step(
        logs,
        "bench-floor",
        [
            str(service / "mvnw"),
            "-f",
            str(service / "pom.xml"),
            "-B",
            "-q",
            "test-compile",
            "dependency:build-classpath",
            "-Dmdep.includeScope=test",
            f"-Dmdep.outputFile={cp_file}",
        ],
    )
    return os.pathsep.join([str(service / "target" / "test-classes"), str(service / "target" / "classes"), cp_file.read_text().strip()])


def ensure_baseline_jar(logs: Path, cache: Path, ref: str) -> tuple[str, Path]:
    """The service as built at git revision REF (built once, cached by commit in CACHE): (short commit, jar)."""
    git = ["git", "-C", str(ROOT)]
    found = subprocess.run([*git, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], capture_output=True, text=True)
    if found.returncode:
        raise SetupError(f"--baseline: '{ref}' is not a git revision of this clone", "e.g. --baseline HEAD~1, or a commit from git log")
    sha = found.stdout.strip()
    short = subprocess.run([*git, "rev-parse", "--short", sha], capture_output=True, text=True, check=True).stdout.strip()
    jar = cache / "build" / f"bench-baseline-{sha}.jar"
    if jar.is_file():
        return short, jar
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp, "service.tar")
        step(logs, "bench-baseline-archive", [*git, "archive", "-o", str(archive), sha, "service"])
        step(logs, "bench-baseline-untar", ["tar", "-x", "-C", tmp, "-f", str(archive)])
        pom = Path(tmp, "service", "pom.xml")
        step(logs, "bench-baseline-jar", [str(pom.parent / "mvnw"), "-f", str(pom), "-B", "-q", "package", "-DskipTests"])
        jar.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pom.parent / "target" / "liveness-lab-service.jar", f"{jar}.tmp")
        os.replace(f"{jar}.tmp", jar)
    return short, jar
