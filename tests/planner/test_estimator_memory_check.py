"""An SMP job whose model the estimator knows (planned_model: a config.json) is refused at construction when its
layout's model states cannot fit (before anything is built or uploaded), naming the smallest change; SMP's
published reference configurations are accepted; a job without a model, or on a local instance, never is."""

from __future__ import annotations

import json
import warnings

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.jobspec.errors import SagelaunchException
from sagelaunch.planner.validate import MemoryWarning

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
# the GPT-2 notebook's gpt2-30b (h 7168, L 48, a 64) and the best-practices page's 10B/60B in the same family
MODELS = {10: (5120, 32, 40), 30: (7168, 48, 64), 60: (8192, 72, 64)}


def config(tmp_path, billions):
    h, layers, heads = MODELS[billions]
    path = tmp_path / f"gpt2-{billions}b.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_embd": h, "n_layer": layers, "n_head": heads,
                                "vocab_size": 50264, "n_positions": 1024}))
    return str(path)


def smp(**parameters):
    base = {"ddp": True, "fp16": True, "prescaled_batch": True}
    return {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {**base, **parameters}}},
            "mpi": {"enabled": True, "processes_per_host": 8}}


def estimator(**kw):
    return PyTorch(entry_point="train.py", role=ROLE, region="us-west-2", framework_version="1.13.1",
                   py_version="py39", instance_type="ml.p4d.24xlarge", **kw)


@pytest.mark.parametrize("billions, count, parameters", [
    (10, 16, {"tensor_parallel_degree": 4, "shard_optimizer_state": True}),
    (30, 16, {"tensor_parallel_degree": 8, "shard_optimizer_state": True}),
    (60, 32, {"tensor_parallel_degree": 8, "pipeline_parallel_degree": 2, "microbatches": 4,
              "shard_optimizer_state": True}),
])
def test_smp_reference_configurations_are_accepted(tmp_path, billions, count, parameters):
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryWarning)
        estimator(instance_count=count, distribution=smp(**parameters), planned_model=config(tmp_path, billions))


def test_30b_at_tp8_without_optimizer_sharding_is_refused_with_the_smallest_change(tmp_path):
    with pytest.raises(SagelaunchException) as err:
        estimator(instance_count=16, distribution=smp(tensor_parallel_degree=8), planned_model=config(tmp_path, 30))
    problem = err.value.problems[0] if hasattr(err.value, "problems") else err.value
    text = str(problem)
    assert problem.field == "distribution" and "cannot fit" in text
    assert problem.fix.startswith("set shard_optimizer_state=True, or pipeline_parallel_degree ≥ ")


def test_a_job_without_a_model_or_on_a_local_instance_is_never_refused_for_memory(tmp_path):
    estimator(instance_count=16, distribution=smp(tensor_parallel_degree=8))
    PyTorch(entry_point="train.py", role=ROLE, framework_version="2.0.0", py_version="py310", instance_type="local",
            instance_count=1, distribution=smp(tensor_parallel_degree=1, pipeline_parallel_degree=1),
            planned_model=config(tmp_path, 30))


def test_a_tight_layout_warns(tmp_path):
    """30B at tp 8 × pp 2 without optimizer sharding: ~18 bytes per parameter over 16 GPUs ≈ 90 % of 40 GiB."""
    with pytest.warns(MemoryWarning, match="tight"):
        estimator(instance_count=16, distribution=smp(tensor_parallel_degree=8, pipeline_parallel_degree=2,
                                                      microbatches=4), planned_model=config(tmp_path, 30))


def test_a_missing_or_unknown_model_config_names_planned_model(tmp_path):
    bad = tmp_path / "t5.json"
    bad.write_text('{"model_type": "t5"}')
    for path, text in ((tmp_path / "absent.json", "does not exist"), (bad, "model_type='t5'")):
        with pytest.raises(SagelaunchException) as err:
            estimator(instance_count=16, distribution=smp(tensor_parallel_degree=8), planned_model=str(path))
        problem = err.value.problems[0] if hasattr(err.value, "problems") else err.value
        assert problem.field == "planned_model" and text in str(problem) and problem.fix
