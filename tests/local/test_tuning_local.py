"""A local hyperparameter tuning job: four trials as local jobs (torchrun), the objective read from each trial's
logs with the metric definition's regex, the best trial found, the analytics frame v2's columns, a progress line
per trial, best_estimator() attached, a warm start from it, and what only SageMaker does refused by name."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.estimators.parameter_ranges import CategoricalParameter, ContinuousParameter, IntegerParameter
from sagelaunch.estimators.tuner import HyperparameterTuner
from sagelaunch.jobspec.errors import SagelaunchError
from tests.local.conftest import unique

# the loss is smallest at lr=0.1 and depth 3 with the "adam" optimizer: the best trial is knowable
SCRIPT = """import argparse
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float); p.add_argument("--depth", type=int); p.add_argument("--opt", type=str)
a, _ = p.parse_known_args()
for epoch in range(3):
    loss = abs(a.lr - 0.1) * 10 + abs(a.depth - 3) + (0 if a.opt == "adam" else 1) + (2 - epoch) * 0.01
    print(f"epoch {epoch} loss={loss:.4f}", flush=True)
"""
METRICS = [{"Name": "loss", "Regex": "loss=([0-9.]+)"}]


def _estimator(tmp_path) -> PyTorch:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "train.py").write_text(SCRIPT)
    return PyTorch(entry_point="train.py", source_dir=str(source), framework_version="2.0.0", py_version="py310",
                   instance_type="local", output_path=str(tmp_path / "out"), metric_definitions=METRICS)


def _tuner(est, **kwargs) -> HyperparameterTuner:
    ranges = {"lr": ContinuousParameter(0.01, 0.5), "depth": IntegerParameter(1, 5),
              "opt": CategoricalParameter(["sgd", "adam"])}
    return HyperparameterTuner(est, "loss", kwargs.pop("ranges", ranges), objective_type="Minimize",
                               **{"max_jobs": 4, "max_parallel_jobs": 2, "random_seed": 1, **kwargs})


@pytest.mark.slow
def test_a_four_trial_local_tuning_job_finds_its_best_trial(tmp_path, capsys):
    tuner = _tuner(_estimator(tmp_path))
    name = unique("tune")[:20]
    tuner.fit(job_name=name)
    out = capsys.readouterr().out
    assert out.count(f"[tuning {name}] trial ") == 4  # a progress line per trial
    frame = tuner.analytics().dataframe()
    assert len(frame) == 4 and set(frame["TrainingJobStatus"]) == {"Completed"}
    assert {"lr", "depth", "opt", "TrainingJobName", "FinalObjectiveValue", "TrainingElapsedTimeSeconds"} <= set(frame)
    for _, row in frame.iterrows():  # each objective is the trial's last logged loss for its values
        expected = abs(row["lr"] - 0.1) * 10 + abs(row["depth"] - 3) + (0 if row["opt"] == "adam" else 1)
        assert row["FinalObjectiveValue"] == pytest.approx(expected, abs=1e-3)
    best = frame.loc[frame["FinalObjectiveValue"].idxmin(), "TrainingJobName"]
    assert tuner.best_training_job() == best
    assert tuner.describe()["HyperParameterTuningJobStatus"] == "Completed"
    attached = tuner.best_estimator()
    assert attached.latest_training_job.name == best
    assert HyperparameterTuner.attach(name) is tuner

    # warm start: the parent's four trials inform the child; it runs its own two
    child = tuner.identical_dataset_and_algorithm_tuner()
    child.max_jobs = 2
    child.fit(job_name=unique("tune-warm")[:20])
    assert len(child.analytics().dataframe()) == 2


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"strategy": "Hyperband"}, "strategy"),
    ({"max_parallel_jobs": 4096}, "max_parallel_jobs"),
    ({"max_runtime_in_seconds": 60}, "max_runtime_in_seconds"),
    ({"strategy": "Grid"}, "hyperparameter_ranges"),
    ({"ranges": {"lr": ContinuousParameter(0.01, 0.5, "ReverseLogarithmic")}}, "scaling_type"),
])
def test_what_only_sagemaker_does_is_refused_by_name(tmp_path, kwargs, field):
    with pytest.raises(SagelaunchError, match=field):
        _tuner(_estimator(tmp_path), **kwargs).fit(job_name=unique("tune-no")[:20])


def test_an_objective_without_a_metric_definition_is_refused(tmp_path):
    est = _estimator(tmp_path)
    est.metric_definitions = None
    with pytest.raises(SagelaunchError, match="objective_metric_name='loss' is not among"):
        _tuner(est).fit(job_name=unique("tune-no")[:20])


# each epoch logs its loss and takes a second, so the tuner sees every trial running: a trial worse than the median
# so far at the same epoch is stopped. The good trial (lr=0.1) ends after 3 epochs; the bad one would run 12 if not
# stopped, long enough that only the stop ends it on a loaded machine too.
SLOW_SCRIPT = """import argparse, time
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float)
a, _ = p.parse_known_args()
for epoch in range(3 if a.lr == 0.1 else 12):
    print(f"epoch {epoch} loss={abs(a.lr - 0.1) * 10 + 1:.4f}", flush=True)
    time.sleep(1)
"""


@pytest.mark.slow
def test_early_stopping_auto_stops_a_trial_worse_than_the_median(tmp_path, capsys):
    est = _estimator(tmp_path)
    (tmp_path / "src" / "train.py").write_text(SLOW_SCRIPT)
    tuner = HyperparameterTuner(est, "loss", {"lr": CategoricalParameter([0.1, 0.9])}, objective_type="Minimize",
                                strategy="Grid", max_jobs=2, max_parallel_jobs=1, early_stopping_type="Auto")
    tuner.fit(job_name=unique("tune-stop")[:20])
    frame = tuner.analytics().dataframe().set_index("lr")
    assert frame.loc[0.1, "TrainingJobStatus"] == "Completed" and frame.loc[0.1, "FinalObjectiveValue"] == 1.0
    assert frame.loc[0.9, "TrainingJobStatus"] == "Stopped"  # its loss, 9.0 from the first epoch on, is worse
    assert "(stopped early)" in capsys.readouterr().out
    assert tuner.best_training_job() == frame.loc[0.1, "TrainingJobName"]
