"""scripts/libexec/tools.py, the tools' resolution: which kind, helm and kubectl on PATH are used (the
compatibility rules), the version-keyed cache, and the verified download, for a new clone (its .tools, the
cache and the logs in the test's folder). Downloads come from a file server on 127.0.0.1 laid out as the
release sites, with their checksum files in the official formats; nothing leaves this machine.
Run by `scripts/test.sh cluster`; one file: `python3 -m pytest scripts/tests/test_tools.py`."""

import functools
import hashlib
import http.server
import io
import os
import re
import subprocess
import sys
import tarfile
import threading
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS_PY = REPO / "scripts" / "libexec" / "tools.py"
sys.path.insert(0, str(TOOLS_PY.parent))
import tools  # noqa: E402

VERSIONS = tools.versions_env(REPO / "scripts" / "versions.env")
KIND, HELM, KUBE = VERSIONS["KIND_VERSION"], VERSIONS["HELM_VERSION"], VERSIONS["KUBERNETES_VERSION"]
UNITTEST = VERSIONS["HELM_UNITTEST_VERSION"]
OS, ARCH = tools.ll_os(), tools.ll_arch()


@pytest.fixture
def env(tmp_path):
    """The environment of a new clone: no tool on PATH, an empty cache; no download site (a closed port)."""
    (tmp_path / "user-bin").mkdir()
    return {
        "PATH": str(tmp_path / "user-bin"),
        "LL_CACHE": str(tmp_path / "cache"),
        "LL_LOGS": str(tmp_path / "logs"),
        "LL_TOOLS": str(tmp_path / "clone" / ".tools"),
        "LIVENESS_LAB_DOWNLOAD_MIRROR": "http://127.0.0.1:9",
        "LL_TOOL_DOWNLOADS": "auto",
        "HOME": str(tmp_path),
    }


def tools_py(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOLS_PY), *args], env=env, capture_output=True, text=True, timeout=120)


def fake_tool(path: Path, output: str) -> Path:
    """An executable script at PATH that prints OUTPUT (what the real tool's version command prints)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(0o755)
    return path


def bin_of(env: dict, name: str) -> Path:
    return Path(env["LL_TOOLS"]) / "bin" / name


@pytest.mark.parametrize("version, ok", [("v0.33.0", True), ("v0.34.1", True), ("v0.32.0", False), ("v1.0.0", False)])
def test_kind_on_path_the_pinned_minor_or_newer_within_v0(version, ok):
    assert tools.compatible(tools.Env({}), "kind", version) is ok


@pytest.mark.parametrize("version, ok", [("v3.17.0", True), ("v3.22.0", True), ("v4.0.1", True), ("v3.16.4", False)])
def test_helm_on_path_3_17_or_newer_or_helm_4(version, ok):
    assert tools.compatible(tools.Env({}), "helm", version) is ok


@pytest.mark.parametrize(
    "version, ok",
    [("v1.36.3", True), ("v1.37.0", True), ("v1.38.0", True), ("v1.35.9", False), ("v1.39.0", False), ("garbage", False), ("", False)],
)
def test_kubectl_on_path_within_one_minor_of_the_clusters_kubernetes(version, ok):
    assert KUBE.startswith("v1.37.")  # the cases above are written for it
    assert tools.compatible(tools.Env({}), "kubectl", version) is ok


@pytest.mark.parametrize("name", ["helm-unittest", "helm-docs", "ct"])
def test_the_chart_suites_tools_the_pinned_version_only(name):
    pinned = tools.Env({}).pinned(name)
    assert tools.compatible(tools.Env({}), name, pinned)
    major, minor = tools.version_minor(pinned)
    assert not tools.compatible(tools.Env({}), name, f"v{major}.{minor + 1}.0")


def test_versions_as_each_tool_prints_them(tmp_path):
    says = {
        "kind": "kind v0.33.0 go1.24 linux/amd64",
        "helm": "v3.22.0",
        "kubectl": "Client Version: v1.37.0",
        "helm-docs": "helm-docs version 1.14.2",
        "ct": "Version: v3.14.0",
    }
    want = {"kind": "v0.33.0", "helm": "v3.22.0", "kubectl": "v1.37.0", "helm-docs": "1.14.2", "ct": "v3.14.0"}
    for name, output in says.items():
        assert tools.tool_version(name, str(fake_tool(tmp_path / name, output))) == want[name]
    assert tools.tool_version("kind", str(tmp_path / "missing")) == ""


def test_a_compatible_tool_on_path_is_linked_the_clones_own_bin_skipped(env, tmp_path):
    fake_tool(bin_of(env, "helm"), "v4.0.1")  # the clone's own .tools/bin is not the user's PATH
    fake_tool(tmp_path / "old" / "helm", "v3.16.4")
    fake_tool(tmp_path / "new" / "helm", "v4.0.1")
    env["PATH"] = os.pathsep.join([str(bin_of(env, "helm").parent), str(tmp_path / "old"), str(tmp_path / "old"), str(tmp_path / "new")])
    assert tools_py(env, "source", "helm").stdout == f"path {tmp_path / 'new' / 'helm'} v4.0.1\n"
    assert tools_py(env, "describe", "helm").stdout == f"v4.0.1 on PATH ({tmp_path / 'new' / 'helm'})\n"
    run = tools_py(env, "ensure", "helm")
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert re.search(rf"^\[ *\d+s\] helm v4.0.1: {tmp_path / 'new' / 'helm'}$", run.stderr, re.M)
    assert os.readlink(bin_of(env, "helm")) == str(tmp_path / "new" / "helm")


# Issue 50, trap 2: a user linked the tools the closing lines name into ~/bin (links to the clone's own
# .tools/bin), first on PATH. The link was adopted as "the user's", .tools/bin/NAME was made a link to it (a
# loop) and the run ended with "NAME VERSION did not install".
@pytest.mark.parametrize("name, says", [("helm", HELM), ("kind", f"kind {KIND} go1 linux/amd64")])
@pytest.mark.parametrize("how", ["a link to the clone's .tools/bin/NAME", "a folder that is a link to .tools/bin"])
def test_a_link_on_path_into_the_clones_own_bin_is_not_the_users_and_no_loop_is_made(env, tmp_path, name, says, how):
    version = VERSIONS[tools.PIN[name]]
    cached = fake_tool(Path(env["LL_CACHE"]) / f"{name}-{version}" / "bin" / name, says)
    tools.link(cached, bin_of(env, name))  # what an earlier run left: .tools/bin/NAME -> the cache
    home_bin = tmp_path / "home-bin"
    if how.startswith("a link to"):
        home_bin.mkdir()
        (home_bin / name).symlink_to(bin_of(env, name))
    else:
        home_bin.symlink_to(bin_of(env, name).parent)
    env["PATH"] = os.pathsep.join([str(home_bin), env["PATH"]])
    assert tools_py(env, "source", name).stdout == f"cache {cached}\n"
    run = tools_py(env, "ensure", name)
    assert run.returncode == 0, run.stderr
    assert "did not install" not in run.stderr
    assert os.path.realpath(bin_of(env, name)) == str(cached)
    assert tools.tool_version(name, str(home_bin / name)) == version  # the user's link works again
    assert tools_py(env, "print", name).stdout == f"{name}\n"  # and finds what this run uses


def test_a_link_that_would_lead_to_itself_is_refused_not_written(tmp_path):
    (tmp_path / "home-bin").mkdir()
    (tmp_path / "home-bin" / "helm").symlink_to(tmp_path / ".tools" / "bin" / "helm")
    with pytest.raises(tools.Die, match="would become a link to itself"):
        tools.link(tmp_path / "home-bin" / "helm", tmp_path / ".tools" / "bin" / "helm")
    assert not os.path.lexists(tmp_path / ".tools" / "bin" / "helm")


def test_a_tool_cached_by_version_is_linked_into_a_new_clone_not_built_another_versions_is_not(env):
    cache = Path(env["LL_CACHE"])
    for version in (KIND, "v0.0.1"):
        fake_tool(cache / f"kind-{version}" / "bin" / "kind", f"kind {version} go1 linux/amd64")
    assert tools_py(env, "describe", "kind").stdout == f"{KIND} cached ({cache / f'kind-{KIND}' / 'bin' / 'kind'})\n"
    run = tools_py(env, "ensure", "kind")
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""  # no build
    assert os.readlink(bin_of(env, "kind")) == str(cache / f"kind-{KIND}" / "bin" / "kind")
    # Without the cached binary the download is tried (the closed port refuses it), then the build asked for.
    (cache / f"kind-{KIND}" / "bin" / "kind").unlink()
    run = tools_py(env, "ensure", "kind")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"build {KIND} {cache / f'kind-{KIND}' / 'bin'}\n"
    assert "the download failed (could not download http://127.0.0.1:9/github.com/" in run.stderr
    assert "; building it with Go" in run.stderr


def test_kubectl_from_the_kubernetes_build_of_the_no_registry_path(env):
    built = fake_tool(Path(env["LL_CACHE"]) / f"kubernetes-{KUBE}" / "bin" / "kubectl", f"Client Version: {KUBE}")
    assert tools_py(env, "source", "kubectl").stdout == f"cache {built}\n"


def test_the_plan_lines_for_download_and_build(env):
    url = f"http://127.0.0.1:9/github.com/kubernetes-sigs/kind/releases/download/{KIND}/kind-{OS}-{ARCH}"
    assert tools_py(env, "describe", "kind").stdout == f"{KIND}: download {url} (SHA-256 checked), else build with Go\n"
    env["LL_TOOL_DOWNLOADS"] = "yes"
    assert tools_py(env, "describe", "kind").stdout == f"{KIND}: download {url} (SHA-256 checked)\n"
    env["LL_TOOL_DOWNLOADS"] = "no"
    assert tools_py(env, "describe", "kind").stdout == f"{KIND}: build with Go (no download site answers)\n"
    assert tools_py(env, "ensure", "kind").stdout == f"build {KIND} {Path(env['LL_CACHE']) / f'kind-{KIND}' / 'bin'}\n"


@pytest.fixture
def release(tmp_path):
    """A file server on 127.0.0.1 for tmp_path/release, to be laid out as the release sites (HOST/PATH):
    release.root is the folder, release.url the server's URL."""
    root = tmp_path / "release"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield types.SimpleNamespace(root=root, url=f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tarball(files: dict) -> bytes:
    """A .tar.gz of FILES (name: (bytes, mode))."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def publish(root: Path, url: str, data: bytes) -> Path:
    """DATA at https URL's HOST/PATH under ROOT."""
    path = root / url.removeprefix("https://")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def script(output: str) -> bytes:
    return f"#!/bin/sh\necho '{output}'\n".encode()


def kind_release(root: Path, reports: str = KIND) -> Path:
    """kind's release: the binary and "HASH  kind-OS-ARCH" in .sha256sum."""
    env = tools.Env({})
    binary = script(f"kind {reports} go1 linux/amd64")
    path = publish(root, tools.tool_url(env, "kind"), binary)
    publish(root, tools.tool_sum_url(env, "kind"), f"{sha256(binary)}  kind-{OS}-{ARCH}\n".encode())
    return path


def downloading(env: dict, release, mode: str = "yes") -> dict:
    return {**env, "LIVENESS_LAB_DOWNLOAD_MIRROR": release.url, "LL_TOOL_DOWNLOADS": mode}


def test_a_missing_tool_is_downloaded_its_sha256_checked_and_linked(env, release):
    kind_release(release.root)
    run = tools_py(downloading(env, release), "ensure", "kind")
    assert run.returncode == 0, run.stderr
    assert f"kind {KIND}: downloaded into {env['LL_CACHE']}/kind-{KIND}/bin, SHA-256 verified" in run.stderr
    log = (Path(env["LL_LOGS"]) / f"download-kind-{KIND}.log").read_text()
    assert re.search(r"^SHA-256 [0-9a-f]{64} verified$", log, re.M), log
    assert subprocess.run([bin_of(env, "kind"), "version"], capture_output=True, text=True).stdout == f"kind {KIND} go1 linux/amd64\n"


def test_a_download_that_does_not_match_its_published_sha256_is_refused_and_nothing_linked(env, release):
    path = kind_release(release.root)
    path.write_bytes(path.read_bytes() + b"tampered\n")
    run = tools_py(downloading(env, release), "ensure", "kind")
    assert run.returncode == 1
    assert f"error: could not download kind {KIND} from {release.url}/github.com/" in run.stderr
    assert "  fix: put kind" in run.stderr
    assert "SHA-256 mismatch" in run.stderr  # the log's last lines
    assert "SHA-256 mismatch" in (Path(env["LL_LOGS"]) / f"download-kind-{KIND}.log").read_text()
    assert not os.path.lexists(bin_of(env, "kind"))
    assert not (Path(env["LL_CACHE"]) / f"kind-{KIND}" / "bin" / "kind").exists()
    # auto (the test suites): the build with Go is asked for instead.
    run = tools_py(downloading(env, release, "auto"), "ensure", "kind")
    assert run.returncode == 0 and run.stdout.startswith(f"build {KIND} "), run.stderr


def test_a_downloaded_tool_that_reports_another_version_did_not_install(env, release):
    kind_release(release.root, reports="v0.1.0")
    run = tools_py(downloading(env, release), "ensure", "kind")
    assert run.returncode == 1
    assert f"error: kind {KIND} did not install\n  fix: read the step log in {env['LL_LOGS']}" in run.stderr


def test_helm_from_its_tarball_kubectl_with_its_bare_hash(env, release):
    e = tools.Env({})
    archive = tarball({f"{OS}-{ARCH}/helm": (script(HELM), 0o755), f"{OS}-{ARCH}/README.md": (b"helm\n", 0o644)})
    publish(release.root, tools.tool_url(e, "helm"), archive)
    publish(release.root, tools.tool_sum_url(e, "helm"), f"{sha256(archive)}  helm-{HELM}-{OS}-{ARCH}.tar.gz\n".encode())
    kubectl = script(f"Client Version: {KUBE}")
    publish(release.root, tools.tool_url(e, "kubectl"), kubectl)
    publish(release.root, tools.tool_sum_url(e, "kubectl"), sha256(kubectl).encode())  # no newline, as dl.k8s.io's
    for name in ("helm", "kubectl"):
        run = tools_py(downloading(env, release), "ensure", name)
        assert run.returncode == 0, run.stderr
        assert os.access(bin_of(env, name), os.X_OK)


def test_the_images_helm_for_another_platform_is_its_own_tarballs_member_checked_and_not_linked(env, release):
    """download --platform: the Locust image's helm, Linux on the Docker machine's CPU, whatever this
    machine is (scripts/build-locust-image.sh on a Mac behind a mirror); a mismatched checksum is refused."""
    other = "linux/arm64" if (OS, ARCH) != ("linux", "arm64") else "linux/amd64"
    e = tools.Env({})
    e.os, e.arch = other.split("/")
    archive = tarball({f"{e.os}-{e.arch}/helm": (script(HELM), 0o755)})
    publish(release.root, tools.tool_url(e, "helm"), archive)
    publish(release.root, tools.tool_sum_url(e, "helm"), f"{sha256(archive)}  helm-{HELM}-{e.os}-{e.arch}.tar.gz\n".encode())
    into = Path(env["LL_CACHE"]) / "image-helm"
    run = tools_py(downloading(env, release), "download", "helm", "--platform", other, "--into", str(into))
    assert run.returncode == 0, run.stderr
    assert (into / "helm").read_bytes() == script(HELM)
    assert not bin_of(env, "helm").exists(), "download links nothing"
    publish(release.root, tools.tool_sum_url(e, "helm"), f"{'0' * 64}  helm-{HELM}-{e.os}-{e.arch}.tar.gz\n".encode())
    run = tools_py(downloading(env, release), "download", "helm", "--platform", other, "--into", str(tmp := into.parent / "again"))
    assert run.returncode == 1 and "SHA-256 mismatch" in run.stderr and "fix:" in run.stderr, run.stderr
    assert not (tmp / "helm").exists()
    bad = tools_py(env, "download", "helm", "--platform", "windows/amd64", "--into", str(into))
    assert bad.returncode == 2 and "--platform is OS/ARCH" in bad.stderr, bad.stderr


def test_helm_unittest_downloaded_as_a_helm_plugin_from_a_checksum_file_of_every_release_file(env, release):
    e = tools.Env({})
    plugin_os = "macos" if OS == "darwin" else OS
    archive = tarball({f"untt-{plugin_os}-{ARCH}": (b"#!/bin/sh\n", 0o755), "plugin.yaml": (b"name: unittest\n", 0o644)})
    url = tools.tool_url(e, "helm-unittest")
    publish(release.root, url, archive)
    other = url.rsplit("/", 1)[-1].replace(ARCH, "s390x")
    publish(
        release.root,
        tools.tool_sum_url(e, "helm-unittest"),
        f"{'0' * 64} *_dist/{other}\n{sha256(archive)} *_dist/{url.rsplit('/', 1)[-1]}\n".encode(),
    )
    run = tools_py(downloading(env, release), "ensure", "helm-unittest")
    assert run.returncode == 0, run.stderr
    folder = Path(env["LL_CACHE"]) / f"helm-unittest-{UNITTEST}"
    assert os.path.realpath(bin_of(env, "helm-unittest")) == str(folder / "bin" / "helm-unittest")
    plugin = folder / "plugins" / "unittest"
    assert os.path.realpath(plugin / "untt") == str(folder / "bin" / "helm-unittest")
    yaml = (plugin / "plugin.yaml").read_text()
    assert f'version: "{UNITTEST[1:]}"' in yaml
    assert 'command: "$HELM_PLUGIN_DIR/untt"' in yaml


def test_a_go_built_helm_unittest_gets_its_plugin_folder_when_linked(env):
    folder = Path(env["LL_CACHE"]) / f"helm-unittest-{UNITTEST}"
    fake_tool(folder / "bin" / "helm-unittest", "built")
    run = tools_py(env, "built", "helm-unittest")
    assert run.returncode == 0, run.stderr
    assert f"helm-unittest {UNITTEST}: built into {folder / 'bin'}" in run.stderr
    assert (folder / "plugins" / "unittest" / "plugin.yaml").is_file()


def test_ct_with_its_etc_and_helm_docs_from_a_checksums_txt(env, release):
    e = tools.Env({})
    docs_version, ct_version = e.pinned("helm-docs"), e.pinned("ct")
    sums = {}
    for name, files in {
        "helm-docs": {"helm-docs": (script(f"helm-docs version {docs_version}"), 0o755)},
        "ct": {"ct": (script(f"Version: {ct_version}"), 0o755), "etc/chart_schema.yaml": (b"name: str()\n", 0o644)},
    }.items():
        archive = tarball(files)
        url = tools.tool_url(e, name)
        publish(release.root, url, archive)
        sums[name] = f"{sha256(b'x')}  README.md\n{sha256(archive)}  {url.rsplit('/', 1)[-1]}\n"
        publish(release.root, tools.tool_sum_url(e, name), sums[name].encode())
    for name in ("helm-docs", "ct"):
        run = tools_py(downloading(env, release), "ensure", name)
        assert run.returncode == 0, run.stderr
    assert (Path(env["LL_CACHE"]) / f"ct-{ct_version}" / "etc" / "chart_schema.yaml").read_text() == "name: str()\n"


def test_an_archive_with_a_path_outside_its_folder_is_refused(tmp_path):
    (tmp_path / "a.tar.gz").write_bytes(tarball({"../escape": (b"x", 0o644)}))
    with pytest.raises(OSError, match="outside its folder"):
        tools.unpack(tmp_path / "a.tar.gz", tmp_path / "out")
    assert not (tmp_path / "escape").exists()


def test_print_tool_the_bare_name_only_when_the_users_path_finds_the_same_binary(env, tmp_path):
    cached = fake_tool(Path(env["LL_CACHE"]) / f"kind-{KIND}" / "bin" / "kind", f"kind {KIND} go1")
    assert tools_py(env, "ensure", "kind").returncode == 0
    env["LL_USER_PATH"] = str(tmp_path / "user-bin")
    assert tools_py(env, "print", "kind").stdout == f"{bin_of(env, 'kind')}\n"
    fake_tool(tmp_path / "user-bin" / "kind", "another kind")
    assert tools_py(env, "print", "kind").stdout == f"{bin_of(env, 'kind')}\n"
    os.symlink(cached, tmp_path / "linked-kind")
    (tmp_path / "user-bin" / "kind").unlink()
    os.symlink(tmp_path / "linked-kind", tmp_path / "user-bin" / "kind")  # the same binary, by another link
    assert tools_py(env, "print", "kind").stdout == "kind\n"


def test_mirrored_urls():
    url = "https://get.helm.sh/helm-v3.22.0-linux-amd64.tar.gz"
    assert tools.mirrored(tools.Env({}), url) == url
    assert (
        tools.mirrored(tools.Env({"LIVENESS_LAB_DOWNLOAD_MIRROR": "http://127.0.0.1:8/m/"}), url)
        == "http://127.0.0.1:8/m/get.helm.sh/helm-v3.22.0-linux-amd64.tar.gz"
    )


@pytest.mark.parametrize("args", [[], ["ensure"], ["ensure", "kubeadm"], ["fetch", "kind"]])
def test_usage_errors_exit_2(env, args):
    run = tools_py(env, *args)
    assert run.returncode == 2
    assert "usage: scripts/libexec/tools.py" in run.stderr


# Helm 4 is the pin; LIVENESS_LAB_HELM_VERSION names another release (a run on Helm 3), which is then the
# only one used, from PATH or the cache.
def test_liveness_lab_helm_version_pins_that_release_only(env, tmp_path):
    env["LIVENESS_LAB_HELM_VERSION"] = "v3.22.0"
    fake_tool(tmp_path / "new" / "helm", "v4.3.1")
    env["PATH"] = str(tmp_path / "new")
    mirror = env["LIVENESS_LAB_DOWNLOAD_MIRROR"]
    assert tools_py(env, "source", "helm").stdout == f"download {mirror}/get.helm.sh/helm-v3.22.0-{OS}-{ARCH}.tar.gz\n"
    described = tools_py(env, "describe", "helm").stdout
    assert described.startswith("v3.22.0: download ") and "(v4.3.1: helm must be LIVENESS_LAB_HELM_VERSION's v3.22.0)" in described
    fake_tool(tmp_path / "three" / "helm", "v3.22.0")
    env["PATH"] = os.pathsep.join([str(tmp_path / "new"), str(tmp_path / "three")])
    assert tools_py(env, "source", "helm").stdout == f"path {tmp_path / 'three' / 'helm'} v3.22.0\n"
    del env["LIVENESS_LAB_HELM_VERSION"]
    assert tools_py(env, "source", "helm").stdout == f"path {tmp_path / 'new' / 'helm'} v4.3.1\n"


@pytest.mark.parametrize("asked", ["v3.16.4", "3.22.0", "v4", "latest"])
def test_liveness_lab_helm_version_that_cannot_be_used_is_refused(env, asked):
    env["LIVENESS_LAB_HELM_VERSION"] = asked
    run = tools_py(env, "describe", "helm")
    assert run.returncode == 1 and run.stdout == ""
    assert f"error: LIVENESS_LAB_HELM_VERSION must be a Helm release, 3.17 or newer, as v3.22.0 (it is '{asked}')" in run.stderr
    assert "fix: e.g. LIVENESS_LAB_HELM_VERSION=v3.22.0" in run.stderr


def test_a_helm_older_than_317_on_path_is_not_used_and_the_plan_says_why(env, tmp_path):
    fake_tool(tmp_path / "old" / "helm", "v3.16.4")
    env["PATH"] = str(tmp_path / "old")
    described = tools_py(env, "describe", "helm").stdout
    assert described.startswith(f"{HELM}: download ")
    why = f"; not {tmp_path / 'old' / 'helm'} (v3.16.4: helm must be 3.17 or newer, or Helm 4): upgrade it, or use {bin_of(env, 'helm')}"
    assert why in described, described
