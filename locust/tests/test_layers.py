"""The packages of liveness_lab stand in layers: each imports only the packages below it, never one above
or beside it, and no modules import each other in a circle. The import graph is read with ``ast`` from the
files themselves (every import, also those inside functions); the checker is tried on planted back
imports first, so a green run means the tree holds, not that the checker sees nothing.

    __main__, cli          the command line (python -m liveness_lab demo|lab|bench|workshop)
    lab                    the lab: scenarios run as scripted runs
    demo | workshop        the scripted run | the Workshop tab's steps and checks (in the Locust master)
    report | bench | locust_ext   a run's evidence | the benchmark | what Locust loads
    base                   what every package reads

locustfile.py, Locust's entry, may import only what the Locust image ships: base, locust_ext, report and
workshop, and every module of those only the same four (the lab's scenario files go in as data, never its
code).
"""

import ast
import shutil
from pathlib import Path

import pytest

LOCUST_DIR = Path(__file__).resolve().parents[1]
PACKAGE = "liveness_lab"
# package -> its floor; a package imports only packages on lower floors (and its own modules).
FLOORS = {"base": 0, "locust_ext": 1, "report": 1, "bench": 1, "demo": 2, "workshop": 2, "lab": 3, "yours": 3, "": 4}
# What the Locust image ships (locust/Dockerfile), so all the locustfile may import.
IMAGE = {"base", "locust_ext", "report", "workshop"}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, module: str, modules) -> set[str]:
    """The liveness_lab modules PATH imports (absolute names, among MODULES), wherever in the file the
    import stands: ``from pkg import name`` imports pkg.name when that is a module, else pkg."""
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in found if m in modules}


def graph(root: Path) -> dict[str, set[str]]:
    """module -> the modules of the tree at ROOT (the folder holding liveness_lab/) it imports."""
    files = {module_name(p, root): p for p in sorted((root / PACKAGE).rglob("*.py"))}
    return {mod: imports_of(path, mod, files) - {mod} for mod, path in files.items()}


def package_of(module: str) -> str:
    """The package of MODULE under liveness_lab ('' for liveness_lab's own modules: the command line)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in FLOORS) else ""


def back_imports(g: dict[str, set[str]]) -> list[str]:
    """Every import that runs up or sideways between packages, as 'a -> b (why)'."""
    wrong = []
    for mod, targets in sorted(g.items()):
        src = package_of(mod)
        for t in sorted(targets):
            dst = package_of(t)
            if t == PACKAGE and src:
                wrong.append(f"{mod} -> {t} (liveness_lab's own __init__ is the top: import from a package)")
            elif src != dst and src in FLOORS and FLOORS.get(dst, 99) >= FLOORS[src]:
                wrong.append(
                    f"{mod} -> {t} ({src or 'the command line'} on floor {FLOORS[src]} imports "
                    f"{dst or 'the command line'} on floor {FLOORS.get(dst)})"
                )
    return wrong


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The import circles among modules (each found once, as the path that closes it)."""
    found, state = [], {}

    def visit(m, path):
        state[m] = "open"
        for t in sorted(g.get(m, ())):
            if state.get(t) == "open":
                found.append(path[path.index(t) :] + [t])
            elif t not in state:
                visit(t, path + [t])
        state[m] = "done"

    for m in sorted(g):
        if m not in state:
            visit(m, [m])
    return found


def test_every_package_imports_only_below_itself():
    g = graph(LOCUST_DIR)
    assert {package_of(m) for m in g} == set(FLOORS), "a package with no floor: add it to FLOORS and the docstring"
    assert back_imports(g) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(graph(LOCUST_DIR)) == []


def reached(g: dict[str, set[str]], start: set[str]) -> set[str]:
    """Every module START imports, directly or through others."""
    seen, todo = set(), list(start)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += g.get(m, ())
    return seen


def test_the_locustfile_imports_only_what_the_locust_image_ships():
    modules = graph(LOCUST_DIR)
    used = imports_of(LOCUST_DIR / "locustfile.py", "locustfile", modules)
    assert {package_of(m) for m in used} <= IMAGE
    # Through any module it imports, at any depth: the image would fail to start on the first one missing.
    assert {package_of(m) for m in reached(modules, used)} <= IMAGE, sorted(m for m in reached(modules, used) if package_of(m) not in IMAGE)
    dockerfile = (LOCUST_DIR / "Dockerfile").read_text()
    copied = {p for p in FLOORS if p and f"COPY liveness_lab/{p}/ " in dockerfile}
    assert copied == IMAGE, "the Dockerfile copies other packages than the locustfile needs"
    dockerignore = (LOCUST_DIR / ".dockerignore").read_text().splitlines()
    assert {p for p in FLOORS if p and f"!liveness_lab/{p}/" in dockerignore} == IMAGE
    # The lab goes in as its scenario files only (the workshop's steps read their predictions): no code.
    assert "!liveness_lab/lab/scenarios/*.yaml" in dockerignore
    assert not [line for line in dockerfile.splitlines() if line.startswith("COPY liveness_lab/lab/") and "scenarios/*.yaml" not in line]


def test_the_check_of_the_image_catches_a_module_it_would_miss(tmp_path):
    shutil.copytree(LOCUST_DIR / PACKAGE, tmp_path / PACKAGE)
    with open(tmp_path / PACKAGE / "workshop" / "check.py", "a") as f:
        f.write("def later():\n    from liveness_lab.bench import report\n")  # sideways: bench is not in the image
    g = graph(tmp_path)
    assert any(package_of(m) == "bench" for m in reached(g, {"liveness_lab.workshop.tab"}))


@pytest.mark.parametrize(
    "planted, wrong",
    [
        ("base/kube.py", "from liveness_lab.demo import release\n"),  # up two floors
        ("report/verdict.py", "from liveness_lab.bench.run import ROOT\n"),  # sideways
        ("locust_ext/pods_tab.py", "def later():\n    from liveness_lab.report import build\n"),  # sideways, in a function
        ("demo/run.py", "from .. import cli\n"),  # up to the command line
        ("base/style.py", "import liveness_lab.lab.judge\n"),  # plain import
    ],
)
def test_the_check_catches_a_planted_back_import(tmp_path, planted, wrong):
    shutil.copytree(LOCUST_DIR / PACKAGE, tmp_path / PACKAGE)
    with open(tmp_path / PACKAGE / planted, "a") as f:
        f.write(wrong)
    found = back_imports(graph(tmp_path))
    assert len(found) == 1 and found[0].startswith(f"{PACKAGE}.{planted[:-3].replace('/', '.')} -> "), found


def test_the_check_catches_a_planted_circle(tmp_path):
    shutil.copytree(LOCUST_DIR / PACKAGE, tmp_path / PACKAGE)
    with open(tmp_path / PACKAGE / "base" / "probes.py", "a") as f:
        f.write("from .kube import Kube\n")  # kube imports probes
    assert ["liveness_lab.base.kube", "liveness_lab.base.probes", "liveness_lab.base.kube"] in circles(graph(tmp_path))
