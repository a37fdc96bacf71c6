"""The READMEs and docs/*.md stay honest: every script they name exists and answers --help, every option
they show for a script is one its --help lists, every LIVENESS_LAB_* setting they name is read by the
code, and every `--set` they show is a value the chart accepts (helm on PATH: scripts/test.sh docs puts
the pinned one there). Run by `scripts/test.sh docs`; no cluster needed.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "chart/README.md", REPO / "locust/README.md", *sorted((REPO / "docs").glob("*.md"))]
TEXT = "\n".join(doc.read_text() for doc in DOCS)
SCRIPTS = sorted(set(re.findall(r"scripts/[a-z-]*\.sh", TEXT)))
SETTINGS = sorted(set(re.findall(r"LIVENESS_LAB_[A-Z0-9_]*[A-Z0-9]", TEXT)))
SETS = sorted({s.rstrip(".") for s in re.findall(r"--set [^] `),;\n]*", TEXT)})
VERSIONS = dict(re.findall(r"^([A-Z_]+)=(\S*)", (REPO / "scripts/versions.env").read_text(), re.M))


def shown_options(script: str) -> list[str]:
    """Every --option shown right after SCRIPT on one line of the docs, up to the end of its command (a
    comment, a pipe, `&&` or `;`: `cluster-down.sh && cluster-up.sh --kubernetes-version 1.35`)."""
    runs = re.findall(re.escape(script) + r"(?: [^ #|&;`\n]*)*", TEXT)
    return sorted({option for run in runs for option in re.findall(r" (--[a-z-]*)", run)})


@pytest.fixture(scope="module")
def helps() -> dict:
    return {}


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_answers_help(script, helps):
    path = REPO / script
    assert path.is_file() and os.access(path, os.X_OK), f"{script}: named in the docs but not an executable script"
    # A time limit, so that a script that does not know --help cannot run its real job here.
    done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{script} --help exits {done.returncode}: {done.stderr}"
    helps[script] = done.stdout + done.stderr


@pytest.mark.parametrize("script,option", [(s, o) for s in SCRIPTS for o in shown_options(s)])
def test_shown_option_is_in_help(script, option, helps):
    if script not in helps:
        test_script_answers_help(script, helps)
    assert re.search(re.escape(option) + r"\b", helps[script]), f"{script} {option}: shown in the docs, not in its --help"


def code_files():
    for top in ("scripts", "locust", "chart"):
        for path in (REPO / top).rglob("*"):
            if path.suffix in (".sh", ".py", ".yaml", ".tpl") and "node_modules" not in path.parts and path != Path(__file__).resolve():
                yield path


# Comments and docstrings name settings without reading them: code is what is left of each line before a
# "#" (and Python's docstrings are left out below, as the first string of a file, class or function).
COMMENT = re.compile(r"(^|\s)#.*$", re.M)
DOCSTRING = re.compile(r'^\s*(?:[ru]?"""|[ru]?\'\'\'|\.\.\.).*?(?:"""|\'\'\')\s*$', re.M | re.S)


def read_sites(text: str, setting: str) -> bool:
    """SETTING is read in TEXT: as a quoted name (os.environ.get("X"), env_var="X", an env entry `name: X`)
    or expanded by a shell ($X, ${X...}), outside comments and docstrings."""
    code = COMMENT.sub("", DOCSTRING.sub("", text))
    return bool(re.search(rf"""["']{setting}["']|\$\{{?{setting}\b|name: {setting}\b""", code))


@pytest.fixture(scope="module")
def code() -> dict:
    return {path: path.read_text(errors="replace") for path in code_files()}


def test_a_setting_named_only_in_a_comment_or_a_docstring_is_not_read():
    text = '"""Reads LIVENESS_LAB_X."""\n# LIVENESS_LAB_Y is a setting\nvalue = 1  # LIVENESS_LAB_Z\n'
    assert not any(read_sites(text, s) for s in ("LIVENESS_LAB_X", "LIVENESS_LAB_Y", "LIVENESS_LAB_Z"))
    assert read_sites('x = os.environ.get("LIVENESS_LAB_X", "3")', "LIVENESS_LAB_X")
    assert read_sites(': "${LIVENESS_LAB_X:-1}"', "LIVENESS_LAB_X") and read_sites("- name: LIVENESS_LAB_X", "LIVENESS_LAB_X")


@pytest.mark.parametrize("setting", SETTINGS)
def test_setting_is_read_by_the_code(setting, code):
    readers = [path.relative_to(REPO) for path, text in code.items() if read_sites(text, setting)]
    assert readers, f"{setting}: named in the docs, read by no script, module or chart template"


@pytest.mark.parametrize("set_value", SETS)
def test_chart_accepts_shown_set(set_value):
    done = subprocess.run(
        [
            "helm",
            "template",
            "liveness-lab",
            REPO / "chart",
            "--namespace",
            "liveness-lab",
            "--kube-version",
            VERSIONS["KUBERNETES_VERSION"],
            *set_value.split(),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"the chart refuses {set_value}, shown in the docs: {done.stderr}"


def test_the_docs_show_what_these_tests_read():
    """A pattern that stopped matching (the docs reworded) would leave the tests above with nothing to check."""
    assert len(SCRIPTS) >= 5 and len(SETTINGS) >= 5 and len(SETS) >= 3, (SCRIPTS, SETTINGS, SETS)


def test_the_labs_tables_and_the_readmes_figures_are_what_the_ledger_generates():
    """docs/lab.md's tables and the README's lab figures are generated from the ledger (locust/ledger/):
    `python -m liveness_lab.lab ledger --check` shows where a document differs, and the fix is `--write`."""
    done = subprocess.run(
        [sys.executable, "-m", "liveness_lab.lab", "ledger", "--check"], cwd=REPO / "locust", capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
