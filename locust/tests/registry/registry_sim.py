"""The laptop's world on 127.0.0.1, for the registry suite (locust/tests/registry, scripts/test-registry.sh).

Debian's docker-registry stands in for Docker Hub (as dockerd's registry mirror) holding stand-ins of the
official images, built from the locally built ones and pushed under Docker Hub's names (kindest/node,
eclipse-temurin JRE and JDK, locustio/locust); a local file server stands in for the kind, helm and kubectl
release downloads (checksum files in the official formats). What this proves and what it does not:
docs/laptop.md, "What the simulation proves and does not prove".

Everything started here leaves a pid file (or, for the mirror, a marker) under <cache>/registry-sim/state,
and is undone from it: a process is ended only while its command line still holds the marker it was started
with; the mirror is taken out of daemon.json and dockerd reloaded (SIGHUP, never a restart).

Only the standard library: `python3 registry_sim.py --down|--purge` (scripts/test-registry.sh --down)
undoes what a --keep run left without the venv.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


class SimError(Exception):
    """A step of the simulation failed; the message says which and where its log is."""


def _versions() -> dict[str, str]:
    pins = {}
    for line in (REPO / "scripts" / "versions.env").read_text().splitlines():
        match = re.match(r"([A-Z][A-Z0-9_]*)=(.*)$", line)
        if match:
            pins[match[1]] = match[2]
    return pins


V = _versions()
CACHE = Path(os.environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab")
LOGS = Path(os.environ.get("LIVENESS_LAB_LOGS") or CACHE / "logs")
SIM = CACHE / "registry-sim"
STATE = SIM / "state"
TREE = SIM / "tree"
E2E_CACHE = SIM / "e2e-cache"
# The tree as a ZIP download (git archive, no .git), for the second cluster-up from it.
ZIP_TREE = SIM / "zip-tree"
FILES = SIM / "files"
# The inner e2e's JUnit reports: read here to name its failing tests, outside scripts/test.sh's junit/
# folder so that its tests are not counted a second time as the registry suite's.
E2E_JUNIT = LOGS / "registry-sim-e2e-junit"
# Local tags of the built stand-ins: not Docker Hub's names, so nothing here shadows an official image;
# kept between runs as the build cache.
SIM_REPO = "liveness-lab-sim"
# The official node image by tag: its pinned digest (KIND_NODE_IMAGE) is one no stand-in can have, so
# the e2e pins the stand-in's own digest instead (LIVENESS_LAB_NODE_IMAGE=kindest/node:TAG@DIGEST).
HUB_NODE_IMAGE = V["KIND_NODE_IMAGE"].split("@")[0]
# The Python of the official locustio/locust image (its base is python:3.13-slim).
STANDIN_PYTHON = "3.13"
CLUSTER = V["KIND_CLUSTER_NAME"]
DAEMON_JSON = Path("/etc/docker/daemon.json")
POLICY_RC = Path("/usr/sbin/policy-rc.d")
MANIFEST_V2 = "application/vnd.docker.distribution.manifest.v2+json"
# Debian's Docker 20.10 and no buildx: the legacy builder.
DOCKER_ENV = {**os.environ, "DOCKER_BUILDKIT": "0"}


# --- running things, with a log file each -------------------------------------------------------------


def log_path(name: str) -> Path:
    return LOGS / f"registry-sim-{name}.log"


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path} is missing)"


def run_logged(name: str, argv: list[str], **kwargs) -> str:
    """ARGV with its output in <logs>/registry-sim-NAME.log; its output, or SimError with the log's end."""
    log = log_path(name)
    log.parent.mkdir(parents=True, exist_ok=True)
    kwargs.setdefault("env", DOCKER_ENV)
    with open(log, "w") as out:
        rc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kwargs).returncode
    if rc != 0:
        raise SimError(f"{name} failed (exit {rc}); log: {log}\n{tail(log)}")
    return log.read_text(errors="replace")


def bash_lib(name: str, program: str, *args: str, libs: str = "tools.sh airgap.sh") -> str:
    """PROGRAM in bash with scripts/lib/common.sh and LIBS sourced (their functions, not re-implemented)."""
    sources = "".join(f'. "$LL_LIB/{lib}"; ' for lib in libs.split())
    script = f"set -o errexit -o nounset -o pipefail; . scripts/lib/common.sh; {sources}{program}"
    return run_logged(name, ["bash", "-c", script, "bash", *args], cwd=REPO)


def docker(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, env=DOCKER_ENV)
    if check and proc.returncode != 0:
        raise SimError(f"docker {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc


def image_exists(ref: str) -> bool:
    return docker("image", "inspect", ref, check=False).returncode == 0


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def http_ok(url: str, timeout: float = 2) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return 200 <= response.status < 300
    except OSError:
        return False


def wait_http(url: str, seconds: int = 15) -> bool:
    for _ in range(seconds):
        if http_ok(url):
            return True
        time.sleep(1)
    return False


# --- processes started here: a pid file each, and a kill only of the process it names -----------------


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_port(first: int) -> int:
    for port in range(first, first + 21):
        if not port_taken(port):
            return port
    raise SimError(f"no free port in {first}-{first + 20} on 127.0.0.1; fix: free one, or set the port variable (--help)")


def start_process(name: str, argv: list[str], marker: str) -> int:
    """ARGV in a session of its own (a Ctrl-C in the terminal does not reach it: teardown ends it),
    output appended to its log; STATE/NAME.pid says "PID MARKER"."""
    STATE.mkdir(parents=True, exist_ok=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    with open(log_path(name), "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    (STATE / f"{name}.pid").write_text(f"{proc.pid} {marker}\n")
    return proc.pid


def _running(pid: int) -> bool:
    """PID is a live process (a zombie child of ours is reaped, and gone)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stop_started(name: str) -> str:
    """Ends the process STATE/NAME.pid names, if it is still the one started here (its command line
    holds the marker); says what it did."""
    pidfile = STATE / f"{name}.pid"
    if not pidfile.exists():
        return f"{name}: nothing started"
    pid_text, _, marker = pidfile.read_text().strip().partition(" ")
    said = f"{name}: pid {pid_text} was already gone"
    try:
        cmdline = Path(f"/proc/{pid_text}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmdline = ""
    if pid_text.isdigit() and marker and marker in cmdline and _running(int(pid_text)):
        pid = int(pid_text)
        os.kill(pid, signal.SIGTERM)
        for _ in range(20):
            if not _running(pid):
                break
            time.sleep(0.5)
        else:
            os.kill(pid, signal.SIGKILL)
        said = f"{name}: stopped pid {pid}"
    pidfile.unlink(missing_ok=True)
    return said


def started_pid(name: str) -> int | None:
    """The pid of STATE/NAME.pid while that process runs, else None."""
    try:
        pid_text = (STATE / f"{name}.pid").read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(pid_text) if pid_text.isdigit() and _running(int(pid_text)) else None


# --- 1. the registry: Debian's docker-registry, our own process on 127.0.0.1 ---------------------------


def install_docker_registry() -> None:
    """Debian's package, with its init script kept from starting the packaged service (which would listen
    on every address): a policy-rc.d that refuses, only while apt runs, only when the machine has none."""
    if os.access("/usr/bin/docker-registry", os.X_OK):
        return
    created = False
    if not POLICY_RC.exists() and not POLICY_RC.is_symlink():
        POLICY_RC.write_text("#!/bin/sh\n# locust/tests/registry: no service starts while docker-registry installs\nexit 101\n")
        POLICY_RC.chmod(0o755)
        created = True
    try:
        bash_lib("apt-docker-registry", "apt_install docker-registry", libs="")
    finally:
        if created:
            POLICY_RC.unlink(missing_ok=True)


def start_registry() -> str:
    """docker-registry on 127.0.0.1 (the first free port from LIVENESS_LAB_SIM_REGISTRY_PORT, 5000);
    its address HOST:PORT once /v2/ answers."""
    install_docker_registry()
    port = free_port(int(os.environ.get("LIVENESS_LAB_SIM_REGISTRY_PORT", "5000")))
    storage = SIM / "registry" / "storage"
    storage.mkdir(parents=True, exist_ok=True)
    config = SIM / "registry" / "config.yml"
    config.write_text(f"""# docker-registry of locust/tests/registry: Docker Hub's stand-in, on loopback only.
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
  headers:
    X-Content-Type-Options: [nosniff]
""")
    start_process("registry", ["/usr/bin/docker-registry", "serve", str(config)], str(config))
    address = f"127.0.0.1:{port}"
    if not wait_http(f"http://{address}/v2/"):
        raise SimError(f"docker-registry does not answer on http://{address}/v2/ within 15 s:\n{tail(log_path('registry'), 5)}")
    return address


# --- 2. the stand-ins -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standin:
    key: str
    official: str  # Docker Hub NAME:TAG
    local_base: str  # the locally built image it is made from

    @property
    def name(self) -> str:
        return self.official.rsplit(":", 1)[0]

    @property
    def tag(self) -> str:
        return self.official.rsplit(":", 1)[1]

    @property
    def hub_path(self) -> str:
        """The repository path Docker Hub (and so a mirror of it) serves the image under."""
        return self.name if "/" in self.name else f"library/{self.name}"

    @property
    def sim_tag(self) -> str:
        return f"{SIM_REPO}/{self.name.replace('/', '-')}:{self.tag}"

    @property
    def digest_file(self) -> Path:
        return STATE / f"digest-{self.key}"


STANDINS = {
    "jre": Standin("jre", V["JRE_BASE_IMAGE"], V["LOCAL_JRE_BASE_IMAGE"]),
    "jdk": Standin("jdk", V["JDK_BASE_IMAGE"], V["LOCAL_JDK_BASE_IMAGE"]),
    "locust": Standin("locust", V["LOCUST_BASE_IMAGE"], V["LOCAL_PYTHON_BASE_IMAGE"]),
    "node": Standin("node", HUB_NODE_IMAGE, f"{V['LOCAL_NODE_IMAGE']}:{V['KUBERNETES_VERSION']}"),
}


def ensure_local_images() -> list[str]:
    """The locally built bases of the stand-ins, as scripts/lib/airgap.sh makes them today: its builders
    are called every time (an image of the current recipe is left alone, an older one rebuilt, a minute
    or two each). The node image takes 15-20 minutes and comes from cluster-up; any one built here will do."""
    said = []
    for builder in ("build_jre_image", "build_jdk_image", "build_python_image"):
        out = bash_lib(
            builder, f'declare -F {builder} >/dev/null || {{ echo "scripts/lib/airgap.sh has no {builder}"; exit 1; }}; {builder}'
        )
        said.append(out.strip().splitlines()[-1] if out.strip() else f"{builder}: done")
    node = STANDINS["node"].local_base
    if not image_exists(node):
        raise SimError(
            f"the locally built node image {node} is missing (the kindest/node stand-in is made from it); "
            "fix: LIVENESS_LAB_REGISTRY=no scripts/cluster-up.sh builds it (15-20 min), then scripts/cluster-down.sh"
        )
    return said + [f"node image: {node}"]


def temurin_dockerfile(base: str, kind: str) -> str:
    """eclipse-temurin:25-{jre,jdk}-noble (adoptium/containers 25/{jre,jdk}/ubuntu/noble/Dockerfile).
    Reproduced: JAVA_HOME=/opt/java/openjdk with its bin first on PATH, a Java 25 runtime (and javac,
    jshell in the JDK), ca-certificates, tar and gzip, neither curl nor wget (the official build purges
    wget; Ubuntu's base has no curl), root as the user, an entrypoint that runs the command
    (/__cacert_entrypoint.sh), jshell as the JDK's CMD. Not reproduced: Ubuntu 24.04 (this is Debian
    trixie), Temurin's own build (this is Debian's OpenJDK 25, linked at /opt/java/openjdk), the
    en_US.UTF-8 locale (C.UTF-8 here), fontconfig, tzdata, binutils, the CDS archive, JAVA_VERSION, the
    ubuntu user (uid 1000), and the entrypoint's USE_SYSTEM_CA_CERTS import."""
    text = f"""FROM {base}
USER root
RUN set -eu; \\
    jvm=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")"); \\
    mkdir -p /opt/java && ln -sfn "$jvm" /opt/java/openjdk; \\
    for tool in curl wget; do if dpkg -s "$tool" >/dev/null 2>&1; then dpkg --purge "$tool"; fi; done; \\
    if command -v curl || command -v wget; then echo "curl or wget is still here" >&2; exit 1; fi
ENV JAVA_HOME=/opt/java/openjdk
ENV PATH=/opt/java/openjdk/bin:$PATH
COPY entrypoint.sh /__cacert_entrypoint.sh
ENTRYPOINT ["/__cacert_entrypoint.sh"]
"""
    return text + ('CMD ["jshell"]\n' if kind == "jdk" else "")


TEMURIN_ENTRYPOINT = """#!/bin/sh
# Stand-in of Temurin's /__cacert_entrypoint.sh: the official one first imports extra CA certificates
# when USE_SYSTEM_CA_CERTS is set; without it, as here, it only runs the command.
set -e
exec "$@"
"""


def locust_dockerfile(base: str, version: str) -> str:
    """locustio/locust:VERSION (locustio/locust's Dockerfile: python:3-slim, a venv in /opt/venv first on
    PATH, `useradd --create-home locust`, WORKDIR /home/locust, ENTRYPOINT ["locust"],
    PYTHONUNBUFFERED=1, EXPOSE 8089 5557). Reproduced: all of that, with Python 3.13 and locust==VERSION
    from PyPI (the build's pip reaches PyPI through the CA the local image trusts). Not reproduced: the
    python:3.13-slim base (Python is Debian's /usr/bin/python3, not /usr/local/bin), and any package the
    official image adds beyond locust's own dependencies."""
    return f"""FROM {base}
USER root
ENV PATH=/opt/venv/bin:$PATH \\
    PYTHONUNBUFFERED=1
RUN python3 -m venv /opt/venv \\
 && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check locust=={version} \\
 && useradd --create-home locust
EXPOSE 8089 5557
USER locust
WORKDIR /home/locust
ENTRYPOINT ["locust"]
"""


# kindest/node's /kind/manifests/default-cni.yaml is kindnetd, which kind applies unless the config
# disables the default CNI (the registry path does not). kindnetd's image cannot be had here, and the
# locally built node image brings a static CNI config instead; so the stand-in's file holds one harmless
# object, which kind's `kubectl create` accepts (an object-less file fails it).
NODE_CNI_MANIFEST = """# kindest/node stand-in (locust/tests/registry): pod networking is the static CNI config in
# /etc/cni/net.d of the locally built node image; kindnetd's image is not available here.
apiVersion: v1
kind: ConfigMap
metadata:
  name: liveness-lab-static-cni
  namespace: kube-system
data:
  note: "single-node static CNI (ptp + host-local + portmap), see /etc/cni/net.d"
"""


def in_image(image: str, *argv: str, entrypoint: str | None = None) -> subprocess.CompletedProcess:
    """ARGV in a throw-away container of IMAGE, without network."""
    head = ["run", "--rm", "--network", "none"] + (["--entrypoint", entrypoint] if entrypoint else [])
    return docker(*head, image, *argv, check=False)


def node_cni_has_object(image: str) -> bool:
    """IMAGE's default-cni.yaml holds at least one object."""
    return in_image(image, "-q", "^kind:", "/kind/manifests/default-cni.yaml", entrypoint="grep").returncode == 0


def build_standin(key: str) -> str:
    """The stand-in image for KEY, tagged Standin.sim_tag; says how it was made."""
    s = STANDINS[key]
    ctx = SIM / "build" / key
    shutil.rmtree(ctx, ignore_errors=True)
    ctx.mkdir(parents=True)
    if key in ("jre", "jdk"):
        (ctx / "Dockerfile").write_text(temurin_dockerfile(s.local_base, key))
        (ctx / "entrypoint.sh").write_text(TEMURIN_ENTRYPOINT)
        (ctx / "entrypoint.sh").chmod(0o755)
    elif key == "locust":
        (ctx / "Dockerfile").write_text(locust_dockerfile(s.local_base, s.tag))
    else:
        # kindest/node: the locally built node image under kindest/node's name, plus the CNI file above
        # when the local image's has no object.
        if node_cni_has_object(s.local_base):
            docker("tag", s.local_base, s.sim_tag)
            return f"{s.sim_tag}: {s.local_base} retagged"
        (ctx / "default-cni.yaml").write_text(NODE_CNI_MANIFEST)
        (ctx / "Dockerfile").write_text(f"FROM {s.local_base}\nCOPY default-cni.yaml /kind/manifests/default-cni.yaml\n")
    run_logged(
        f"build-{key}",
        ["docker", "build", "--label", f"io.livenesslab.standin={s.official} from {s.local_base}", "-t", s.sim_tag, str(ctx)],
    )
    return f"{s.sim_tag}: built from {s.local_base} (log: {log_path('build-' + key)})"


def push_standin(key: str, registry: str) -> str:
    """The stand-in into the registry under its Docker Hub path; its digest, also kept in STATE."""
    s = STANDINS[key]
    ref = f"{registry}/{s.hub_path}:{s.tag}"
    docker("tag", s.sim_tag, ref)
    try:
        out = run_logged(f"push-{key}", ["docker", "push", ref])
    finally:
        docker("rmi", ref, check=False)
    digests = re.findall(r": digest: (sha256:[0-9a-f]+) size: ", out)
    if not digests:
        raise SimError(f"no digest in docker push's output ({log_path('push-' + key)})")
    STATE.mkdir(parents=True, exist_ok=True)
    s.digest_file.write_text(digests[-1] + "\n")
    return digests[-1]


def pushed_digest(key: str) -> str:
    try:
        return STANDINS[key].digest_file.read_text().strip()
    except OSError:
        return ""


def registry_get(registry: str, path: str, method: str = "GET", accept: str = MANIFEST_V2):
    request = urllib.request.Request(f"http://{registry}/v2/{path}", method=method, headers={"Accept": accept})
    return urllib.request.urlopen(request, timeout=30)


def registry_digest(registry: str, key: str) -> str:
    """The digest the registry serves for the stand-in's Docker Hub path:tag (Docker-Content-Digest)."""
    s = STANDINS[key]
    try:
        with registry_get(registry, f"{s.hub_path}/manifests/{s.tag}", method="HEAD") as response:
            return response.headers.get("Docker-Content-Digest", "")
    except OSError:
        return ""


def hub_refs(key: str) -> list[str]:
    """The local references that shadow KEY's Docker Hub name (its tag, a pull by the pushed digest)."""
    s = STANDINS[key]
    refs = [s.official] if image_exists(s.official) else []
    digest = pushed_digest(key)
    if digest and image_exists(f"{s.name}@{digest}"):
        refs.append(f"{s.name}@{digest}")
    return refs


def remove_hub_refs(keys=tuple(STANDINS)) -> list[str]:
    """Untags the stand-ins' Docker Hub names, so cluster-up has to pull them (the image itself stays
    while a sim tag or the locally built image holds it); one at a time: untagging the last tag of a
    repository drops its digest reference too. The references it could not untag."""
    stuck = []
    for key in keys:
        for ref in hub_refs(key):
            if image_exists(ref) and docker("rmi", ref, check=False).returncode != 0:
                stuck.append(ref)
    return stuck


# --- 3. the tool downloads: the Go-built binaries in the official layout, on a local file server --------

TOOLS = ("kind", "helm", "kubectl")


# The e2e runs as a Mac (macos_path: uname says Darwin arm64), so tools.py asks for the darwin/arm64
# downloads; the files served under those names are this machine's Go builds, which it can run.
SIM_OS, SIM_ARCH = "darwin", "arm64"


def ll_os() -> str:
    return SIM_OS


def ll_arch() -> str:
    return SIM_ARCH


def pinned_version(name: str) -> str:
    return {"kind": V["KIND_VERSION"], "helm": V["HELM_VERSION"], "kubectl": V["KUBERNETES_VERSION"]}[name]


def download_paths(name: str, os_: str = SIM_OS, arch: str = SIM_ARCH) -> tuple[str, str]:
    """The official download (https://HOST/PATH, as HOST/PATH) of NAME and of its checksum file, written
    here from the projects' release pages, not from scripts/libexec/tools.py (which is under test)."""
    if name == "kind":
        path = f"github.com/kubernetes-sigs/kind/releases/download/{V['KIND_VERSION']}/kind-{os_}-{arch}"
        return path, path + ".sha256sum"
    if name == "helm":
        path = f"get.helm.sh/helm-{V['HELM_VERSION']}-{os_}-{arch}.tar.gz"
        return path, path + ".sha256sum"
    path = f"dl.k8s.io/release/{V['KUBERNETES_VERSION']}/bin/{os_}/{arch}/kubectl"
    return path, path + ".sha256"


def built_tool(name: str) -> Path:
    """The Go-built NAME of the pinned version in the cache (scripts/lib/tools.sh builds it when missing)."""
    if name == "kubectl":
        folder = CACHE / f"kubernetes-{V['KUBERNETES_VERSION']}" / "bin"
    else:
        folder = CACHE / f"{name}-{pinned_version(name)}" / "bin"
    if not os.access(folder / name, os.X_OK):
        bash_lib(f"build-{name}", f'ensure_go; build_{name} "$1"', str(folder))
    return folder / name


def helm_in_tarball(tarball: Path, os_: str = SIM_OS, arch: str = SIM_ARCH) -> bytes:
    with tarfile.open(tarball) as tar:
        member = tar.extractfile(f"{os_}-{arch}/helm")
        if member is None:
            raise SimError(f"{tarball} holds no {os_}-{arch}/helm")
        return member.read()


# The Locust image's helm is Linux on the Docker machine's CPU: this machine's, whose Go build it is.
IMAGE_HELM_PLATFORM = ("linux", {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine))


def helm_tarball(target: Path, os_: str, arch: str) -> None:
    """TARGET: helm's release tarball for OS_-ARCH, holding OS_-ARCH/helm (and a README, as the official
    one has with LICENSE)."""
    staging = SIM / "build" / "helm-tarball"
    shutil.rmtree(staging, ignore_errors=True)
    folder = staging / f"{os_}-{arch}"
    folder.mkdir(parents=True)
    shutil.copyfile(built_tool("helm"), folder / "helm")
    (folder / "helm").chmod(0o755)
    (folder / "README.md").write_text(
        f"helm {V['HELM_VERSION']} built from source: the stand-in of Helm's release tarball (locust/tests/registry)\n"
    )

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(target, "w:gz") as tar:
        tar.add(folder, arcname=folder.name, filter=as_root)
    shutil.rmtree(staging)


def lay_out_downloads() -> None:
    """FILES/HOST/PATH for each tool and its checksum file, in the official formats: kind's binary with
    "HASH  kind-OS-ARCH"; helm's tarball holding OS-ARCH/helm with "HASH  helm-VERSION-OS-ARCH.tar.gz",
    for the Mac and for the Locust image (IMAGE_HELM_PLATFORM); kubectl's binary with its bare hash, no
    newline."""
    shutil.rmtree(FILES, ignore_errors=True)
    served = [(name, SIM_OS, SIM_ARCH) for name in TOOLS] + [("helm", *IMAGE_HELM_PLATFORM)]
    for name, os_, arch in served:
        path, sums = download_paths(name, os_, arch)
        target = FILES / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "helm":
            helm_tarball(target, os_, arch)
        else:
            shutil.copyfile(built_tool(name), target)
            target.chmod(0o755)
        digest = sha256_file(target)
        (FILES / sums).write_text(f"{digest}  {target.name}\n" if name != "kubectl" else digest)


def start_file_server() -> str:
    """Python's http.server on FILES at 127.0.0.1 (the first free port from LIVENESS_LAB_SIM_FILES_PORT,
    8780); its URL once it answers."""
    lay_out_downloads()
    port = free_port(int(os.environ.get("LIVENESS_LAB_SIM_FILES_PORT", "8780")))
    start_process(
        "files", [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(FILES), str(port)], str(FILES)
    )
    url = f"http://127.0.0.1:{port}"
    if not wait_http(url + "/"):
        raise SimError(f"the file server does not answer on {url}:\n{tail(log_path('files'), 5)}")
    return url


def published_sum(name: str, text: str) -> str:
    """The hash a checksum file gives for NAME's download: the bare hash, or the "HASH  FILE" line's."""
    want = download_paths(name)[0].rsplit("/", 1)[1]
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 1 or (len(fields) == 2 and fields[1].lstrip("*").rsplit("/", 1)[-1] == want):
            return fields[0]
    return ""


# --- 4. the registry as dockerd's mirror for Docker Hub -------------------------------------------------


def read_daemon_json() -> dict:
    if DAEMON_JSON.exists() and DAEMON_JSON.stat().st_size > 0:
        return json.loads(DAEMON_JSON.read_text())
    return {}


def write_daemon_json(config: dict) -> None:
    """daemon.json with every other key (runtimes, default-runtime...) kept; in place: its owner and mode stay."""
    DAEMON_JSON.parent.mkdir(parents=True, exist_ok=True)
    with open(DAEMON_JSON, "w") as f:
        f.write(json.dumps(config, indent=2) + "\n")


def dockerd_pid() -> int:
    try:
        pid = int(Path("/var/run/docker.pid").read_text().strip())
        if Path(f"/proc/{pid}/comm").read_text().strip() == "dockerd":
            return pid
    except (OSError, ValueError):
        pass
    pids = [int(p.parent.name) for p in Path("/proc").glob("[0-9]*/comm") if _read(p) == "dockerd"]
    if len(pids) != 1:
        raise SimError(f"want one dockerd, found: {pids or 'none'}")
    return pids[0]


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def dockerd_reload() -> None:
    """SIGHUP to the running dockerd, which re-reads daemon.json (registry-mirrors is one of the settings
    it reloads); never a restart, which would stop every container."""
    os.kill(dockerd_pid(), signal.SIGHUP)


def docker_mirrors() -> list[str]:
    """The mirrors the daemon uses now (docker info), each with its trailing slash."""
    proc = docker("info", "--format", "{{json .RegistryConfig.Mirrors}}", check=False)
    try:
        return json.loads(proc.stdout) or []
    except json.JSONDecodeError:
        return []


def mirror_listed(url: str) -> bool:
    return url.rstrip("/") + "/" in docker_mirrors()


def _within(seconds: int, predicate) -> bool:
    for _ in range(seconds):
        if predicate():
            return True
        time.sleep(1)
    return predicate()


def set_mirror(url: str) -> None:
    """URL first among daemon.json's registry-mirrors, the daemon reloaded, listed within 10 s. STATE/mirror
    names it for drop_mirror (also after a run that was killed), STATE/mirror-key-added whether daemon.json
    had the key before."""
    STATE.mkdir(parents=True, exist_ok=True)
    config = read_daemon_json()
    (STATE / "mirror-key-added").write_text("0\n" if "registry-mirrors" in config else "1\n")
    (STATE / "mirror").write_text(url + "\n")
    config["registry-mirrors"] = [url] + [m for m in config.get("registry-mirrors", []) if m != url]
    write_daemon_json(config)
    dockerd_reload()
    if not _within(10, lambda: mirror_listed(url)):
        raise SimError(f"dockerd does not list {url} among its mirrors within 10 s; docker info lists: {docker_mirrors()}")


def drop_mirror() -> str:
    """The mirror an earlier or this run set, out of daemon.json and out of the running daemon (reloaded
    with the list without it), then daemon.json as it was; says what it did."""
    try:
        url = (STATE / "mirror").read_text().strip()
    except OSError:
        return "mirror: none set"
    config = read_daemon_json()
    config["registry-mirrors"] = [m for m in config.get("registry-mirrors", []) if m != url]
    write_daemon_json(config)
    said = f"mirror: {url} dropped"
    try:
        dockerd_reload()
    except SimError as error:
        said += f" from daemon.json; no reload: {error}"
    if not _within(10, lambda: not mirror_listed(url)):
        said += f"; warning: dockerd still lists {url} (docker info): its next reload or restart drops it"
    if _read(STATE / "mirror-key-added") == "1" and config["registry-mirrors"] == []:
        # No reload: the daemon has an empty list already, which is what a missing key means at start.
        del config["registry-mirrors"]
        write_daemon_json(config)
    (STATE / "mirror").unlink(missing_ok=True)
    (STATE / "mirror-key-added").unlink(missing_ok=True)
    return said


# --- 5. the registry path end to end, on a copy of the working tree ------------------------------------

FORBIDDEN_TOOLS = ("go", "gofmt", "kind", "helm", "kubectl", "java", "javac", "mvn")


def cluster_present() -> bool:
    """A kind node of the cluster exists in Docker."""
    return bool(docker("ps", "-aq", "--filter", f"label=io.x-k8s.kind.cluster={CLUSTER}", check=False).stdout.strip())


def source_files() -> list[str]:
    """The working tree's tracked and untracked-not-ignored files (those that exist), as a clone has them."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    return sorted({f for f in out.split("\0") if f and os.path.lexists(REPO / f)})


def copy_tree() -> list[str]:
    """source_files() into TREE (its .venv is kept: the same pins install the same packages, and PyPI is
    not what is under test), made a git work tree with every file added, as a clone is: the images'
    source hashes leave out what .gitignore names. The files copied."""
    TREE.mkdir(parents=True, exist_ok=True)
    if (TREE / ".venv").exists() and not _runs(TREE / ".venv" / "bin" / "python"):
        # Its interpreter is gone (the simulated Mac's python3 link, made again each run, may name another
        # Python, or none): the e2e makes a new one.
        shutil.rmtree(TREE / ".venv")
    for child in TREE.iterdir():
        if child.name == ".venv":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    files = source_files()
    for f in files:
        src, dst = REPO / f, TREE / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(argv, cwd=TREE, check=True, env=_git_env())
    return files


def _runs(python: Path) -> bool:
    try:
        return subprocess.run([str(python), "-c", "pass"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _git_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def without_dev_tools(orig_path: str) -> str:
    """ORIG_PATH without Go, kind, helm, kubectl or a JDK: a folder that holds one is replaced by a folder
    of links (SIM/path/N) to everything else in it; folders inside the repository are left out."""
    root = REPO.resolve()
    farms = SIM / "path"
    shutil.rmtree(farms, ignore_errors=True)
    seen, out, n = set(), [], 0
    for folder in orig_path.split(":"):
        if not folder or not os.path.isdir(folder):
            continue
        real = Path(folder).resolve()
        if root in real.parents or real in seen:
            continue
        seen.add(real)
        if any(os.path.exists(os.path.join(folder, tool)) for tool in FORBIDDEN_TOOLS):
            farm = farms / str(n)
            n += 1
            farm.mkdir(parents=True)
            for entry in sorted(Path(folder).iterdir()):
                if os.path.exists(entry) and entry.name not in FORBIDDEN_TOOLS:
                    (farm / entry.name).symlink_to(entry)
            folder = str(farm)
        out.append(folder)
    return ":".join(out)


def macos_path(path: str) -> tuple[str, list[str], str]:
    """A Mac where Debian can imitate one (scripts/tests/macos_userland.py --mac): its folder first (BWK awk
    as awk, BSD date, sed -i, wc and paste...; uname Darwin arm64, id 501, bash 3.2, the Python a Mac user
    installs), then PATH without GNU's timeout, nproc, sha256sum... that a Mac lacks. The new PATH, the tools
    left out (MACOS_MISSING) and the bash a Mac user chooses by hand (Homebrew's), which runs the scripts."""
    bash_lib("macos-userland-tools", "ensure_pkg original-awk original-awk; ensure_pkg gcc gcc; ensure_pkg make make", libs="")
    userland = REPO / "scripts" / "tests" / "macos_userland.py"
    out = run_logged(
        "macos-userland",
        [sys.executable, str(userland), "--mac", str(SIM / "path" / "macos"), path, str(SIM / "path" / "gnu-less")],
        cwd=REPO,
    )
    missing = run_logged("macos-userland-missing", [sys.executable, str(userland), "--missing"], cwd=REPO)
    chosen = run_logged("macos-userland-bash", [sys.executable, str(userland), "--bash"], cwd=REPO)
    return out.strip().splitlines()[-1], missing.split(), chosen.strip().splitlines()[-1]


def inner_env(path: str, files_url: str, node_ref: str) -> dict:
    """The environment of the registry path as a laptop has it: PATH, the empty cache, the file server as
    download mirror, the stand-in node pinned by digest, registry detection automatic, and nothing of
    this suite's own settings (LL_*, Go's and Java's, pytest's)."""
    dropped = (
        "GOROOT",
        "GOPATH",
        "GOBIN",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "JAVA_HOME",
        "LIVENESS_LAB_REGISTRY",
        "LIVENESS_LAB_LOGS",
        "VIRTUAL_ENV",
    )
    env = {k: v for k, v in os.environ.items() if not (k.startswith(("LL_", "PYTEST_")) or k in dropped)}
    env.update(
        PATH=path,
        LIVENESS_LAB_CACHE=str(E2E_CACHE),
        LIVENESS_LAB_DOWNLOAD_MIRROR=files_url,
        LIVENESS_LAB_NODE_IMAGE=node_ref,
        LIVENESS_LAB_JUNIT=str(E2E_JUNIT),
    )
    return env


def save_inner_path(path: str, bash: str) -> None:
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "inner-path").write_text(path + "\n")
    (STATE / "inner-bash").write_text(bash + "\n")


def archive_copy(dest: Path) -> list[str]:
    """TREE as GitHub's "Download ZIP" has it: `git archive` of its index (no .git), into DEST, with what a
    Mac and the demo add planted in it (Finder's .DS_Store and ._* files, Python's __pycache__). The files
    planted."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    tree_id = subprocess.run(["git", "write-tree"], cwd=TREE, capture_output=True, text=True, check=True, env=_git_env()).stdout.strip()
    archive = subprocess.run(["git", "archive", "--format=tar", tree_id], cwd=TREE, capture_output=True, check=True, env=_git_env()).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    planted = [
        ".DS_Store",
        "locust/.DS_Store",
        "service/src/._Main.java",
        "locust/._locustfile.py",
        "locust/liveness_lab/__pycache__/demo.cpython-312.pyc",
        "locust/report/__pycache__/verdict.cpython-312.pyc",
        "chart/.DS_Store",
    ]
    for name in planted:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes(b"\0\5\26\7 planted by locust/tests/registry\n")
    return planted


def pod_states(env: dict) -> list[str]:
    """Every pod of the cluster as "NAMESPACE/NAME UID RESTARTS...", sorted."""
    proc = subprocess.run(
        [str(TREE / ".tools" / "bin" / "kubectl"), "--context", f"kind-{CLUSTER}", "get", "pods", "-A", "-o", "json"],
        cwd=TREE,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SimError(f"kubectl get pods: exit {proc.returncode}: {proc.stderr.strip()}")
    states = []
    for pod in json.loads(proc.stdout)["items"]:
        meta = pod["metadata"]
        restarts = " ".join(str(c.get("restartCount", 0)) for c in pod.get("status", {}).get("containerStatuses", []))
        states.append(f"{meta['namespace']}/{meta['name']} {meta['uid']} {restarts}")
    return sorted(states)


def cluster_down(env: dict | None, bash: str = "") -> str:
    """scripts/cluster-down.sh of TREE (its kind is in TREE/.tools/bin), with BASH (the Mac user's, else the
    one saved with the inner PATH, else this machine's)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LL_", "PYTEST_"))}
        env["LIVENESS_LAB_CACHE"] = str(E2E_CACHE)
        saved = _read(STATE / "inner-path")
        if saved:
            env["PATH"] = saved
    bash = bash or _read(STATE / "inner-bash") or "bash"
    run_logged("cluster-down", [bash, str(TREE / "scripts" / "cluster-down.sh")], cwd=TREE, env=env)
    if cluster_present():
        raise SimError(f"a kind node of {CLUSTER} is still there after cluster-down ({log_path('cluster-down')})")
    return f"cluster {CLUSTER} deleted"


# --- --down and --purge ---------------------------------------------------------------------------------


def down(purge: bool) -> int:
    """What a --keep run left: the cluster (only when TREE made it: its kind is in TREE/.tools/bin), the
    stand-ins' Docker Hub names, the mirror setting, the file server, the registry; with PURGE also the
    registry's storage, the stand-in images and SIM."""
    STATE.mkdir(parents=True, exist_ok=True)
    rc = 0
    if cluster_present() and os.access(TREE / ".tools" / "bin" / "kind", os.X_OK):
        try:
            print(cluster_down(None))
        except SimError as error:
            print(f"error: {error}", file=sys.stderr)
            rc = 1
    stuck = remove_hub_refs()
    if stuck:
        print(f"could not untag: {' '.join(stuck)}", file=sys.stderr)
    print(drop_mirror())
    print(stop_started("files"))
    print(stop_started("registry"))
    if purge:
        images = docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}", f"{SIM_REPO}/*", check=False).stdout.split()
        if images:
            docker("rmi", *images, check=False)
        shutil.rmtree(SIM, ignore_errors=True)
        print(f"removed {SIM} and the {SIM_REPO}/* images")
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/test-registry.sh", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--down", action="store_true", help="stop what a --keep run left")
    group.add_argument("--purge", action="store_true", help="--down, and remove the storage, stand-ins and caches")
    args = parser.parse_args(argv)
    return down(purge=args.purge)


if __name__ == "__main__":
    sys.exit(main())
