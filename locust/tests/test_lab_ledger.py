"""The lab's ledger (lab/ledger.py): a prediction's version is the digest of what decides a run and its
judgement, not of its prose; every judged run is kept as a small record; a run counts for its version only
when the scenario file was committed as it ran (real git, in a scratch repository); an edited prediction
starts at 0 of 0 and the earlier version keeps its runs under its own digest."""

import dataclasses
import json
import subprocess

import pytest
from conftest import FIXTURES

from liveness_lab.lab import __main__ as cli
from liveness_lab.lab import catalogue, judge, ledger


def scenario(name="baseline"):
    return next(s for s in catalogue.load_catalogue() if s.name == name)


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A scratch git checkout holding a copy of the baseline's file, committed."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.email", "lab@example.invalid")
    git(path, "config", "user.name", "lab")
    (path / "baseline.yaml").write_text(scenario().path.read_text())
    git(path, "add", "baseline.yaml")
    git(path, "commit", "-q", "-m", "baseline")
    return path


def test_the_digest_follows_what_decides_a_run_and_not_the_prose():
    s = scenario()
    assert len(s.digest) == 12 and s.digest == scenario().digest
    assert dataclasses.replace(s, lesson="other words", setting="a diary", title="T", sources=[]).digest == s.digest
    edited = {**s.predict, "reactive": {**s.predict["reactive"], "failures": "<=5"}}
    assert dataclasses.replace(s, predict=edited).digest != s.digest
    assert dataclasses.replace(s, load={**s.load, "users": 21}).digest != s.digest
    assert len({x.digest for x in catalogue.load_catalogue()}) == len(catalogue.load_catalogue())


def test_a_run_counts_only_where_its_prediction_was_committed(repo):
    path, head = repo / "baseline.yaml", git(repo, "rev-parse", "--short", "HEAD")
    assert ledger.committed(path, head) is True
    path.write_text(path.read_text() + "# an edit not committed\n")
    assert ledger.committed(path, head) is False
    (repo / "new.yaml").write_text("title: x\n")
    assert ledger.committed(repo / "new.yaml", head) is False  # not tracked
    assert ledger.committed(path, None) is None and ledger.committed(path, "unknown") is None
    assert ledger.committed(repo.parent / "outside.yaml", head) is None  # not a checkout


def test_a_judged_run_is_kept_as_one_small_record_and_an_edited_prediction_starts_at_0_of_0(repo, tmp_path):
    s = dataclasses.replace(scenario(), path=repo / "baseline.yaml")
    result = judge.judge_scenario(s, FIXTURES / "lab-baseline")
    result.commit = git(repo, "rev-parse", "--short", "HEAD")  # as run.json records the clone's
    book = tmp_path / "ledger"
    first = ledger.add(result, s, book)
    second = ledger.add(result, s, book)  # the same run twice: a second file, never an overwrite
    assert first != second and first.parent == book / "baseline"
    # The record and its recording: well under 50 KiB together, and the run judged again from it alone.
    recording = first.with_suffix(ledger.ARCHIVE)
    assert first.stat().st_size + recording.stat().st_size < 50 * 1024, recording.stat().st_size
    assert recording.read_bytes() == second.with_suffix(ledger.ARCHIVE).read_bytes()  # the same files, the same bytes
    again = ledger.rejudge(first, s)
    assert (again.outcome, [x.text() for x in again.lines]) == (result.outcome, [x.text() for x in result.lines])
    rec = json.loads(first.read_text())
    assert (rec["digest"], rec["committed"], rec["outcome"], rec["kubernetes"]) == (s.digest, True, "held", result.kubernetes)
    assert rec["busyPct"] == pytest.approx(86, abs=1) and rec["startedUtc"].endswith("Z")
    assert {(x["variant"], x["key"], x["state"]) for x in rec["lines"]} >= {
        ("blocking", "restarts", "held"),
        ("reactive", "restarts", "held"),
    }
    current, earlier = ledger.versions(ledger.load(book), s)
    assert current.text().startswith("held 2 of 2 since ") and earlier == []
    # The prediction edited: a new version, 0 of 0; the two runs stay under the old digest.
    edited = dataclasses.replace(s, predict={**s.predict, "reactive": {**s.predict["reactive"], "failures": "<=5"}})
    current, earlier = ledger.versions(ledger.load(book), edited)
    assert current.text() == "0 of 0" and [(v.digest, v.text()[:12]) for v in earlier] == [(s.digest, "held 2 of 2 ")]
    # A run of an uncommitted prediction is kept and shown, counted for nothing.
    (repo / "baseline.yaml").write_text((repo / "baseline.yaml").read_text() + "# uncommitted\n")
    ledger.add(result, s, book)
    current, _ = ledger.versions(ledger.load(book), s)
    assert "held 2 of 2 (1 run(s) of an uncommitted prediction, not counted)" in current.text()
    # Every run judged again from its recording, as the command does: the same as recorded.
    lines, differ = ledger.rejudge_all(book, [s])
    assert differ == 0 and len(lines) == 3 and all(x.endswith("held, now held: the same") for x in lines), lines
    # A record that its recording no longer gives (one of its lines edited here) is shown, and counted.
    rec = json.loads(first.read_text())
    rec["lines"][3]["measured"] = "edited"
    first.write_text(json.dumps(rec))
    lines, differ = ledger.rejudge_all(book, [s])
    assert differ == 1 and any("DIFFERENT" in x for x in lines) and any("was: " in x and "edited" in x for x in lines)


def test_the_command_line_prints_each_scenarios_tally_and_its_race_against_its_band(tmp_path, capsys):
    assert cli.main(["ledger", "--ledger", str(tmp_path), "--only", "baseline,cascade"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"baseline [{scenario().digest}]: 0 of 0",
        f"cascade [{scenario('cascade').digest}]: 0 of 0",
        "  race blocking restarted_pods: held in 0 of 0 runs, predicted 75-100 %: judged at 10 runs",
    ]


def test_the_documents_tables_and_figures_are_generated_from_the_ledger_and_a_difference_is_caught(repo, tmp_path, capsys):
    s = dataclasses.replace(scenario(), path=repo / "baseline.yaml")
    result = judge.judge_scenario(s, FIXTURES / "lab-baseline")
    result.commit = git(repo, "rev-parse", "--short", "HEAD")
    book = tmp_path / "ledger"
    ledger.add(result, s, book)
    # A second run in which the reactive pod was killed: not held, its measured value in bold.
    lines = [
        dataclasses.replace(x, measured="2", state="not held") if (x.variant, x.key) == ("reactive", "restarts") else x
        for x in result.lines
    ]
    ledger.add(dataclasses.replace(result, lines=lines, outcome=judge.NOT_HELD, started=result.started + 600), s, book)
    docs = ledger.blocks(ledger.load(book), [s, scenario("tcp-probe")])
    row = next(x for x in docs[ledger.LAB_DOC]["remedies-webflux"] if x.startswith("| [baseline]"))
    assert f"| `{s.digest}` | held 1 of 2 (1 not held) since " in row
    assert "reactive restarts 0: 0 / **2**" in row and "blocking restarts >=1: 2 in each" in row
    tcp = next(x for x in docs[ledger.LAB_DOC]["remedies-webflux"] if x.startswith("| [tcp-probe]"))
    assert "| not run yet |" in tcp
    readme = " ".join(" ".join(docs[ledger.README]["summary"]).split())
    assert "0 of 2 scenarios held in every run that decided, 1 did not hold in a run or more: baseline (not held in 1 of 2)," in readme
    assert "1 not run yet under their current prediction" in readme
    # A block is replaced between its two lines, and a document without them is an error naming it.
    begin, end = ledger.BEGIN.format(name="summary"), ledger.END.format(name="summary")
    text = f"# Doc\n{begin}\nold figures\n{end}\nafter\n"
    assert ledger.fill(text, "summary", ["new"], tmp_path / "doc.md") == f"# Doc\n{begin}\nnew\n{end}\nafter\n"
    with pytest.raises(ValueError, match="doc.md: needs one line"):
        ledger.fill("# Doc\n", "summary", ["new"], tmp_path / "doc.md")
    # The command: --check against another ledger shows the difference, exits 1 and writes nothing.
    before = ledger.README.read_text()
    assert cli.main(["ledger", "--ledger", str(book), "--check"]) == 1
    out = capsys.readouterr()
    assert "README.md from the ledger" in out.out and "ledger --write" in out.err
    assert ledger.README.read_text() == before
