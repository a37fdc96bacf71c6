"""The simulated world: Docker Hub's stand-in on 127.0.0.1 holding stand-ins of the official images, the tool
downloads in their official layout, and dockerd using the registry as its mirror (registry_sim.py)."""

import hashlib
import json
import re
import time
import urllib.request

import pytest

from . import registry_sim as sim

KEYS = list(sim.STANDINS)


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def test_registry_answers_on_loopback_only(registry):
    assert registry.startswith("127.0.0.1:")
    assert sim.http_ok(f"http://{registry}/v2/"), f"docker-registry does not answer on http://{registry}/v2/"
    config = (sim.SIM / "registry" / "config.yml").read_text()
    assert f"addr: {registry}\n" in config, "the registry must listen on 127.0.0.1 only"


@pytest.mark.parametrize("tool", sim.TOOLS)
def test_download_served_as_official(file_server, tool):
    """The tool and its checksum file at the official paths; the checksum file's hash is the served bytes'."""
    path, sums = sim.download_paths(tool)
    body = fetch(f"{file_server}/{path}")
    published = sim.published_sum(tool, fetch(f"{file_server}/{sums}").decode())
    assert published, f"{sums} names no hash for {path.rsplit('/', 1)[1]}"
    assert published == hashlib.sha256(body).hexdigest(), f"{sums} does not hold the SHA-256 of {path}"
    if tool == "helm":
        assert sim.helm_in_tarball(sim.FILES / path), "the tarball holds no helm"


@pytest.mark.parametrize("key", KEYS)
def test_local_base_image_current(local_images, key):
    """The stand-in's local base, as scripts/lib/airgap.sh builds it today (the node image from cluster-up)."""
    assert sim.image_exists(sim.STANDINS[key].local_base)


@pytest.mark.parametrize("key", KEYS)
def test_standin_built_and_pushed(standins, registry, key):
    """Built from its local base, pushed, and served under Docker Hub's name with the pushed digest."""
    digest = standins.pushed(key)
    served = sim.registry_digest(registry, key)
    assert served == digest, f"the registry serves {sim.STANDINS[key].hub_path}:{sim.STANDINS[key].tag} as {served!r}, pushed {digest}"


# What the service's build and image rely on, and no curl or wget (helm test must pass without them).
TEMURIN_CHECK = r"""
set -e
echo "JAVA_HOME=$JAVA_HOME, java: $(command -v java)"
[ "$JAVA_HOME" = /opt/java/openjdk ] && [ "$(command -v java)" = /opt/java/openjdk/bin/java ]
[ -x /opt/java/openjdk/bin/java ]
java -XshowSettings:properties -version 2>&1 | grep -q "java.specification.version = 25"
java -version 2>&1 | head -n 1
if [ "$1" = jdk ]; then javac -version && command -v jshell >/dev/null; fi
for tool in curl wget; do
  if command -v "$tool"; then echo "$tool is present: the official image has none"; exit 1; fi
done
echo "no curl, no wget"
"""


@pytest.mark.parametrize("key", ["jre", "jdk"])
def test_temurin_standin(standins, key):
    """Java 25 (the JDK's javac and jshell too) at /opt/java/openjdk, first on PATH; no curl, no wget."""
    standins.pushed(key)
    out = sim.in_image(sim.STANDINS[key].sim_tag, "sh", "-c", TEMURIN_CHECK, "sh", key)
    assert out.returncode == 0, out.stdout + out.stderr


def test_locust_standin(standins):
    """locust VERSION from /opt/venv on Python 3.13, user locust in /home/locust, ENTRYPOINT ["locust"]."""
    standins.pushed("locust")
    s = sim.STANDINS["locust"]
    out = sim.in_image(s.sim_tag, "--version")
    version = out.stdout + out.stderr
    assert out.returncode == 0, version
    assert re.search(rf"locust {re.escape(s.tag)} from /opt/venv/.*Python {re.escape(sim.STANDIN_PYTHON)}\.", version), (
        f"want locust {s.tag} from /opt/venv on Python {sim.STANDIN_PYTHON}: {version}"
    )
    out = sim.in_image(s.sim_tag, "-c", 'echo "$(id -un) $(pwd) ${PATH%%:*}"', entrypoint="sh")
    assert out.stdout.strip() == "locust /home/locust /opt/venv/bin"
    entrypoint = sim.docker("image", "inspect", "--format", "{{json .Config.Entrypoint}}", s.sim_tag).stdout
    assert json.loads(entrypoint) == ["locust"]


def test_node_standin(standins):
    """Kubernetes KUBERNETES_VERSION, and a default CNI manifest kind can apply (one object at least)."""
    standins.pushed("node")
    s = sim.STANDINS["node"]
    out = sim.in_image(s.sim_tag, "/kind/version", entrypoint="cat")
    assert out.stdout.strip() == sim.V["KUBERNETES_VERSION"], out.stdout + out.stderr
    assert sim.node_cni_has_object(s.sim_tag), "/kind/manifests/default-cni.yaml holds no object"


def test_mirror_is_the_local_registry(mirror):
    """dockerd lists the registry as its mirror; daemon.json has it first and every other key as it was."""
    assert sim.mirror_listed(mirror.url), f"docker info lists {sim.docker_mirrors()}"
    now = sim.read_daemon_json()
    assert now["registry-mirrors"][0] == mirror.url
    assert {k: v for k, v in now.items() if k != "registry-mirrors"} == {k: v for k, v in mirror.before.items() if k != "registry-mirrors"}


def test_pull_goes_through_the_mirror(mirror, standins, registry, say):
    """A pull of Docker Hub names is answered by the registry: the node by tag and by its pushed digest (as
    cluster-up's pin is), the JRE by tag; the tags are removed again. A pull by tag asks the registry for
    the manifest every time; one by a digest Docker has pulled before is answered from its own store (so
    the registry's log is checked for the tag pulls). The stand-ins' layers are already local, so the pulls
    move manifests and configs only: what a pull without them fetches is timed from the registry."""
    node, jre = sim.STANDINS["node"], sim.STANDINS["jre"]
    digest = standins.pushed("node")
    standins.pushed("jre")
    log = sim.log_path("registry")
    start = log.stat().st_size
    for ref in (node.official, f"{node.name}:{node.tag}@{digest}", jre.official):
        started = time.monotonic()
        sim.docker("pull", "-q", ref)
        say(f"docker pull of {ref}: {time.monotonic() - started:.1f}s")
    asked = log.read_bytes()[start:].decode(errors="replace")
    for s in (node, jre):
        assert re.search(rf'"(GET|HEAD) /v2/{re.escape(s.hub_path)}/manifests/{re.escape(s.tag)} ', asked), (
            f"the registry's log shows no pull of {s.official}"
        )
    assert not sim.remove_hub_refs(), "could not untag the pulled Docker Hub names"
    with sim.registry_get(registry, f"{node.hub_path}/manifests/{digest}") as response:
        layers = [layer["digest"] for layer in json.load(response)["layers"]]
    started, size = time.monotonic(), 0
    for layer in layers:
        with sim.registry_get(registry, f"{node.hub_path}/blobs/{layer}", accept="*/*") as response:
            while chunk := response.read(1 << 20):
                size += len(chunk)
    say(
        f"the node image's {len(layers)} layers, {size // 1000000} MB compressed, fetched from the registry "
        f"in {time.monotonic() - started:.1f}s"
    )


@pytest.mark.parametrize("key", KEYS)
def test_no_local_tag_shadows_the_hub_name(standins, key):
    """Neither the Docker Hub tag nor the pushed digest is a local reference: cluster-up must pull it."""
    standins.pushed(key)
    sim.remove_hub_refs([key])
    assert sim.hub_refs(key) == []
