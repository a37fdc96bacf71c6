"""Where the release is, one source: bash's (scripts/lib/common.sh) and Python's defaults agree, the
wrappers hand all three to Python, the flags win over the environment, and nothing reads them as it is
imported (a value set after the import is the one used)."""

import subprocess

from conftest import REPO

from liveness_lab.base import coordinates, kube, variants


def bash(script: str, env=None) -> str:
    return subprocess.run(
        ["bash", "-c", f'. "{REPO}/scripts/lib/common.sh"; {script}'], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


def test_bash_and_python_have_the_same_defaults():
    assert bash('echo "$LL_KUBE_CONTEXT $LL_NAMESPACE $LL_RELEASE"').split() == [
        coordinates.DEFAULT_CONTEXT,
        coordinates.DEFAULT_NAMESPACE,
        coordinates.DEFAULT_RELEASE,
    ]


def test_the_wrappers_hand_all_three_to_python(tmp_path):
    # exec_liveness_lab with a python that prints what it was given (--help: nothing is installed first).
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "$LIVENESS_LAB_KUBE_CONTEXT $LIVENESS_LAB_NAMESPACE $LIVENESS_LAB_RELEASE"\n')
    fake.chmod(0o755)
    handed = f'. "$LL_LIB/venv.sh"; LL_VENV={tmp_path}/none LIVENESS_LAB_PYTHON={fake} exec_liveness_lab demo.sh demo --help'
    assert bash(handed, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}).split() == [
        "kind-liveness-lab",
        "liveness-lab",
        "liveness-lab",
    ]
    mine = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LIVENESS_LAB_KUBE_CONTEXT": "ctx",
        "LIVENESS_LAB_NAMESPACE": "team-a",
        "LIVENESS_LAB_RELEASE": "bob",
    }
    assert bash(handed, env=mine).split() == ["ctx", "team-a", "bob"]


def test_the_flags_win_over_the_environment_which_wins_over_the_defaults():
    environ = {"LIVENESS_LAB_NAMESPACE": "team-a"}
    assert coordinates.hand_on(environ, release_name="bob") == coordinates.Coordinates("kind-liveness-lab", "team-a", "bob")
    assert environ == {"LIVENESS_LAB_KUBE_CONTEXT": "kind-liveness-lab", "LIVENESS_LAB_NAMESPACE": "team-a", "LIVENESS_LAB_RELEASE": "bob"}
    assert not coordinates.read(environ).is_kind_default() and coordinates.read({}).is_kind_default()


def test_a_pod_named_by_an_event_is_its_own_variants_though_another_variants_name_is_a_prefix_of_it(monkeypatch):
    """An event names only the pod: liveness-lab-servlet-async-... starts with liveness-lab-servlet- too, and
    its Unhealthy events counted for servlet made servlet-async look free of them (the lab's run of
    servlet-dependency-in-liveness found it)."""
    monkeypatch.delenv("LIVENESS_LAB_RELEASE", raising=False)
    assert variants.variant_of_pod("liveness-lab-servlet-async-6c9d84b7b5-shj4d") == "servlet-async"
    assert variants.variant_of_pod("liveness-lab-servlet-virtual-7f6c865b98-v5w6f") == "servlet-virtual"
    assert variants.variant_of_pod("liveness-lab-servlet-5d8b9c7f4d-b5qxg") == "servlet"
    assert kube.event_record({"involvedObject": {"name": "liveness-lab-servlet-async-6c9d84b7b5-shj4d"}})["variant"] == "servlet-async"


def test_the_release_is_read_when_used_not_at_import(monkeypatch):
    pod = "bob-liveness-lab-blocking-846598dd46-tgcq2"  # release bob's blocking pod (helm's fullname)
    monkeypatch.delenv("LIVENESS_LAB_RELEASE", raising=False)
    assert variants.variant_of_pod(pod) is None
    monkeypatch.setenv("LIVENESS_LAB_RELEASE", "bob")  # after the import
    assert variants.variant_of_pod(pod) == "blocking"
    # the Service of release bob, named with helm's fullname as the chart names it
    assert variants.target_host("blocking", {"LIVENESS_LAB_RELEASE": "bob"}) == "http://bob-liveness-lab-blocking:8080"
