"""The prediction vocabulary and its judges are one list: every key of base.scenario.PREDICTIONS has its
judge in report.predictions' registry, the registry judges nothing the vocabulary lacks, and what the
workshop's live checks accept is judged on a live window."""

import pytest

from liveness_lab.base.scenario import PREDICTIONS
from liveness_lab.report import measure
from liveness_lab.report.predictions import JUDGES, LIVE
from liveness_lab.workshop.course import LIVE_PREDICTIONS


def test_every_prediction_has_a_judge_and_every_judge_a_prediction():
    assert sorted(set(PREDICTIONS) - set(JUDGES)) == [], "a prediction without a judge: register one with @measure"
    assert sorted(set(JUDGES) - set(PREDICTIONS)) == [], "a judge of no prediction: add its words to base.scenario.PREDICTIONS"


def test_the_workshops_live_predictions_are_the_measures_judged_live():
    assert sorted(set(LIVE_PREDICTIONS) - set(JUDGES)) == []
    assert set(LIVE_PREDICTIONS) == LIVE, "a live check accepts what it cannot judge live, or the other way round"


def test_a_second_judge_for_a_key_is_refused(monkeypatch):
    monkeypatch.setattr(measure, "JUDGES", dict(JUDGES))
    with pytest.raises(ValueError, match="'restarts' has two judges"):
        measure.measure("restarts")(lambda key, expected, ev: None)
