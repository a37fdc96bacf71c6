"""scripts/libexec/runc_wrapper.py, the runc in front of the real one on hosts without CAP_SYS_RESOURCE:
for create/run it edits <bundle>/config.json's .process, for exec the --process file (CAP_SYS_RESOURCE
dropped from every capability set, an oomScoreAdj below its own raised to its own, the mode kept), then
execs the real runc with the same arguments; where the capability is in the bounding set it changes
nothing. Each test runs the wrapper in a process of its own, as containerd's shim does, with its three
probes of the machine pointed at files here (the real runc's places, /proc/self/status,
/proc/self/oom_score_adj) and a fake real runc that records its argv and exits.
"""

import copy
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

WRAPPER = Path(__file__).resolve().parents[1] / "libexec" / "runc_wrapper.py"

# The capability sets and oomScoreAdj of a privileged pod sandbox's spec, shaped as containerd writes it
# (`ctr oci spec`, with the privileged container's capabilities and kubelet's -998 for a sandbox).
PRIVILEGED_CAPS = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_KILL",
    "CAP_NET_ADMIN",
    "CAP_SYS_ADMIN",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_AUDIT_WRITE",
]
PROCESS = {
    "user": {"uid": 0, "gid": 0},
    "args": ["/pause"],
    "cwd": "/",
    "capabilities": {name: list(PRIVILEGED_CAPS) for name in ("bounding", "effective", "permitted")},
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": False,
    "oomScoreAdj": -998,
}
SPEC = {
    "ociVersion": "1.2.1",
    "process": PROCESS,
    "root": {"path": "rootfs"},
    "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"}],
    "linux": {"namespaces": []},
}
WITHOUT = [cap for cap in PRIVILEGED_CAPS if cap != "CAP_SYS_RESOURCE"]
# /proc/self/status's CapBnd: this sandboxed host's (bit 24 clear) and a full one.
LACKING, FULL = "000001fffeffffff", "000001ffffffffff"

DRIVER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("runc_wrapper", sys.argv[1])
wrapper = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wrapper)
probes = json.loads(sys.argv[2])
wrapper.REAL_RUNCS = tuple(probes["runcs"])
wrapper.PROC_STATUS = probes["status"]
wrapper.PROC_OOM_SCORE_ADJ = probes["oom"]
sys.argv = [probes["argv0"], *sys.argv[3:]]
wrapper.main()
"""


class Host:
    """A machine for the wrapper: its bounding set, its own oom_score_adj, a fake real runc."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.runc = tmp / "sbin" / "runc"
        self.calls = tmp / "calls.json"
        self.runc.parent.mkdir()
        self.runc.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv, open({str(self.calls)!r}, 'w'))\n")
        self.runc.chmod(0o755)
        self.status = tmp / "status"
        self.oom = tmp / "oom_score_adj"
        self.set(cap_bnd=LACKING, own_oom=0)
        self.runcs = [str(self.runc)]
        self.argv0 = str(WRAPPER)

    def set(self, cap_bnd: str, own_oom: int) -> None:
        self.status.write_text(f"Name:\tpython3\nCapInh:\t0000000000000000\nCapBnd:\t{cap_bnd}\nCapAmb:\t0\n")
        self.oom.write_text(f"{own_oom}\n")

    def wrapper(self, *args: str) -> subprocess.CompletedProcess:
        self.calls.unlink(missing_ok=True)
        probes = dict(runcs=self.runcs, status=str(self.status), oom=str(self.oom), argv0=self.argv0)
        return subprocess.run(
            [sys.executable, "-I", "-c", DRIVER, str(WRAPPER), json.dumps(probes), *args],
            capture_output=True,
            text=True,
            cwd=self.tmp,
            timeout=30,
        )

    def runc_argv(self) -> list:
        """What the real runc was called with (argv[0] the real runc), or None if it was not called."""
        return json.loads(self.calls.read_text()) if self.calls.exists() else None


@pytest.fixture
def host(tmp_path):
    return Host(tmp_path)


def bundle(tmp: Path, spec: dict = SPEC, mode: int = 0o644) -> Path:
    folder = tmp / "bundle"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(spec, indent=2))
    (folder / "config.json").chmod(mode)
    return folder


def process_file(tmp: Path, process: dict = PROCESS, mode: int = 0o600) -> Path:
    path = tmp / "process.json"
    path.write_text(json.dumps(process))
    path.chmod(mode)
    return path


def ran(host: Host, done: subprocess.CompletedProcess, args: tuple) -> None:
    assert done.returncode == 0, done.stderr
    assert host.runc_argv() == [str(host.runc), *args], "the real runc did not get the same arguments"


@pytest.mark.parametrize("form", ["--bundle X", "-b X", "--bundle=X", "cwd"])
@pytest.mark.parametrize("command", ["create", "run"])
def test_create_and_run_edit_the_bundles_process(host, command, form):
    folder = bundle(host.tmp)
    where = {"--bundle X": ["--bundle", str(folder)], "-b X": ["-b", str(folder)], "--bundle=X": [f"--bundle={folder}"], "cwd": []}[form]
    if form == "cwd":
        host.tmp = folder  # no --bundle: runc's bundle is the current folder
    args = ("--root", "/run/containerd/runc/k8s.io", "--log", "/run/log.json", command, *where, "--pid-file", "/run/pid", "sandbox-id")
    ran(host, host.wrapper(*args), args)
    spec = json.loads((folder / "config.json").read_text())
    for name, caps in spec["process"]["capabilities"].items():
        assert caps == WITHOUT, f"{name}: {caps}"
    assert spec["process"]["oomScoreAdj"] == 0, "an oomScoreAdj below the wrapper's own was not raised"
    assert {k: v for k, v in spec.items() if k != "process"} == {k: v for k, v in SPEC.items() if k != "process"}
    assert {k: v for k, v in spec["process"].items() if k not in ("capabilities", "oomScoreAdj")} == {
        k: v for k, v in PROCESS.items() if k not in ("capabilities", "oomScoreAdj")
    }


@pytest.mark.parametrize("form", ["--process X", "-p X", "--process=X"])
def test_exec_edits_the_process_file(host, form):
    path = process_file(host.tmp)
    where = {"--process X": ["--process", str(path)], "-p X": ["-p", str(path)], "--process=X": [f"--process={path}"]}[form]
    args = ("--root", "/run/containerd/runc/k8s.io", "exec", "--detach", *where, "--pid-file", "/run/pid", "ctr-id")
    ran(host, host.wrapper(*args), args)
    process = json.loads(path.read_text())
    assert all(caps == WITHOUT for caps in process["capabilities"].values()), process["capabilities"]
    assert process["oomScoreAdj"] == 0
    assert process["args"] == PROCESS["args"]


def test_exec_leaves_a_bundle_in_the_current_folder_alone(host):
    folder = bundle(host.tmp)
    host.tmp = folder
    before = (folder / "config.json").read_text()
    args = ("exec", "--process", "/no/such/process.json", "ctr-id")
    ran(host, host.wrapper(*args), args)
    assert (folder / "config.json").read_text() == before


@pytest.mark.parametrize("command", ["create", "exec"])
def test_with_cap_sys_resource_nothing_changes(host, command):
    host.set(cap_bnd=FULL, own_oom=0)
    folder, path = bundle(host.tmp), process_file(host.tmp)
    before = (folder / "config.json").read_text(), path.read_text()
    args = (command, "--bundle", str(folder), "--process", str(path), "id")
    ran(host, host.wrapper(*args), args)
    assert ((folder / "config.json").read_text(), path.read_text()) == before


@pytest.mark.parametrize(
    "adj, own, want", [(None, -500, None), (-998, -500, -500), (-100, -500, -100), (-500, -500, -500), (500, 0, 500), (-998, 0, 0)]
)
def test_oom_score_adj_below_its_own_is_raised(host, adj, own, want):
    process = copy.deepcopy(PROCESS)
    if adj is None:
        del process["oomScoreAdj"]
    else:
        process["oomScoreAdj"] = adj
    host.set(cap_bnd=LACKING, own_oom=own)
    folder = bundle(host.tmp, dict(SPEC, process=process))
    ran(host, host.wrapper("create", "-b", str(folder), "id"), ("create", "-b", str(folder), "id"))
    assert json.loads((folder / "config.json").read_text())["process"].get("oomScoreAdj") == want


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o444])
def test_the_edited_file_keeps_its_mode(host, mode):
    folder = bundle(host.tmp, mode=mode)
    path = process_file(host.tmp, mode=mode)
    ran(host, host.wrapper("create", "-b", str(folder), "id"), ("create", "-b", str(folder), "id"))
    ran(host, host.wrapper("exec", "-p", str(path), "id"), ("exec", "-p", str(path), "id"))
    assert stat.S_IMODE((folder / "config.json").stat().st_mode) == mode
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert "CAP_SYS_RESOURCE" not in (folder / "config.json").read_text() + path.read_text()
    assert sorted(os.listdir(folder)) == ["config.json"], "a temporary file was left behind"


def test_the_first_command_word_is_the_command(host):
    """`runc exec ... run` execs: the process file is edited, the bundle in the current folder is not."""
    folder = bundle(host.tmp)
    host.tmp = folder
    path = process_file(folder.parent)
    before = (folder / "config.json").read_text()
    args = ("exec", "-p", str(path), "run")
    ran(host, host.wrapper(*args), args)
    assert (folder / "config.json").read_text() == before
    assert "CAP_SYS_RESOURCE" not in path.read_text()


def test_other_commands_edit_nothing(host):
    folder = bundle(host.tmp)
    before = (folder / "config.json").read_text()
    for args in (("start", "id"), ("delete", "--force", "id"), ("state", "id"), ("--version",)):
        ran(host, host.wrapper(*args, "--bundle", str(folder)), (*args, "--bundle", str(folder)))
    assert (folder / "config.json").read_text() == before


def test_it_never_runs_itself_as_the_real_runc(host, tmp_path):
    """Installed as /usr/local/sbin/runc with a link to it earlier in the list, it picks the next one."""
    link = tmp_path / "runc-link"
    link.symlink_to(WRAPPER)
    host.runcs = [str(link), str(tmp_path / "absent"), str(host.runc)]
    host.argv0 = str(link)
    ran(host, host.wrapper("--version"), ("--version",))


def test_no_real_runc_is_an_error_naming_the_places(host, tmp_path):
    host.runcs = [str(tmp_path / "absent")]
    done = host.wrapper("create", "id")
    assert done.returncode == 1
    assert host.runc_argv() is None
    assert "no real runc found" in done.stderr and str(tmp_path / "absent") in done.stderr


def test_a_broken_spec_is_an_error_and_runc_does_not_run(host):
    folder = bundle(host.tmp)
    (folder / "config.json").write_text("{not json")
    done = host.wrapper("create", "--bundle", str(folder), "id")
    assert done.returncode == 1 and host.runc_argv() is None
    assert "cannot edit the spec for runc create" in done.stderr, done.stderr


def test_runs_as_a_script_with_the_standard_library_only():
    """Its shebang (/usr/bin/python3 -IS: no site-packages) and the imports it makes before exec."""
    assert WRAPPER.read_text().startswith("#!/usr/bin/python3 -IS\n")
    assert os.access(WRAPPER, os.X_OK), "runc_wrapper.py is not executable"
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys, importlib.util as u; s = u.spec_from_file_location('w', sys.argv[1]); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); print('json' in sys.modules)",
            str(WRAPPER),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", "the wrapper imports json before it knows it has to edit a spec"
