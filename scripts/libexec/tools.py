#!/usr/bin/env python3
"""Where liveness-lab's tools come from: kind, helm and kubectl (cluster-up), helm-unittest, helm-docs and
ct (the chart suite). A tool on PATH is used when it is compatible (the rule: compatible() here);
otherwise the pinned version (scripts/versions.env) comes from the version-keyed cache under $LL_CACHE,
else from its official release download, checked against its published SHA-256, else, where no download
site answers (the no-registry path), it is built with Go by scripts/lib/tools.sh (the builds are shell:
`go build` of pinned modules). The chosen binary is linked into the clone's git-ignored $LL_TOOLS/bin.

Python, the standard library only (3.9+: macOS's /usr/bin/python3), not bash: the version rules,
checksum files, SHA-256 and archives are done the same way on macOS and Linux without sha256sum/shasum,
GNU/BSD tar, curl or awk differences. scripts/lib/tools.sh runs it; its functions are one-line wrappers.

Usage: scripts/libexec/tools.py COMMAND NAME      (NAME: kind helm kubectl helm-unittest helm-docs ct)
       scripts/libexec/tools.py download NAME --into DIR [--platform OS/ARCH]
  source    where `ensure` will take NAME from, fetching nothing: "path BINARY VERSION", "cache BINARY",
            "download URL" or "build"
  describe  the plan's line for NAME (scripts/cluster-up.sh --dry-run)
  ensure    NAME linked into $LL_TOOLS/bin from PATH, the cache or its download; a progress line on
            stderr ("[ Ns] NAME VERSION: ..."), the download's log in $LL_LOGS/download-NAME-VERSION.log.
            Prints "build VERSION DIR" instead when NAME is to be built with Go into DIR (then `built`).
  built     after the Go build into DIR: NAME linked (helm-unittest: its Helm plugin folder made) and checked
  print     how the user runs NAME: the bare name when their own PATH (LL_USER_PATH) finds the same
            binary, else its path under $LL_TOOLS/bin
  download  the pinned NAME's release download, SHA-256 checked, into --into DIR, for --platform OS/ARCH
            (default this machine's); nothing linked (scripts/build-locust-image.sh: the image's
            linux helm where get.helm.sh does not answer from inside the build but a mirror does)
Exit status: 0; 1 with "error: ..." and "  fix: ..." on stderr; 2 for a usage error.

Environment (set by scripts/lib/common.sh and tools.sh; defaults as there):
  LL_CACHE, LL_LOGS, LL_TOOLS, LL_USER_PATH, LL_START (the script's start, for the log lines' seconds)
  LL_KUBERNETES_VERSION=   the Kubernetes release kubectl is to match (cluster-up --kubernetes-version);
                           unset: KUBERNETES_VERSION of scripts/versions.env
  LL_TOOL_DOWNLOADS=auto   yes: download, stop when that fails (the registry path); no: build with Go
                           (the no-registry path); auto: download, else build with Go (the test suites)
  LIVENESS_LAB_DOWNLOAD_MIRROR=   fetch https://HOST/PATH from MIRROR/HOST/PATH instead (tests, proxies)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ["kind", "helm", "kubectl", "helm-unittest", "helm-docs", "ct"]
PIN = {
    "kind": "KIND_VERSION",
    "helm": "HELM_VERSION",
    "kubectl": "KUBERNETES_VERSION",
    "helm-unittest": "HELM_UNITTEST_VERSION",
    "helm-docs": "HELM_DOCS_VERSION",
    "ct": "CHART_TESTING_VERSION",
}


class Die(Exception):
    """An error the user can fix: MESSAGE and FIX."""

    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.fix = fix


class Env:
    """The settings the bash side exports (common.sh, tools.sh), with common.sh's defaults."""

    def __init__(self, environ=os.environ):
        self.root = Path(environ.get("LL_ROOT") or ROOT)
        self.cache = Path(environ.get("LL_CACHE") or environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab")
        self.logs = Path(environ.get("LL_LOGS") or environ.get("LIVENESS_LAB_LOGS") or self.cache / "logs")
        self.bin = Path(environ.get("LL_TOOLS") or self.root / ".tools") / "bin"
        self.path = environ.get("PATH", "")
        self.user_path = environ.get("LL_USER_PATH", self.path)
        self.downloads = environ.get("LL_TOOL_DOWNLOADS") or "auto"
        self.mirror = environ.get("LIVENESS_LAB_DOWNLOAD_MIRROR", "")
        self.start = int(environ.get("LL_START") or time.time())
        self.versions = versions_env(self.root / "scripts" / "versions.env")
        # The Kubernetes release of this run (cluster-up's --kubernetes-version: ll_select_kubernetes), which
        # kubectl matches; else the default.
        if environ.get("LL_KUBERNETES_VERSION"):
            self.versions["KUBERNETES_VERSION"] = environ["LL_KUBERNETES_VERSION"]
        # A Helm release asked for instead of the pin (v3.22.0: a run on Helm 3): that one exactly.
        self.helm_asked = environ.get("LIVENESS_LAB_HELM_VERSION", "")
        if self.helm_asked:
            self.versions["HELM_VERSION"] = self.helm_asked
        # The platform downloads are for: this machine's, or another's (download --platform: the Locust
        # image's helm is Linux on the Docker machine's CPU).
        self.os, self.arch = ll_os(), ll_arch()

    def check(self) -> None:
        """Die when a setting names what cannot be used."""
        if self.helm_asked and not (re.fullmatch(r"v\d+\.\d+\.\d+", self.helm_asked) and helm_supported(self.helm_asked)):
            raise Die(
                f"LIVENESS_LAB_HELM_VERSION must be a Helm release, 3.17 or newer, as v3.22.0 (it is '{self.helm_asked}')",
                "e.g. LIVENESS_LAB_HELM_VERSION=v3.22.0 for Helm 3; unset, the pinned HELM_VERSION of scripts/versions.env",
            )

    def pinned(self, name: str) -> str:
        """The version scripts/versions.env pins for NAME (kubectl: the Kubernetes release of this run)."""
        return self.versions[PIN[name]]

    def log(self, message: str) -> None:
        print(f"[{int(time.time()) - self.start:4d}s] {message}", file=sys.stderr, flush=True)


def versions_env(path: Path) -> dict:
    """scripts/versions.env's KEY=value lines."""
    return dict(re.findall(r"^([A-Z_][A-Z0-9_]*)=(\S*)", path.read_text(), re.M))


def uname(option: str, fallback: str) -> str:
    """`uname OPTION`, as the bash side asks it (uname -s says Darwin on a Mac), else FALLBACK."""
    try:
        return (
            subprocess.run(["uname", option], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
            or fallback
        )
    except (OSError, subprocess.CalledProcessError):
        return fallback


def ll_os() -> str:
    return uname("-s", os.uname().sysname).lower()


def ll_arch() -> str:
    machine = uname("-m", os.uname().machine)
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def tool_version(name: str, binary: str) -> str:
    """The version BINARY reports (v1.2.3), or ""."""
    if name == "helm-unittest":
        # The plugin's binary cannot tell its version: the cache folder it was installed into does.
        found = re.search(r"/helm-unittest-(v[^/]*)/bin/helm-unittest$", os.path.realpath(binary))
        return found.group(1) if found else ""
    args = {
        "kind": ["version"],
        "helm": ["version", "--template", "{{.Version}}"],
        "kubectl": ["version", "--client"],
        "helm-docs": ["--version"],
        "ct": ["version"],
    }[name]
    try:
        out = subprocess.run(
            [binary, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():
        words = line.split()
        if name == "kind" and len(words) > 1:
            return words[1]
        if name == "helm":
            return line.strip()
        if name == "kubectl" and line.startswith("Client Version: "):
            return line[len("Client Version: ") :]
        if name == "helm-docs" and len(words) > 2:
            return words[2]
        if name == "ct" and words[:1] == ["Version:"] and len(words) > 1:
            return words[1]
    return ""


def version_minor(version: str):
    """(major, minor) of v1.2.3 (or 1.2.3-rc.1), or None."""
    found = re.match(r"v?(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def helm_supported(version: str) -> bool:
    """Helm 3.17 or newer (--take-ownership), or Helm 4."""
    have = version_minor(version)
    return have is not None and (have[0] >= 4 or (have[0] == 3 and have[1] >= 17))


def compatible(env: Env, name: str, version: str) -> bool:
    """The rule for using a tool the user already has:
    kind    the pinned minor or newer within v0 (kind keeps old node images working; v0.33 is what the
            node image is pinned for)
    helm    3.17 or newer (--take-ownership), or Helm 4; with LIVENESS_LAB_HELM_VERSION, that release only
    kubectl within one minor of the cluster's Kubernetes (the Kubernetes skew policy)
    helm-unittest, helm-docs, ct: the pinned version only (a test's verdict, or the generated table,
            must not depend on which one a machine has)"""
    if name in ("helm-unittest", "helm-docs", "ct"):
        return version == env.pinned(name)
    have, want = version_minor(version), version_minor(env.pinned(name))
    if have is None or want is None:
        return False
    if name == "kind":
        return have[0] == want[0] and have[1] >= want[1]
    if name == "helm":
        return version == env.helm_asked if env.helm_asked else helm_supported(version)
    return have[0] == want[0] and abs(have[1] - want[1]) <= 1  # kubectl


def on_path(name: str, path: str) -> list:
    """Every executable NAME on PATH, in order, each once (bash's `type -ap NAME`, deduplicated)."""
    found = []
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if candidate not in found and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            found.append(candidate)
    return found


def link_chain(path: str) -> list:
    """PATH and every link it leads through, in order (`readlink` hop by hop, each folder's own links
    resolved), up to 40 hops: where a loop ends it."""
    chain, hop = [], os.path.abspath(path)
    while len(chain) < 40:
        hop = os.path.join(os.path.realpath(os.path.dirname(hop)), os.path.basename(hop))
        chain.append(hop)
        if not os.path.islink(hop):
            break
        hop = os.path.join(os.path.dirname(hop), os.readlink(hop))
    return chain


def in_own_bin(env: Env, path: str) -> bool:
    """PATH is the clone's own .tools/bin's, or leads to it through links (a user who linked the tools the
    closing lines name into ~/bin, or ~/bin itself a link to .tools/bin): not a tool of the user's."""
    own = os.path.realpath(env.bin)
    return any(os.path.dirname(hop) == own for hop in link_chain(path))


def compatible_on_path(env: Env, name: str):
    """(binary, version) of the first NAME on PATH that compatible() accepts, or None. The clone's own
    .tools/bin is not the user's, nor a link into it (adopted, .tools/bin/NAME would become a link to a
    link to itself): what it links to is found in the cache instead."""
    for candidate in on_path(name, env.path):
        if in_own_bin(env, candidate):
            continue
        version = tool_version(name, candidate)
        if compatible(env, name, version):
            return candidate, version
    return None


def github_release(repo: str, version: str) -> str:
    return f"https://github.com/{repo}/releases/download/{version}"


def tool_url(env: Env, name: str) -> str:
    """The official release download of the pinned NAME for this OS and CPU."""
    os_, arch, v = env.os, env.arch, env.pinned(name)
    if name == "kind":
        return f"{github_release('kubernetes-sigs/kind', v)}/kind-{os_}-{arch}"
    if name == "helm":
        return f"https://get.helm.sh/helm-{v}-{os_}-{arch}.tar.gz"
    if name == "kubectl":
        return f"https://dl.k8s.io/release/{v}/bin/{os_}/{arch}/kubectl"
    if name == "helm-unittest":
        os_ = "macos" if os_ == "darwin" else os_
        return f"{github_release('helm-unittest/helm-unittest', v)}/helm-unittest-{os_}-{arch}-{v[1:]}.tgz"
    if name == "helm-docs":
        arch = "x86_64" if arch == "amd64" else arch
        return f"{github_release('norwoodj/helm-docs', v)}/helm-docs_{v[1:]}_{os_.capitalize()}_{arch}.tar.gz"
    return f"{github_release('helm/chart-testing', v)}/chart-testing_{v[1:]}_{os_}_{arch}.tar.gz"  # ct


def tool_sum_url(env: Env, name: str) -> str:
    """The published SHA-256 file of tool_url()."""
    v = env.pinned(name)
    if name == "kubectl":
        return tool_url(env, name) + ".sha256"
    if name == "helm-unittest":
        return f"{github_release('helm-unittest/helm-unittest', v)}/helm-unittest-checksum.sha"
    if name == "helm-docs":
        return f"{github_release('norwoodj/helm-docs', v)}/checksums.txt"
    if name == "ct":
        return f"{github_release('helm/chart-testing', v)}/checksums.txt"
    return tool_url(env, name) + ".sha256sum"


def mirrored(env: Env, url: str) -> str:
    """URL, or its copy under LIVENESS_LAB_DOWNLOAD_MIRROR."""
    return f"{env.mirror.removesuffix('/')}/{url.removeprefix('https://')}" if env.mirror else url


def published_sum(text: str, file: str) -> str:
    """The hash a checksum file gives FILE: it holds one hash, or one line per release file
    ("HASH  [*][dir/]FILE"); "" when it names none."""
    for line in text.splitlines():
        words = line.split()
        if len(words) == 1 or (len(words) > 1 and words[1].lstrip("*").rsplit("/", 1)[-1] == file):
            return words[0]
    return ""


def ssl_context() -> ssl.SSLContext:
    """The system's CAs; macOS's /etc/ssl/cert.pem where this Python has none of its own (python.org's)."""
    context = ssl.create_default_context()
    if not context.cert_store_stats()["x509_ca"] and os.path.exists("/etc/ssl/cert.pem"):
        context.load_verify_locations("/etc/ssl/cert.pem")
    return context


def fetch(url: str, out, attempts: int = 4) -> None:
    """URL's body written to the binary file OUT, retried as `curl --retry 3` does: after a timeout or an
    HTTP 408, 429 or 5xx, 1, 2 then 4 seconds later. URLError/OSError when it fails."""
    for attempt in range(attempts):
        try:
            out.seek(0)
            out.truncate()
            with urllib.request.urlopen(url, timeout=60, context=ssl_context() if url.startswith("https:") else None) as got:
                shutil.copyfileobj(got, out)
            return
        except urllib.error.HTTPError as error:
            if error.code not in (408, 429) and error.code < 500 or attempt == attempts - 1:
                raise
        except OSError as error:  # URLError too; socket.timeout is TimeoutError from 3.10 on, not in 3.9
            if not isinstance(getattr(error, "reason", error), socket.timeout) or attempt == attempts - 1:
                raise
        time.sleep(2**attempt)


def unpack(archive: Path, into: Path) -> None:
    """The regular files and folders of the .tar.gz ARCHIVE into INTO; refuses paths that leave it."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        for member in members:
            if member.name.startswith("/") or ".." in Path(member.name).parts:
                raise OSError(f"{archive.name} holds a path outside its folder: {member.name}")
        extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(into, members=members, **extra)


def replace(source: Path, target: Path) -> None:
    """SOURCE moved to TARGET, whatever was there before removed (`rm -rf TARGET; mv SOURCE TARGET`)."""
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(source), str(target))


def helm_unittest_plugin(env: Env, folder: Path) -> None:
    """The plugin folder FOLDER/../plugins/unittest for FOLDER/helm-unittest, so that
    `HELM_PLUGINS=FOLDER/../plugins helm unittest` runs it without touching the user's own Helm plugins.
    No install hooks: the binary is already there."""
    plugin = folder.parent / "plugins" / "unittest"
    plugin.mkdir(parents=True, exist_ok=True)
    link("../../bin/helm-unittest", plugin / "untt")
    (plugin / "plugin.yaml").write_text(
        'name: "unittest"\n'
        f'version: "{env.pinned("helm-unittest")[1:]}"\n'
        'usage: "unittest for helm charts"\n'
        'description: "helm-unittest, built or downloaded by liveness-lab (scripts/libexec/tools.py)"\n'
        'command: "$HELM_PLUGIN_DIR/untt"\n'
    )


def download_tool(env: Env, name: str, folder: Path, say) -> bool:
    """The pinned NAME's official release into FOLDER, verified against its SHA-256; what it does goes to
    SAY (a line at a time). False when it failed (the last line says why)."""
    url = mirrored(env, tool_url(env, name))
    say(f"downloading {url}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        download = tmp / "download"
        current = url
        try:
            with open(download, "wb") as out:
                fetch(url, out)
            current = mirrored(env, tool_sum_url(env, name))
            with tempfile.TemporaryFile() as sums:
                fetch(current, sums)
                sums.seek(0)
                want = published_sum(sums.read().decode(errors="replace"), url.rsplit("/", 1)[-1])
        except OSError as error:  # urllib's errors too
            plain = isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError)
            say(f"could not download {current}: {error.reason if plain else error}")
            return False
        digest = hashlib.sha256()
        with open(download, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        have = digest.hexdigest()
        if not want or have != want:
            say(f"SHA-256 mismatch for {url}: published '{want}', downloaded '{have}'")
            return False
        say(f"SHA-256 {have} verified")
        folder.mkdir(parents=True, exist_ok=True)
        try:
            if name == "kind" or name == "kubectl":
                replace(download, folder / name)
            else:
                unpack(download, tmp)
                if name == "helm":
                    replace(tmp / f"{env.os}-{env.arch}" / "helm", folder / "helm")
                elif name == "helm-unittest":
                    binary = sorted(tmp.glob("untt-*")) or [tmp / "untt"]
                    replace(binary[0], folder / "helm-unittest")
                    helm_unittest_plugin(env, folder)
                elif name == "helm-docs":
                    replace(tmp / "helm-docs", folder / "helm-docs")
                else:  # ct, and the release's etc/: the Chart.yaml schema and yamllint configuration ct lint reads (CT_CONFIG_DIR)
                    replace(tmp / "ct", folder / "ct")
                    replace(tmp / "etc", folder.parent / "etc")
        except (OSError, tarfile.TarError) as error:
            say(f"could not unpack {url}: {error}")
            return False
        (folder / name).chmod(0o755)
    return True


def tool_source(env: Env, name: str) -> list:
    """Where ensure() will take NAME from, fetching nothing: ["path", BINARY, VERSION], ["cache", BINARY],
    ["download", URL] or ["build"]."""
    found = compatible_on_path(env, name)
    if found:
        return ["path", *found]
    version = env.pinned(name)
    cached = env.cache / f"{name}-{version}" / "bin" / name
    # kubectl is also in the Kubernetes build of the no-registry path.
    if name == "kubectl" and not os.access(cached, os.X_OK):
        cached = env.cache / f"kubernetes-{version}" / "bin" / "kubectl"
    if os.access(cached, os.X_OK):
        return ["cache", str(cached)]
    if env.downloads == "no":
        return ["build"]
    return ["download", mirrored(env, tool_url(env, name))]


def rule(env: Env, name: str) -> str:
    """compatible()'s rule for NAME, as a user reads it."""
    if name == "kind":
        return f"{env.pinned(name)[: env.pinned(name).rindex('.')]} or newer within v0"
    if name == "helm":
        return f"LIVENESS_LAB_HELM_VERSION's {env.helm_asked}" if env.helm_asked else "3.17 or newer, or Helm 4"
    if name == "kubectl":
        return f"within one minor of Kubernetes {env.pinned(name)}"
    return f"{env.pinned(name)} exactly"


def not_used(env: Env, name: str) -> str:
    """When the user's PATH has NAME but not a compatible one: which, and what to do (else "")."""
    for candidate in on_path(name, env.path):
        if not in_own_bin(env, candidate):
            have = tool_version(name, candidate) or "of an unknown version"
            return f"; not {candidate} ({have}: {name} must be {rule(env, name)}): upgrade it, or use {env.bin / name}"
    return ""


def describe_tool(env: Env, name: str) -> str:
    """The plan's line for NAME."""
    how, version = tool_source(env, name), env.pinned(name)
    if how[0] == "path":
        return f"{how[2]} on PATH ({how[1]})"
    if how[0] == "cache":
        return f"{version} cached ({how[1]})" + not_used(env, name)
    if how[0] == "download":
        return (
            f"{version}: download {how[1]} (SHA-256 checked)"
            + ("" if env.downloads == "yes" else ", else build with Go")
            + not_used(env, name)
        )
    return f"{version}: build with Go (no download site answers)" + not_used(env, name)


def link(target, at: Path) -> None:
    """AT becomes a symbolic link to TARGET (`ln -sf`); Die when TARGET leads back to AT (a link loop)."""
    at.parent.mkdir(parents=True, exist_ok=True)
    here = os.path.join(os.path.realpath(at.parent), at.name)
    if here in link_chain(os.path.join(at.parent, target)):
        raise Die(
            f"{at} would become a link to itself ({target} leads back to it)",
            f"remove the links to {at} that lead there, or put the tool itself first on PATH",
        )
    new = at.with_name(f".{at.name}.{os.getpid()}")
    os.symlink(str(target), new)
    os.replace(new, at)


def check_installed(env: Env, name: str) -> None:
    """NAME in $LL_TOOLS/bin is compatible, or Die."""
    if not compatible(env, name, tool_version(name, str(env.bin / name))):
        raise Die(f"{name} {env.pinned(name)} did not install", f"read the step log in {env.logs}")


def ensure(env: Env, name: str) -> str:
    """NAME linked into $LL_TOOLS/bin from where tool_source() says; "build VERSION DIR" (nothing linked)
    when it is to be built with Go into DIR, else ""."""
    version = env.pinned(name)
    folder = env.cache / f"{name}-{version}" / "bin"
    how = tool_source(env, name)
    env.bin.mkdir(parents=True, exist_ok=True)
    if how[0] == "path":
        if how[1] != str(env.bin / name):
            link(how[1], env.bin / name)
        env.log(f"{name} {how[2]}: {how[1]}")
    elif how[0] == "cache":
        link(how[1], env.bin / name)
        env.log(f"{name} {version}: {how[1]}{not_used(env, name)}")
    elif how[0] == "download":
        env.logs.mkdir(parents=True, exist_ok=True)
        log_file = env.logs / f"download-{name}-{version}.log"
        env.log(f"{name} {version}: downloading {how[1]} (log: {log_file}){not_used(env, name)}")
        lines = []
        with open(log_file, "w") as out:
            ok = download_tool(env, name, folder, lambda line: (lines.append(line), print(line, file=out, flush=True)))
        if ok:
            link(folder / name, env.bin / name)
            env.log(f"{name} {version}: downloaded into {folder}, SHA-256 verified")
        elif env.downloads == "auto":
            env.log(f"{name} {version}: the download failed ({lines[-1]}); building it with Go")
            return f"build {version} {folder}"
        else:
            print("\n".join(lines[-5:]), file=sys.stderr)
            raise Die(
                f"could not download {name} {version} from {how[1]}",
                f"put {name} {version} (or a compatible one: see compatible() in scripts/libexec/tools.py) "
                "on PATH, or set LIVENESS_LAB_DOWNLOAD_MIRROR",
            )
    else:
        return f"build {version} {folder}"
    check_installed(env, name)
    return ""


def built(env: Env, name: str) -> None:
    """After the Go build into the cache folder: NAME linked into $LL_TOOLS/bin and checked."""
    version = env.pinned(name)
    folder = env.cache / f"{name}-{version}" / "bin"
    if name == "helm-unittest":
        helm_unittest_plugin(env, folder)
    link(folder / name, env.bin / name)
    env.log(f"{name} {version}: built into {folder}")
    check_installed(env, name)


def print_tool(env: Env, name: str) -> str:
    """How the user runs NAME as resolved here: the bare name when their own PATH finds the same binary,
    else its path under $LL_TOOLS/bin (so a printed command works as printed)."""
    theirs = shutil.which(name, path=env.user_path)
    if theirs and os.path.realpath(theirs) == os.path.realpath(env.bin / name):
        return name
    return str(env.bin / name)


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/libexec/tools.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["source", "describe", "ensure", "built", "print", "download"])
    parser.add_argument("name", choices=TOOLS)
    parser.add_argument("--into", type=Path, help="download: the folder NAME goes into")
    parser.add_argument("--platform", help="download: OS/ARCH, as linux/amd64 (default this machine's)")
    args = parser.parse_args(argv)
    if (args.command == "download") != bool(args.into) or (args.platform and args.command != "download"):
        parser.error("--into DIR goes with download, and download needs it; --platform only with download")
    if args.platform and not re.fullmatch(r"(linux|darwin)/(amd64|arm64)", args.platform):
        parser.error(f"--platform is OS/ARCH, one of linux or darwin and amd64 or arm64, as linux/amd64 (it is '{args.platform}')")
    env = Env()
    if args.platform:
        env.os, env.arch = args.platform.split("/")
    try:
        env.check()
        if args.command == "source":
            print(" ".join(tool_source(env, args.name)))
        elif args.command == "describe":
            print(describe_tool(env, args.name))
        elif args.command == "ensure":
            how = ensure(env, args.name)
            if how:
                print(how)
        elif args.command == "built":
            built(env, args.name)
        elif args.command == "download":
            lines = []
            if not download_tool(env, args.name, args.into, lambda line: (lines.append(line), env.log(line))):
                raise Die(
                    f"no {args.name} {env.pinned(args.name)} for {env.os}/{env.arch}: {lines[-1]}",
                    "let this machine reach the download (or LIVENESS_LAB_DOWNLOAD_MIRROR)",
                )
        else:
            print(print_tool(env, args.name))
    except Die as error:
        print(f"error: {error}\n  fix: {error.fix}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
