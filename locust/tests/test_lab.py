"""The lab (issue 13): the scenario catalogue loads and every mistake names its file and field; the judge
takes recorded runs (fixtures/run-*) against scenario predictions; the matrix is built from judged runs
and is self-contained; scripts/lab.sh's command line answers as lab.sh reads it."""

import copy
import json
import re
import shutil
import textwrap

import pytest
from conftest import FIXTURES, reactive_killed_like_blocking

from liveness_lab.base import scenario as scenario_file
from liveness_lab.base.exits import SetupError
from liveness_lab.lab import __main__ as cli
from liveness_lab.lab import catalogue, judge, matrix
from liveness_lab.report import settings, verdict
from liveness_lab.report.facts import load_run, run_facts
from liveness_lab.report.predictions import HELD, NOT_HELD, VERDICT, Evidence, count_state, judge_line

GOOD = """\
title: A test scenario
lesson: What it teaches.
sources: [somewhere#1]
values: {variants: {blocking: {probes: {liveness: {type: tcpSocket}}}}}
variants: [blocking, reactive]
load: {users: 5, hold: 30, rate: 0.5}
predict:
  blocking: {restarts: ">=1", kill_reason: liveness, kill_timing: from-settings, ready: not-throughout}
  reactive: {restarts: 0, failures: 0, unhealthy: "<=1", recovers: true, throughput: offered}
"""


def write(tmp_path, text, name="test-one.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_catalogue_loads_in_order_with_the_quick_two_for_ci():
    scenarios = catalogue.load_catalogue()
    names = [s.name for s in scenarios]
    assert names[:2] == ["baseline", "servlet"] and len(names) >= 9
    assert [s.name for s in catalogue.load_catalogue(quick=True)] == ["baseline", "servlet"]
    assert [s.name for s in catalogue.load_catalogue(only=["cascade", "baseline"])] == ["baseline", "cascade"]
    for s in scenarios:  # every swarmed variant has a prediction, every file names its sources
        assert set(s.predict) <= set(s.variants) and s.sources, s.name


def test_a_group_narrows_the_catalogue_and_lab_help_counts_what_is_in_it():
    """--group storms | remedies | webflux | servlet, and every count and estimate `scripts/lab.sh --help`
    states is the catalogue's (a new scenario file fails this until the help says so)."""
    from liveness_lab import cli as top_cli

    every = catalogue.load_catalogue()
    storms, remedies = catalogue.load_catalogue(group="storms"), catalogue.load_catalogue(group="remedies")
    names = {s.name for s in storms}, {s.name for s in remedies}
    assert names[0] | names[1] == {s.name for s in every} and not names[0] & names[1]
    assert "backoff-cap" in {s.name for s in storms} and "baseline" in {s.name for s in remedies}
    servlet = catalogue.load_catalogue(group="servlet")
    assert "servlet-dependency-in-liveness" in {s.name for s in servlet} and "baseline" not in {s.name for s in servlet}
    assert catalogue.load_catalogue(quick=True, group="servlet") == [s for s in servlet if s.quick]
    with pytest.raises(scenario_file.ScenarioError, match="no group nope; there are storms, remedies"):
        catalogue.load_catalogue(group="nope")

    lab = next(a for a in top_cli.parser()._subparsers._group_actions[0].choices.values() if a.prog.endswith("lab.sh"))
    help_text = " ".join(lab.format_help().split())

    def minutes(scenarios):
        return round(catalogue.estimate_s(scenarios) / 60)

    webflux = catalogue.load_catalogue(group="webflux")
    both = [s for s in every if s not in webflux and s not in servlet]
    assert not [s for s in remedies if s in both], "a remedy on both stacks, which the help does not count"
    stated = re.search(
        r"The catalogue: (\d+) scenarios, (\d+) remedies \((\d+) on WebFlux, (\d+) on Tomcat\) and (\d+) restart storms "
        r"\((\d+) on WebFlux, (\d+) on Tomcat, (\d+) on both\)",
        help_text,
    ).groups()
    counts = (every, remedies, [s for s in remedies if s in webflux], [s for s in remedies if s in servlet], storms)
    counts += ([s for s in storms if s in webflux], [s for s in storms if s in servlet], [s for s in storms if s in both])
    assert tuple(map(int, stated)) == tuple(map(len, counts))
    in_place = [s for s in every if any(a.in_place for a in s.actions)]
    anywhere = [s for s in every if s not in in_place]
    default_cap = [s for s in anywhere if s.kubelet.get("maxContainerRestartPeriod", 300) == 300]
    assert re.search(r"A whole pass about (\d+) minutes here \((\d+) on a cluster", help_text).groups() == (
        str(minutes(default_cap)),
        str(minutes(anywhere)),
    )
    if in_place:  # what a whole pass skips where the API server refuses probe changes in running pods
        assert f"{', '.join(s.name for s in in_place)}, {minutes(in_place)} more, runs only where the API server takes" in help_text
    assert (
        f"the {len(storms)} restart storms (~{minutes(storms)} min), the {len(remedies)} remedies (~{minutes(remedies)} min)" in help_text
    )
    assert f"webflux {len(webflux)}, ~{minutes(webflux)} min; servlet {len(servlet)}, ~{minutes(servlet)} min" in help_text
    quick = catalogue.load_catalogue(quick=True)
    assert f"({' and '.join(s.name for s in quick)}: CI's two, ~{minutes(quick)} min)" in help_text


def test_a_good_file_loads_with_load_defaults_and_gives_the_demo_its_options(tmp_path):
    from liveness_lab.lab import runner

    s = scenario_file.load_scenario(write(tmp_path, GOOD))
    assert s.name == "test-one" and s.values["variants"]["blocking"]["probes"]["liveness"]["type"] == "tcpSocket"
    assert s.load == {"users": 5, "rate": 0.5, "latency_ms": 1000, "ramp": 10, "hold": 30, "quiet": 60, "timeout_s": 10, "where": "auto"}
    o = runner.demo_options(s, tmp_path / "run")
    assert (o.variants, o.users, o.rate, o.latency_ms, o.ramp, o.hold, o.quiet) == (["blocking", "reactive"], 5, 0.5, 1000, 10, 30, 60)
    (tmp_path / "slow").mkdir()
    slow = scenario_file.load_scenario(write(tmp_path / "slow", GOOD.replace("hold: 30", "hold: 30, timeout_s: 45")))
    assert runner.demo_options(slow, tmp_path / "slow-run").request_timeout_s == 45


def test_a_load_the_host_cannot_open_runs_in_the_cluster_and_a_contradicting_load_option_is_refused(tmp_path, monkeypatch):
    from liveness_lab.lab import runner

    big = scenario_file.load_scenario(write(tmp_path, GOOD.replace("hold: 30", "hold: 30, where: cluster")))
    assert runner.demo_options(big, tmp_path / "run").load == "cluster"  # the lab's default, auto
    assert runner.demo_options(big, tmp_path / "run").load_why == "scenario test-one's load.where"  # what the run says
    assert runner.demo_options(big, tmp_path / "run", "cluster").load == "cluster"
    with pytest.raises(SetupError, match=r"test-one runs its load with --load cluster \(its load.where\), not host"):
        runner.demo_options(big, tmp_path / "run", "host")
    monkeypatch.setattr(catalogue, "load_catalogue", lambda **_: [big])
    with pytest.raises(SetupError, match="runs its load with --load cluster"):
        runner.Lab(runner.LabOptions(load="host")).choose()  # said before the cluster is touched
    assert runner.Lab(runner.LabOptions()).choose() == [big]
    (tmp_path / "plain").mkdir()
    plain = scenario_file.load_scenario(write(tmp_path / "plain", GOOD))
    assert runner.demo_options(plain, tmp_path / "run", "host").load == "host"
    assert runner.demo_options(plain, tmp_path / "run", "host").load_why is None  # the user's --load says it


@pytest.mark.parametrize(
    "change, field, problem",
    [
        (("title: A test scenario", "titel: A test scenario"), "titel", "unknown key"),
        (("lesson: What it teaches.\n", ""), "lesson", "missing"),
        (('restarts: ">=1"', 'restarts: "at least one"'), "predict.blocking.restarts", "is not a count"),
        (("kill_reason: liveness", "kill_reason: oom"), "predict.blocking.kill_reason", "'oom' is not"),
        (("ready: not-throughout", "ready: sometimes"), "predict.blocking.ready", "'sometimes' is not"),
        (("recovers: true", "recovers: yes-ish"), "predict.reactive.recovers", "is not true"),
        (("kill_timing: from-settings", "kill_time: from-settings"), "predict.blocking", "unknown prediction 'kill_time'"),
        (("  reactive: {restarts: 0", "  virtual: {restarts: 0"), "predict.virtual", "not swarmed by this scenario"),
        (("variants: [blocking, reactive]", "variants: [blocking, reactive, sleepy]"), "variants", "unknown variant 'sleepy'"),
        (("load: {users: 5,", "load: {users: 0,"), "load.users", "whole number above 0"),
        (("load: {users: 5,", "load: {users: 5, holdd: 3,"), "load.holdd", "unknown key"),
        (("hold: 30", "hold: 30.5"), "load.hold", "not a whole number"),
        (("hold: 30", "hold: 30, timeout_s: 0"), "load.timeout_s", "whole number above 0"),
        (("hold: 30", "hold: 30, where: laptop"), "load.where", "'laptop' is not one of auto, host, cluster"),
        (("sources: [somewhere#1]", "sources: [a: b]"), "sources", "non-empty list of texts"),
        (("values: {", "values: ["), "YAML", ""),
        (
            ("title: A test scenario", "title: A test scenario\nmeasured: 3 of 3 held"),
            "measured",
            "kept in the lab's ledger (locust/ledger/)",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_the_field(tmp_path, change, field, problem):
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(scenario_file.ScenarioError) as e:
        scenario_file.load_scenario(path)
    assert str(e.value).startswith(f"{path}: {field}: ") and problem in str(e.value), str(e.value)


def test_a_bad_name_or_an_unknown_only_is_refused(tmp_path):
    with pytest.raises(scenario_file.ScenarioError, match="file name"):
        scenario_file.load_scenario(write(tmp_path, GOOD, "Bad_Name.yaml"))
    (tmp_path / "Bad_Name.yaml").unlink()
    write(tmp_path, GOOD)
    with pytest.raises(scenario_file.ScenarioError, match="--only: no scenario nope; there are test-one"):
        catalogue.load_catalogue(tmp_path, only=["nope"])


@pytest.fixture
def runs(tmp_path):
    """The recorded runs, copied."""
    return {name: shutil.copytree(FIXTURES / name, tmp_path / name) for name in ("run-pass", "run-fail", "run-disturbed")}


def scenario(name):
    return next(s for s in catalogue.load_catalogue() if s.name == name)


def test_the_passing_demo_run_holds_the_baseline_prediction_with_its_evidence(runs):
    result = judge.judge_scenario(scenario("baseline"), runs["run-pass"])
    assert result.outcome == judge.HELD, [x.text() for x in result.lines]
    texts = [x.text() for x in result.lines]
    assert "blocking kill_timing: predicted first kill at 9-20 s, measured +13.3 s: held" in texts
    assert any(t.startswith("blocking restarts: predicted >=1, measured 5 (") for t in texts)
    assert "reactive failures: predicted 0, measured 0 of 3720 (0.0%): held" in texts
    assert result.report_verdict == "PASS" and result.figures["blocking"]["restarts"] == 5


def test_the_failing_demo_run_does_not_hold_the_baseline_but_holds_a_no_restart_prediction(runs):
    result = judge.judge_scenario(scenario("baseline"), runs["run-fail"])
    assert result.outcome == judge.NOT_HELD
    wrong = [x for x in result.lines if x.held is False]
    assert [(x.variant, x.key) for x in wrong] == [("blocking", "restarts"), ("blocking", "kill_timing")]
    assert wrong[1].measured == "no liveness kill"
    # No restart, so no cause to judge: the kill_reason line decides nothing (never "held" on nothing).
    reason = next(x for x in result.lines if x.key == "kill_reason")
    assert (reason.state, reason.measured, reason.held) == ("nothing to judge", "no restart to attribute", None)
    # The same run against tcp-probe's prediction: no restart and no liveness failure hold, but every
    # request was served (2 requests of 100 ms never block anything), so "failures >0" does not.
    result = judge.judge_scenario(scenario("tcp-probe"), runs["run-fail"])
    held = {x.key: x.held for x in result.lines}
    assert held == {"restarts": True, "liveness_failures": True, "failures": False, "ready": False}
    assert result.outcome == judge.NOT_HELD


@pytest.mark.parametrize(
    "folder", ["run-pass", "run-fail", "run-disturbed", "run-alone", "run-extra-load", "lab-baseline", "lab-dependency-in-liveness"]
)
def test_the_demos_verdict_is_the_baseline_scenarios_outcome_under_its_own_name(folder):
    # One judge: on every recorded run of both sides the demo's verdict is what the lab says of the baseline.
    lab = judge.judge_scenario(scenario("baseline"), FIXTURES / folder)
    demo = verdict.judge(load_run(FIXTURES / folder))
    assert demo.verdict == VERDICT[lab.outcome] and [x.text() for x in demo.lines] == [x.text() for x in lab.lines]


def test_the_claim_gives_each_variant_the_baseline_prediction_of_its_side():
    base = scenario("baseline").predict
    claim = verdict.claim(["servlet", "servlet-async", "servlet-virtual", "offloaded", "virtual", "reactive", "blocking"])
    assert claim == {
        "servlet": base["blocking"],
        "blocking": base["blocking"],
        "servlet-async": base["reactive"],
        "servlet-virtual": base["reactive"],
        "reactive": base["reactive"],
    }  # offloaded and virtual: no side, no verdict invented


def test_a_disturbed_run_cannot_tell(runs):
    result = judge.judge_scenario(scenario("baseline"), runs["run-disturbed"])
    assert result.outcome == judge.CANNOT_TELL
    assert any("pods created during the run" in w for w in result.why_cannot_tell)


def test_a_reactive_pod_killed_for_liveness_on_a_machine_under_the_line_is_not_held_by_the_lab_and_fails_the_demo(tmp_path, capsys):
    # The central claim can fail: the reactive pod's own probe failures and kills are the outcome the
    # prediction is about, never a sign that voids the run (the machine was 86 % busy, under the line).
    folder = reactive_killed_like_blocking(tmp_path / "planted")
    assert cli.main(["judge", "baseline", str(folder)]) == 1
    result = judge.read(folder)
    assert result.outcome == judge.NOT_HELD and result.why_cannot_tell == []
    not_held = {x.key for x in result.lines if x.variant == "reactive" and not x.held}
    assert not_held == {"restarts", "unhealthy"}, [x.text() for x in result.lines]
    assert result.report_verdict == "FAIL"
    demo = verdict.judge(load_run(folder))
    assert demo.verdict == "FAIL" and demo.exit_code == 1 and not demo.facts.cannot_tell
    assert any("pods failed" in s for s in demo.facts.cpu.signs)  # shown beside the run as an outcome
    # The same run on a machine over the line: now, and only now, it cannot tell, for the lab and the demo.
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines()]
    for r in records:
        if r["kind"] == "cpu":
            r["busy"] = 0.95
    (folder / "timeline.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert cli.main(["judge", "baseline", str(folder)]) == 2
    assert judge.read(folder).why_cannot_tell == [
        "the machine busy: the machine's CPU was 95% busy on average during the hold (the line: 90%)"
    ]
    assert verdict.judge(load_run(folder)).verdict == "INCONCLUSIVE"


def test_a_run_without_probe_settings_or_without_a_predicted_variant_cannot_tell(runs, tmp_path):
    folder = runs["run-pass"]
    run = json.loads((folder / "run.json").read_text())
    del run["settings"]
    (folder / "run.json").write_text(json.dumps(run))
    result = judge.judge_scenario(scenario("baseline"), folder)
    assert result.outcome == judge.CANNOT_TELL and result.why_cannot_tell == ["blocking kill_timing: no liveness probe settings recorded"]
    result = judge.judge_scenario(scenario("virtual"), folder)
    assert result.outcome == judge.CANNOT_TELL and "virtual was not in the run" in result.why_cannot_tell[0]


def lines_of(folder):
    """The run's facts, and a function judging one prediction of one variant on them (the lab's way)."""
    facts = run_facts(load_run(folder))

    def line(key, value, variant):
        a = facts.analyses[variant]
        ev = Evidence(a, facts.run, live=False, elapsed=a.phases.end - a.phases.start, actions=facts.actions)
        return judge_line(key, value, ev)

    return line


def test_the_other_predictions_read_the_recorded_figures(runs):
    line = lines_of(runs["run-pass"])
    assert line("ready", "not-throughout", "blocking").held and line("ready", "throughout", "reactive").held
    assert line("restarted_pods", "all", "blocking").measured == "1 of 1" and line("restarted_pods", "all", "blocking").held
    assert line("recovers", True, "reactive").held
    assert line("throughput", "offered", "reactive").held  # 20 users at 1 req/s, all served
    assert not line("throughput", "offered", "blocking").held
    assert line("liveness_failures", ">0", "blocking").held and line("unhealthy", 0, "reactive").held
    assert count_state("<=2", 2, True) == HELD and count_state(">0", 0, True) == NOT_HELD and count_state(0, 0, True) == HELD


def test_shed_requests_are_the_429_answers_and_the_other_failures_are_the_rest(runs):
    folder = runs["run-disturbed"]  # reactive: 380 answers of 403, 60 connections closed
    failures = folder / "locust_failures.csv"
    failures.write_text(failures.read_text().replace("LocustBadStatusCode(code=403)", "LocustBadStatusCode(code=429)"))
    line = lines_of(folder)
    assert line("shed", ">0", "reactive").measured.startswith("380 of ")
    assert line("shed", ">0", "reactive").held and line("shed", 0, "blocking").held
    not_shed = line("failures_not_shed", 0, "reactive")
    assert not not_shed.held and not_shed.measured == "60 (HTTPConnectionClosed('connection closed.') x60)"


def lab_folder(tmp_path, runs, names):
    """A lab folder as scripts/lab.sh leaves it: per run, demo.sh's files, lab.json and timing.json."""
    lab = tmp_path / "lab-test"
    for folder_name, (scenario_name, source) in names.items():
        folder = shutil.copytree(runs[source], lab / folder_name)
        judge.write(judge.judge_scenario(scenario(scenario_name), folder), folder)
        (folder / "timing.json").write_text('{"prepareS": 60, "runS": 150, "restoreS": 30, "totalS": 240}')
    return lab


def test_the_matrix_has_a_row_per_scenario_with_k_of_n_a_plot_and_links(tmp_path, runs):
    # The scratch ledger (conftest) holds no run: each row says 0 of 0.
    lab = lab_folder(
        tmp_path,
        runs,
        {
            "baseline-1": ("baseline", "run-pass"),
            "baseline-2": ("baseline", "run-fail"),
            "tcp-probe": ("tcp-probe", "run-fail"),
        },
    )
    md_path, html_path = matrix.build(lab)
    md, page = md_path.read_text(), html_path.read_text()
    rows = [line for line in md.splitlines() if line.startswith("| **")]
    assert [r.split("**")[1] for r in rows] == ["baseline", "tcp-probe"]  # catalogue order
    assert "not held (1 of 2 held)" in rows[0] and "[baseline-1](baseline-1/report.html)" in rows[0] and "4.0 min (mean of 2)" in rows[0]
    assert "| not held; in the ledger, under this prediction: 0 of 0 |" in rows[1] and "![tcp-probe](matrix-tcp-probe.png)" in rows[1]
    assert all("| WebFlux (Reactor Netty) |" in r for r in rows)  # the stack each row ran on
    assert "## tcp-probe\n\n- blocking failures: predicted >0, measured 0 of" in md  # the evidence of what did not hold
    assert (lab / "matrix-baseline.png").read_bytes()[:4] == b"\x89PNG"
    assert page.count("data:image/png;base64,") == 2 and "src='http" not in page
    assert "href='baseline-2/report.html'" in page


def test_a_scenarios_runs_on_two_kubernetes_releases_are_two_rows_in_release_order(tmp_path, runs):
    """run.json's kubernetes (the API server's release, since 2026-11-29) reaches lab.json, and the matrix
    gives each release its row, its plot and its name in the stack column; runs recorded without it keep
    one row, as before."""
    releases = {
        "baseline-1": ("baseline", "v1.37.0"),
        "baseline-2": ("baseline", "v1.36.4"),
        "baseline-3": ("baseline", "v1.37.0"),
        "tcp-probe": ("tcp-probe", None),
    }
    lab = tmp_path / "lab-test"
    for folder_name, (name, release) in releases.items():
        folder = shutil.copytree(runs["run-pass"], lab / folder_name)
        if release:
            record = json.loads((folder / "run.json").read_text())
            record["kubernetes"] = {"server": release, "kubelets": [release]}
            (folder / "run.json").write_text(json.dumps(record))
        judge.write(judge.judge_scenario(scenario(name), folder), folder)
    assert judge.read(lab / "baseline-2").kubernetes == "v1.36.4" and judge.read(lab / "tcp-probe").kubernetes is None
    md_path, _ = matrix.build(lab)
    rows = [line for line in md_path.read_text().splitlines() if line.startswith("| **")]
    assert [(r.split("**")[1], r.split(" | ")[1]) for r in rows] == [
        ("baseline", "WebFlux (Reactor Netty), Kubernetes v1.36.4"),
        ("baseline", "WebFlux (Reactor Netty), Kubernetes v1.37.0"),
        ("tcp-probe", "WebFlux (Reactor Netty)"),
    ]
    assert "[baseline-1](baseline-1/report.html) [baseline-3](baseline-3/report.html)" in rows[1]
    assert (lab / "matrix-baseline-v1.36.4.png").exists() and (lab / "matrix-tcp-probe.png").exists()


def test_the_command_line_lists_checks_and_judges(tmp_path, runs, capsys):
    assert cli.main(["list", "--quick"]) == 0
    assert capsys.readouterr().out.split() == ["baseline", "servlet"]
    assert cli.main(["judge", "baseline", str(runs["run-pass"])]) == 0
    assert json.loads((runs["run-pass"] / "lab.json").read_text())["outcome"] == "held"
    assert cli.main(["judge", "baseline", str(runs["run-fail"])]) == 1
    assert cli.main(["judge", "baseline", str(runs["run-disturbed"])]) == 2
    assert cli.main(["list", "--only", "nope"]) == 3
    assert "no scenario nope" in capsys.readouterr().err
    assert judge.Judgement.from_json(copy.deepcopy(judge.read(runs["run-pass"]).to_json())).outcome == "held"


@pytest.mark.parametrize("name, folder", [("baseline", "lab-baseline"), ("tcp-probe", "lab-tcp-probe")])
def test_the_recorded_lab_runs_hold_their_scenarios(name, folder):
    # scripts/lab.sh's own runs (fixtures/README.md), with the probe settings run.json recorded.
    result = judge.judge_scenario(scenario(name), FIXTURES / folder)
    assert result.outcome == judge.HELD, [x.text() for x in result.lines] + result.why_cannot_tell
    texts = [x.text() for x in result.lines]
    if name == "baseline":
        assert "blocking kill_timing: predicted first kill at 9-20 s, measured +13.4 s: held" in texts
    else:
        # The kubelet saw a live pod: no restart, no liveness failure, while its HTTP readiness failed and
        # it served only what its 4 event loops get through.
        assert "blocking restarts: predicted 0, measured 0 (52rwr 0): held" in texts
        assert "blocking failures: predicted >0, measured 55 of 327 (16.8%): held" in texts


def test_the_tcp_probe_run_records_its_probe_kind_and_fails_the_demos_own_claim():
    data = load_run(FIXTURES / "lab-tcp-probe")
    assert data.run["settings"]["blocking"]["liveness"]["type"] == "tcpSocket"
    live = settings.run_settings(data.run)["blocking"].liveness
    assert live.kind == "tcpSocket" and live.describe() == "tcpSocket http, every 5 s, timeout 1 s, 3 failures"
    # demo.sh's claim (blocking is restarted) does not hold here; the scenario's prediction does.
    assert verdict.judge(data).verdict == "FAIL"


def test_the_lab_waits_for_a_quiet_machine_by_the_mean_of_its_last_seconds_not_by_one():
    from liveness_lab.lab import runner

    assert runner.quiet_after([0.2] * 5) == 5  # quiet at once: the window's five seconds
    # one quiet second among busy ones is not quiet; three of the last five are
    assert runner.quiet_after([1.0] * 4 + [0.1] + [1.0] * 4 + [0.1] * 5) == 12
    assert runner.quiet_after([0.9] * 200) is None
    assert runner.quiet_after([0.5] * 5) is None  # under, not at


def test_before_an_upgrade_the_lab_reads_the_machines_cpu_in_the_kind_node_of_the_release(tmp_path):
    from liveness_lab.lab import runner

    docker = tmp_path / "docker"
    # inspect: the node is a kind node; exec: /proc/stat's first line, 3 s at 100 % busy, then 6 at 10 %.
    stat = "\n".join(
        f"echo 'cpu  {b} 0 0 {i} 0 0 0 0 0 0'"
        for b, i in [(0, 0), (100, 0), (200, 0), (300, 0), *[(300 + 10 * k, 90 * k) for k in range(1, 7)]]
    )
    docker.write_text(
        "#!/bin/sh\n"
        'case "$1 $2" in\n'
        '  "inspect --format") [ "$4" = kind-worker ] && echo liveness-lab && exit 0; exit 1 ;;\n'
        f'  "exec kind-worker") {stat.replace(chr(10), "; ")} ;;\n'
        "  *) exit 9 ;;\n"
        "esac\n"
    )
    docker.chmod(0o755)

    class Api:
        def pods(self):
            return {"items": [{"spec": {"nodeName": "kind-worker"}}, {"spec": {}}]}

    lab = runner.Lab(runner.LabOptions())
    lab.api = Api()
    assert lab.machine_node(str(docker)) == "kind-worker"
    assert lab.wait_quiet(str(docker)) < 5  # the samples came at once: quiet at the sixth (1, 1, .1, .1, .1)
    lab.api.pods = lambda: {"items": [{"spec": {"nodeName": "elsewhere"}}]}
    assert lab.machine_node(str(docker)) is None  # not a kind node this Docker reaches: no wait
    assert lab.wait_quiet(str(docker)) == 0.0
