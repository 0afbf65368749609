"""The rest of a v2 notebook's day, run locally: after fit the estimator holds v2's session, output_path and rule
configurations; the Session follows the job (logs_for_job, wait_for_job); a generic Estimator of a PyTorch training
image runs its entry point here and any other image is refused by name; estimator.transformer() transforms every
input file through the local model server into <name>.out; a failed job's model is refused naming its reason."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import Estimator, PyTorch, Session
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.common.jobs import JobFailedError
from tests.local.conftest import unique

pytestmark = pytest.mark.slow  # local jobs and a local model server

TRAIN = """import os
print("training loss=0.5", flush=True)
open(os.path.join(os.environ["SM_MODEL_DIR"], "weights.txt"), "w").write("w")
"""
SERVE = """def model_fn(model_dir):
    return open(model_dir + "/weights.txt").read()

def transform_fn(model, data, content_type, accept):
    text = data.decode() if isinstance(data, bytes) else data
    return "".join(f"{model}:{line.upper()}\\n" for line in text.splitlines()), accept
"""
DLC = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-cpu-py310"


def _source(tmp_path, train: str = TRAIN) -> str:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "train.py").write_text(train)
    (source / "serve.py").write_text(SERVE)
    return str(source)


def test_after_a_local_fit_the_estimator_holds_what_v2_sets_and_the_session_follows_it(tmp_path, capsys):
    est = PyTorch(entry_point="train.py", source_dir=_source(tmp_path), framework_version="2.0.0",
                  py_version="py310", instance_type="local")
    assert est.sagemaker_session is None and est.output_path is None and est.profiler_rule_configs is None
    name = unique("day-fit")
    est.fit(job_name=name)
    assert isinstance(est.sagemaker_session, Session) and est.sagemaker_session.local_mode
    assert est.model_data.startswith(est.output_path)  # where the outputs went, a path later cells can build on
    assert est.profiler_rule_configs == [] and est.debugger_rule_configs == []
    capsys.readouterr()
    est.sagemaker_session.logs_for_job(name, wait=True)
    assert "training loss=0.5" in capsys.readouterr().out
    assert est.sagemaker_session.wait_for_job(name)["TrainingJobStatus"] == "Completed"
    second = unique("day-fit2")
    est.fit(job_name=second)  # the output_path fit set is not the user's: the next job keeps its own folder
    assert second in est.model_data and name not in est.model_data

    # batch transform of that model through the local model server, one record per line, assembled by line
    (tmp_path / "in" / "part").mkdir(parents=True)
    (tmp_path / "in" / "a.csv").write_text("x,1\ny,2\n")
    (tmp_path / "in" / "part" / "b.csv").write_text("z,3\n")
    transformer = est.transformer(1, "local", strategy="SingleRecord", assemble_with="Line", accept="text/csv",
                                  output_path=str(tmp_path / "out"), entry_point="serve.py")
    transformer.transform(str(tmp_path / "in"), content_type="text/csv", split_type="Line",
                          job_name=unique("day-transform"))
    assert (tmp_path / "out" / "a.csv.out").read_text() == "w:X,1\nw:Y,2"
    assert (tmp_path / "out" / "part" / "b.csv.out").read_text() == "w:Z,3"
    assert transformer.describe()["TransformJobStatus"] == "Completed"


def test_a_generic_estimator_runs_a_pytorch_image_entry_point_and_refuses_other_images(tmp_path):
    est = Estimator(DLC, instance_type="local", entry_point="train.py", source_dir=_source(tmp_path),
                    hyperparameters={"epochs": 1})
    est.fit(job_name=unique("day-generic"))
    assert est.latest_training_job.describe()["TrainingJobStatus"] == "Completed"
    with pytest.raises(SagelaunchError, match="local jobs run without Docker.*PyTorch\\(entry_point="):
        Estimator("123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest", instance_type="local")


def test_the_model_of_a_failed_job_is_refused_naming_the_job_and_its_reason(tmp_path):
    est = PyTorch(entry_point="train.py", source_dir=_source(tmp_path, "raise SystemExit('out of data')\n"),
                  framework_version="2.0.0", py_version="py310", instance_type="local")
    name = unique("day-failed")
    with pytest.raises(JobFailedError):
        est.fit(job_name=name)
    with pytest.raises(SagelaunchError, match=f"training job {name} ended Failed.*out of data"):
        est.deploy(1, "local")
    with pytest.raises(SagelaunchError, match=f"training job {name} ended Failed"):
        est.transformer(1, "local")
