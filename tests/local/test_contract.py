"""The SageMaker container contract (launcher.local.contract), checked against the training toolkit's documented variables."""

from __future__ import annotations

import json
from pathlib import Path

from sagelaunch.jobspec.distribution import DistributionSpec, ModelParallelSettings, MPISettings
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.local import contract, plan
from sagelaunch.jobspec.spec import InputChannel, ProfilerSettings
from tests.local.conftest import local_job, make_spec

# sagemaker-training-toolkit ENVIRONMENT_VARIABLES.md (the documented list) …
DOCUMENTED = [
    "SM_MODEL_DIR", "SM_CHANNELS", "SM_HPS", "SM_CURRENT_HOST", "SM_HOSTS", "SM_NUM_GPUS", "SM_NUM_CPUS",
    "SM_LOG_LEVEL", "SM_NETWORK_INTERFACE_NAME", "SM_USER_ARGS", "SM_INPUT_DIR", "SM_INPUT_CONFIG_DIR",
    "SM_RESOURCE_CONFIG", "SM_INPUT_DATA_CONFIG", "SM_TRAINING_ENV",
]
# … and the rest of what Environment.to_env_vars sets in current DLCs
TOOLKIT_EXTRA = [
    "SM_USER_ENTRY_POINT", "SM_FRAMEWORK_PARAMS", "SM_OUTPUT_DATA_DIR", "SM_MODULE_NAME", "SM_FRAMEWORK_MODULE",
    "SM_OUTPUT_DIR", "SM_MODULE_DIR", "SM_OUTPUT_INTERMEDIATE_DIR", "SM_CURRENT_INSTANCE_TYPE",
    "SM_CURRENT_INSTANCE_GROUP", "SM_CURRENT_INSTANCE_GROUP_HOSTS", "SM_INSTANCE_GROUPS", "SM_INSTANCE_GROUPS_DICT",
    "SM_DISTRIBUTION_INSTANCE_GROUPS", "SM_IS_HETERO", "SM_NUM_NEURONS",
]
# the keys of SM_TRAINING_ENV in the toolkit's documented example
TRAINING_ENV_KEYS = [
    "channel_input_dirs", "current_host", "framework_module", "hosts", "hyperparameters", "input_config_dir",
    "input_data_config", "input_dir", "job_name", "log_level", "model_dir", "module_dir", "module_name",
    "network_interface_name", "num_cpus", "num_gpus", "output_data_dir", "output_dir", "resource_config",
]


def _smp(parameters: dict) -> DistributionSpec:
    return DistributionSpec(strategy="modelparallel", given=True, mpi=MPISettings(enabled=True),
                            modelparallel=ModelParallelSettings(parameters=parameters))


def _host_env(tmp_path: Path, **spec_fields):
    job = local_job(make_spec(**spec_fields), tmp_path)
    hosts = contract.host_names(job.instance_count)
    layout = HostLayout(tmp_path / hosts[-1])
    hps = job.host_hyperparameters(layout)
    return job, layout, hps, contract.environment(layout, job, hosts[-1], hosts, hps, num_gpus=0, num_cpus=4)


def test_every_documented_variable_is_set_with_the_toolkit_encoding(tmp_path):
    job, layout, _, env = _host_env(
        tmp_path, instance_count=2,
        hyperparameters={"batch-size": 256, "learning_rate": 0.0001, "communicator": "pure_nccl", "flag": True,
                         "a": 1, "opts": {"y": 2, "x": 1}},
        inputs=(InputChannel(name="training", uri="s3://b/train"), InputChannel(name="testing", uri="s3://b/test")),
    )
    missing = [name for name in DOCUMENTED + TOOLKIT_EXTRA if name not in env]
    assert not missing
    assert env["SM_CHANNELS"] == '["testing","training"]'
    assert env["SM_CHANNEL_TRAINING"] == str(layout.root / "input" / "data" / "training")
    assert env["SM_HOSTS"] == '["algo-1","algo-2"]' and env["SM_CURRENT_HOST"] == "algo-2"
    assert json.loads(env["SM_HPS"]) == {"batch-size": 256, "learning_rate": 0.0001, "communicator": "pure_nccl",
                                         "flag": True, "a": 1, "opts": {"y": 2, "x": 1}}
    # strings raw, everything else compact JSON — hyphens kept in the name, as the toolkit does
    assert env["SM_HP_BATCH-SIZE"] == "256" and env["SM_HP_COMMUNICATOR"] == "pure_nccl"
    assert env["SM_HP_FLAG"] == "true" and env["SM_HP_OPTS"] == '{"x":1,"y":2}'
    # sorted `--key value`; one-letter keys get one dash; dicts become k=v pairs; bools print as Python does
    assert json.loads(env["SM_USER_ARGS"]) == [
        "-a", "1", "--batch-size", "256", "--communicator", "pure_nccl", "--flag", "True",
        "--learning_rate", "0.0001", "--opts", "x=1,y=2",
    ]
    assert env["SM_MODEL_DIR"] == str(layout.model_dir) and env["SM_OUTPUT_DATA_DIR"] == str(layout.output_data_dir)
    assert env["SM_INPUT_CONFIG_DIR"] == str(layout.config_dir)
    assert env["SM_NUM_CPUS"] == "4" and env["SM_NUM_GPUS"] == "0" and env["SM_LOG_LEVEL"] == "20"
    assert env["SM_USER_ENTRY_POINT"] == "contract_probe.py" and env["SM_MODULE_NAME"] == "contract_probe"
    assert env["SM_FRAMEWORK_MODULE"] == "sagemaker_pytorch_container.training:main"
    assert env["SM_IS_HETERO"] == "false"
    resource = json.loads(env["SM_RESOURCE_CONFIG"])
    assert resource["current_host"] == "algo-2" and resource["hosts"] == ["algo-1", "algo-2"]
    assert json.loads(env["SM_INPUT_DATA_CONFIG"])["training"] == {
        "RecordWrapperType": "None", "S3DistributionType": "FullyReplicated", "TrainingInputMode": "File"}
    training_env = json.loads(env["SM_TRAINING_ENV"])
    assert not [key for key in TRAINING_ENV_KEYS if key not in training_env]
    assert training_env["is_master"] is False and training_env["master_hostname"] == "algo-1"
    assert training_env["job_name"] == job.name
    assert env["SAGEMAKER_BASE_DIR"] == str(layout.root) and env["TRAINING_JOB_NAME"] == job.name


def test_hyperparameters_json_holds_json_strings_and_sagemaker_keys_become_framework_params(tmp_path):
    job, layout, hps, env = _host_env(
        tmp_path, hyperparameters={"epochs": 3, "model": "roberta"},
        distribution=DistributionSpec(strategy="torch_distributed", given=True),
    )
    assert hps["epochs"] == "3" and hps["model"] == '"roberta"'
    assert hps["sagemaker_program"] == '"contract_probe.py"' and hps["sagemaker_region"] == '"us-west-2"'
    assert json.loads(hps["sagemaker_job_name"]) == job.name
    assert json.loads(env["SM_FRAMEWORK_PARAMS"]) == {"sagemaker_torch_distributed_enabled": True,
                                                      "sagemaker_instance_type": "local"}
    # reserved and framework keys stay out of the script's hyperparameters and arguments
    assert json.loads(env["SM_HPS"]) == {"epochs": 3, "model": "roberta"}
    assert "sagemaker_program" not in env["SM_USER_ARGS"]
    assert contract.decode_hyperparameters(hps)["epochs"] == 3


def test_model_parallel_parameters_reach_the_script(tmp_path):
    mp = {"partitions": 2, "microbatches": 4, "pipeline": "interleaved"}
    _, _, hps, env = _host_env(tmp_path, distribution=_smp(mp))
    assert json.loads(env["SM_HP_MP_PARAMETERS"]) == mp
    assert json.loads(hps["mp_parameters"]) == mp
    assert "--mp_parameters" in json.loads(env["SM_USER_ARGS"])
    _, _, _, plain = _host_env(tmp_path / "plain")
    assert "SM_HP_MP_PARAMETERS" not in plain


def test_an_smp_job_is_told_the_partial_checkpoint_names_of_its_framework_versions_smp_release(tmp_path):
    names = {version: _host_env(tmp_path / version, framework_version=version, distribution=_smp({"partitions": 2}))[3]
             .get("SAGELAUNCH_SMP_CHECKPOINT_NAMES") for version in ("1.6.0", "1.13.1")}
    assert names == {"1.6.0": "mp_rank", "1.13.1": "pp_tp"}  # the BERT example's release names f"{f}_{mp_rank}"


def test_config_files_and_profiler_settings(tmp_path):
    profiler = ProfilerSettings(system_monitor_interval_millis=500, cpu_profiling_duration=60, detailed=True)
    job, layout, hps, env = _host_env(
        tmp_path, profiler=profiler,
        inputs=(InputChannel(name="train", uri="s3://b/t", content_type="text/csv", distribution="ShardedByS3Key"),))
    contract.write_config_files(layout, job, "algo-1", ["algo-1"], hps)
    read = lambda name: json.loads((layout.config_dir / name).read_text())  # noqa: E731
    assert read("hyperparameters.json") == hps
    assert read("resourceconfig.json")["hosts"] == ["algo-1"]
    assert read("inputdataconfig.json") == {"train": {"ContentType": "text/csv", "RecordWrapperType": "None",
                                                     "S3DistributionType": "ShardedByS3Key", "TrainingInputMode": "File"}}
    assert read("profilerconfig.json") == {
        "ProfilingIntervalInMilliseconds": 500,
        "ProfilingParameters": {"CPUProfilingDuration": "60", "SMPFileRotationSecs": "600"},
        "DisableProfiler": False,
    }
    assert env["SAGELAUNCH_PROFILER_CONFIG"] == str(layout.config_dir / "profilerconfig.json")
    assert env["SM_PROFILER_OUTPUT_DIR"] == str(layout.root / "output" / "profiler")


def test_tf_config_makes_every_host_a_worker():
    config = json.loads(contract.tf_config(["algo-1", "algo-2"], "algo-2", [4001, 4002]))
    assert config == {"cluster": {"worker": ["127.0.0.1:4001", "127.0.0.1:4002"]}, "task": {"type": "worker", "index": 1}}


def test_local_gpu_hosts_get_their_own_gpus():
    from sagelaunch.launcher.local.plan import gpu_slices, visible_gpus

    assert gpu_slices(["0", "1", "2", "3"], 2) == [["0", "1"], ["2", "3"]]
    assert gpu_slices(["0", "1", "2"], 2) == [["0"], ["1"]]
    assert gpu_slices(["0"], 2) == [["0"], ["0"]]  # too few: shared, as one machine can only share
    assert gpu_slices([], 2) == [[], []]
    assert visible_gpus("local", {"CUDA_VISIBLE_DEVICES": "0"}) == []
    assert visible_gpus("local_gpu", {"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]


def test_pytorch_without_distribution_runs_the_script_itself_as_the_toolkits_process_runner(tmp_path):
    """SageMaker's PyTorch toolkit starts `python train.py` when no distribution is enabled (its default
    ProcessRunner) and torchrun or mpirun only for a distribution: a local job does the same."""
    entry, args = tmp_path / "contract_probe.py", ["--epochs", "1"]
    commands = {}
    for name, fields in {"plain": {}, "two_hosts": {"instance_count": 2},
                         "two_processes": {"processes_per_host": 2}, "smp": {"distribution": _smp({"partitions": 1})},
                         "tensorflow": {"framework": "tensorflow", "framework_version": "2.16", "py_version": "py310"}
                         }.items():
        job = local_job(make_spec(**fields), tmp_path / name)
        commands[name] = (plan.runs_one_process_per_host(job),
                          plan.host_command(job, "python", entry, args, host_index=0, hosts=job.instance_count,
                                            master_port=1234, log_dir=tmp_path / "logs"))
    for direct in ("plain", "two_hosts", "tensorflow"):
        assert commands[direct] == (True, ["python", str(entry), *args])
    for launched in ("two_processes", "smp"):
        direct, command = commands[launched]
        assert not direct and command[1:3] == ["-m", "torch.distributed.run"] and command[-3:] == [str(entry), *args]
