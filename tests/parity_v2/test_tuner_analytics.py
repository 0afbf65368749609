"""A tuning job's analytics on the real SDK v2 and on ours (one moto server): v2's
`sagemaker.HyperparameterTuningJobAnalytics(name)` and `tuner.analytics()` — the dataframe made from
ListTrainingJobsForHyperParameterTuningJob (columns, values, types) and `tuning_ranges` from the job's description.
moto lists no trials (it runs none): tests/fixtures/tuning_fakes.py answers the listing with the trials given here,
the same answer to both sides."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.fixtures.sdk_v2 import INPUT_BUCKET_CELL, both_ok, job_name, named_result
from tests.fixtures.tuning_fakes import install_trial_listing

pytestmark = pytest.mark.slow  # starts the SDK v2 interpreter

CASE = INPUT_BUCKET_CELL + """
import sagemaker
from sagemaker.estimator import Estimator
from sagemaker.tuner import HyperparameterTuner, IntegerParameter, ContinuousParameter, CategoricalParameter
est = Estimator("123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest", ROLE, 1, "ml.m5.xlarge")
tuner = HyperparameterTuner(est, "acc", {"lr": ContinuousParameter(0.01, 0.2), "n": IntegerParameter(1, 8),
                                         "opt": CategoricalParameter(["sgd", "adam"])},
                            metric_definitions=[{"Name": "acc", "Regex": "acc=([0-9.]+)"}], max_jobs=3)
tuner.fit({"train": "s3://bucket-x/train"}, job_name=JOB, wait=False)
by_name = sagemaker.HyperparameterTuningJobAnalytics(JOB)
frame = by_name.dataframe()
RESULT = {"columns": list(frame.columns), "types": [str(t) for t in frame.dtypes],
          "rows": frame.astype(str).values.tolist(), "same_from_tuner": tuner.analytics().dataframe().equals(frame),
          "ranges": by_name.tuning_ranges, "name": by_name.name}
"""


def _trial(index: int, status: str, objective: float | None) -> dict:
    start = datetime(2026, 1, 1, 10, index, tzinfo=timezone.utc)
    summary = {"TrainingJobName": f"trial-{index}", "TrainingJobArn": f"arn:aws:sagemaker:us-west-2:123456789012:"
               f"training-job/trial-{index}", "CreationTime": start, "TrainingStartTime": start,
               "TrainingEndTime": start.replace(second=30 + index), "TrainingJobStatus": status,
               "TunedHyperParameters": {"lr": f"0.0{index + 1}", "n": str(index + 2), "opt": ["sgd", "adam"][index % 2]}}
    if objective is not None:
        summary["FinalHyperParameterTuningJobObjectiveMetric"] = {"MetricName": "acc", "Value": objective}
    return summary


@pytest.fixture(scope="module")
def side(sdk_v2):
    trials = [_trial(0, "Completed", 0.81), _trial(1, "Completed", 0.9), _trial(2, "Failed", None)]
    install_trial_listing({job_name("analytics", ours): trials for ours in (False, True)})
    return sdk_v2([{"id": "analytics", "code": CASE}])


def test_the_analytics_frame_and_ranges_are_v2s(side):
    v2, ours = both_ok(side, "analytics")
    assert named_result(ours) == named_result(v2)
    result = named_result(ours)
    assert result["same_from_tuner"] is True
    assert len(result["rows"]) == 3 and result["name"] == "<job>"
    assert set(result["ranges"]) == {"lr", "n", "opt"}
