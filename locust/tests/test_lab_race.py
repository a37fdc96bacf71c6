"""A lesson that holds in some runs only (issue 48): a scenario's `race` names those predictions and the
band of runs it predicts they hold in (issue 67), a run is judged by its other predictions, and the race
is judged over its runs against its band: held, not held (even the 95 % interval misses the band), cannot
tell, or not yet. Judged on the recorded cold-scale-out run (fixtures/README.md), whose added pods were killed."""

import dataclasses

import pytest
from conftest import FIXTURES
from test_lab_actions import write

from liveness_lab.base import scenario as scenario_file
from liveness_lab.lab import catalogue, judge, matrix

RACE = """\
title: A race
lesson: What it teaches.
sources: [somewhere#1]
variants: [blocking, reactive]
load: {users: 5, ramp: 10, hold: 60}
predict:
  blocking: {restarted_pods: all, kill_reason: liveness}
  reactive: {restarts: 0}
race:
  predictions: {blocking: [restarted_pods]}
  runs: 10
  band: 60..100
  why: where the connections land
"""


def cold_scale_out(**predict):
    """The catalogue's cold-scale-out with its reactive predictions replaced by PREDICT (its race kept)."""
    s = next(s for s in catalogue.load_catalogue() if s.name == "cold-scale-out")
    return dataclasses.replace(s, predict={"reactive": {**s.predict["reactive"], **predict}})


def test_a_run_whose_only_deciding_prediction_is_the_race_with_nothing_else_to_judge_cannot_tell():
    # The baseline's reactive side reduced to a race (a restart) and a cause of restarts: on the recorded
    # passing run reactive never restarted, so the cause has nothing to judge and the race decides nothing:
    # the run says so instead of "held" (issue 67: a prediction held on nothing). With the restarts there
    # (blocking's side, killed), the cause is judged and decides.
    base = next(s for s in catalogue.load_catalogue() if s.name == "baseline")
    race = scenario_file.Race({"reactive": ["restarts"], "blocking": ["restarts"]}, 10, "a planted race")
    only = dataclasses.replace(base, predict={"reactive": {"restarts": ">=1", "kill_reason": "liveness"}}, race=race)
    quiet = judge.judge_scenario(only, FIXTURES / "run-pass")
    reason = next(x for x in quiet.lines if x.key == "kill_reason")
    assert (reason.state, reason.held) == ("nothing to judge", None) and quiet.outcome == judge.CANNOT_TELL
    assert quiet.why_cannot_tell == ["nothing to judge: no prediction outside the race was about something that happened in the run"]
    killed = dataclasses.replace(only, predict={"blocking": {"restarts": ">=1", "kill_reason": "liveness"}})
    assert judge.judge_scenario(killed, FIXTURES / "run-pass").outcome == judge.HELD


def test_a_race_is_read_from_its_file(tmp_path):
    s = scenario_file.load_scenario(write(tmp_path, RACE))
    assert s.race == scenario_file.Race({"blocking": ["restarted_pods"]}, 10, "where the connections land", (60, 100))
    assert s.in_race("blocking", "restarted_pods") and not s.in_race("blocking", "kill_reason") and not s.in_race("reactive", "restarts")


@pytest.mark.parametrize(
    "change, field, problem",
    [
        (("  runs: 10\n", ""), "race.runs", "missing"),
        (("predictions: {blocking: [restarted_pods]}", "predictions: {virtual: [restarts]}"), "race.predictions.virtual", "no predictions"),
        (("predictions: {blocking: [restarted_pods]}", "predictions: {blocking: [restarts]}"), "race.predictions.blocking", "keys of"),
        (("predictions: {blocking: [restarted_pods]}", "predictions: {blocking: []}"), "race.predictions.blocking", "keys of"),
        (
            ("predictions: {blocking: [restarted_pods]}", "predictions: {blocking: [restarted_pods, kill_reason], reactive: [restarts]}"),
            "race.predictions",
            "no run could fail",
        ),
        (
            (
                "predictions: {blocking: [restarted_pods]}",
                "predictions: {blocking: [restarted_pods, restarted_pods, kill_reason], reactive: [restarts]}",
            ),
            "race.predictions",
            "no run could fail",
        ),
        (("runs: 10", "runs: 2"), "race.runs", "at least 3"),
        (("why: where the connections land", "why: ''"), "race.why", "non-empty"),
        (("  why: where", "  how: where"), "race.how", "unknown key"),
        (("  band: 60..100\n", ""), "race.band", "missing"),  # no race without its rate
        (("band: 60..100", "band: 60"), "race.band", "LOW..HIGH within 0..100"),
        (("band: 60..100", "band: 60..120"), "race.band", "LOW..HIGH within 0..100"),
        (("band: 60..100", "band: 80..60"), "race.band", "LOW..HIGH within 0..100"),
    ],
)
def test_a_bad_race_is_refused_naming_the_field(tmp_path, change, field, problem):
    path = write(tmp_path, RACE.replace(*change))
    with pytest.raises(scenario_file.ScenarioError) as e:
        scenario_file.load_scenario(path)
    assert str(e.value).startswith(f"{path}: {field}: ") and problem in str(e.value), str(e.value)


def test_a_race_prediction_that_did_not_hold_leaves_the_run_to_the_others():
    # The recorded run's added pods restarted 10 times: "0" does not hold; as the race it decides nothing.
    raced = judge.judge_scenario(cold_scale_out(added_restarts=0), FIXTURES / "lab-cold-scale-out")
    assert raced.outcome == judge.HELD and raced.race == ["reactive added_restarts"]
    assert next(x for x in raced.lines if x.key == "added_restarts").held is False
    marked = [x for x in raced.text() if x.endswith("(a race: not required of a run)")]
    assert len(marked) == 1 and "added_restarts" in marked[0] and raced.text()[0] == "cold-scale-out: held"
    # The same prediction outside the race fails the run, and one outside it that fails fails it too.
    plain = dataclasses.replace(cold_scale_out(added_restarts=0), race=None)
    assert judge.judge_scenario(plain, FIXTURES / "lab-cold-scale-out").outcome == judge.NOT_HELD
    certain = judge.judge_scenario(cold_scale_out(added_liveness_failures=0), FIXTURES / "lab-cold-scale-out")
    assert certain.outcome == judge.NOT_HELD


def test_the_catalogue_races_keep_a_certain_prediction_that_held_on_the_recorded_run():
    held = judge.judge_scenario(cold_scale_out(), FIXTURES / "lab-cold-scale-out")
    assert held.outcome == judge.HELD, held.text()
    assert next(x for x in held.lines if x.key == "added_liveness_failures").held


def test_the_matrix_gives_a_race_its_share_of_runs_with_the_interval_and_the_runs_it_needs(tmp_path):
    s = cold_scale_out()
    j = judge.judge_scenario(s, FIXTURES / "lab-cold-scale-out")

    def run(held: bool) -> judge.Judgement:
        state = judge.HELD if held else "not held"
        lines = [dataclasses.replace(x, state=state) if x.key == "added_restarts" else x for x in j.lines]
        return dataclasses.replace(j, lines=lines)

    three = matrix.Row("cold-scale-out", s, [(tmp_path / f"cold-scale-out-{i}", run(i != 2)) for i in (1, 2, 3)], None, [])
    assert three.outcome() == "held 3 of 3"
    assert three.race() == [
        "race reactive added_restarts: held in 2 of 3 runs (21-94 % at 95 %), predicted 5-45 %: judged at 10 runs "
        "(scripts/lab.sh --only cold-scale-out --repeat 10)"
    ]
    assert not any("added_restarts" in m for _, r in three.runs for m in matrix.missed(r))
    # At its 10 runs the band decides: 4 of 10 is in 5-45 %; 7 of 10 is not, but its interval (40-89 %)
    # reaches the band; 10 of 10 (72-100 %) misses it, and 0 of 10 (0-28 %) is under it only in part.
    ten = matrix.Row("cold-scale-out", s, [(tmp_path / f"c-{i}", run(i < 4)) for i in range(10)], None, [])
    assert ten.race() == ["race reactive added_restarts: held in 4 of 10 runs (17-69 % at 95 %), predicted 5-45 %: held"]
    seven = judge.judge_race(s.race, [True] * 7 + [False] * 3)
    assert seven.state == judge.CANNOT_TELL and "7 of 10" in seven.text
    assert judge.judge_race(s.race, [True] * 10).state == judge.NOT_HELD
    assert judge.judge_race(s.race, [False] * 10).state == judge.CANNOT_TELL
    assert judge.judge_race(s.race, [False] * 30).state == judge.CANNOT_TELL  # 0-11 %: it still reaches 5 %
    cascade = next(x for x in catalogue.load_catalogue() if x.name == "cascade").race  # 75-100 %
    assert judge.judge_race(cascade, [True] * 3 + [False] * 7).state == judge.NOT_HELD  # 11-60 %: under the band
    assert "added_restarts >=1 (a race)" in matrix.predicted(s)


def test_the_wilson_interval_stays_inside_0_to_1_and_is_not_empty_at_the_ends():
    assert judge.wilson(0, 3) == (0.0, pytest.approx(0.5615, abs=1e-4))
    assert judge.wilson(3, 3) == (pytest.approx(0.4385, abs=1e-4), 1.0)
    low, high = judge.wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
