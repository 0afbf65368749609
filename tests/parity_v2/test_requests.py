"""The grid: the same jobs written the SageMaker SDK v2 way, built by the real SDK v2 2.257 and by ours (imports
swapped) against one moto server, send the same CreateTrainingJob — every PyTorch and TensorFlow version of our
catalog that v2 knows (on GPU; the oldest and newest on CPU too); each distribution shape; the profiler and Debugger forms; the input forms.
Only the differences README lists as deliberate are taken out (`without_documented_differences`).

All cases run in one `sdk_v2` call (two interpreters); the test prints how many cases it compared and how many
matched, and asserts every one did.
"""

from __future__ import annotations

import glob
import json

from sagelaunch.jobspec import catalog
from tests.fixtures.sdk_v2 import ROOT, requests, without_documented_differences

SETUP = """
import os, tempfile, boto3
SRC = tempfile.mkdtemp()
open(os.path.join(SRC, "train.py"), "w").write("print('hi')\\n")
BUCKET = "sagemaker-us-west-2-123456789012"
s3 = boto3.client("s3")
try:
    s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
except Exception:
    pass  # the other side or an earlier case made it
for key in ("grid/train/part-0", "grid/test/part-0"):
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
from sagemaker.pytorch import PyTorch
from sagemaker.tensorflow import TensorFlow
from sagemaker.inputs import TrainingInput
from sagemaker.debugger import (ProfilerConfig, Profiler, FrameworkProfile, DebuggerHookConfig, CollectionConfig,
                                TensorBoardOutputConfig, Rule, ProfilerRule, rule_configs)
"""

GPU, CPU, P4D = "ml.g5.xlarge", "ml.m5.xlarge", "ml.p4d.24xlarge"
NOTEBOOK_VERSIONS = {"pytorch": ["1.5.0", "1.6.0", "1.8.1", "1.10", "1.11.0"], "tensorflow": ["2.3.1"]}


def v2_versions(framework: str) -> set[str]:
    """The training versions SDK v2 itself knows (its image_uri_config, read from its venv)."""
    [path] = glob.glob(str(ROOT / ".venv-sagemaker-v2" / "lib" / "python*" / "site-packages" / "sagemaker" /
                           "image_uri_config" / f"{framework}.json"))
    with open(path) as f:
        return set(json.load(f)["training"]["versions"])


def job(cls: str, version: str, instance_type: str = GPU, count: int = 1, extra: str = "", inputs: str = "") -> str:
    framework = {"PyTorch": "pytorch", "TensorFlow": "tensorflow"}[cls]
    py = catalog.py_versions(framework, catalog.resolve_framework_version(framework, version))[-1]
    return (f"est = {cls}(entry_point='train.py', source_dir=SRC, role=ROLE, framework_version={version!r}, "
            f"py_version={py!r}, instance_type={instance_type!r}, instance_count={count}, "
            f"hyperparameters={{'epochs': 2, 'lr': 0.1, 'model': 'roberta-base'}}, {extra})\n"
            f"est.fit({inputs + ', ' if inputs else ''}wait=False, job_name=JOB)\n")


def grid() -> dict[str, str]:
    cases: dict[str, str] = {}
    # every version with our full DLC tag that v2 knows, on a GPU instance; the oldest and newest on a CPU instance
    # too; the older versions (v2's own tags: tests/parity_v2/test_images.py checks every one) those of issue 28's
    # notebooks, one written as v2's alias
    for cls, framework in (("PyTorch", "pytorch"), ("TensorFlow", "tensorflow")):
        known = v2_versions(framework)
        versions = [v for v in catalog.framework_versions(framework)
                    if v in known and catalog.version_entry(framework, v)["tag_source"] != "sdk-v2"]
        versions = NOTEBOOK_VERSIONS[framework] + versions
        for version in versions:
            entry = catalog.version_entry(framework, catalog.resolve_framework_version(framework, version))
            processors = entry["processors"]
            if "gpu" in processors:
                cases[f"{framework}-{version.replace('.', '-')}-gpu"] = job(cls, version)
            if "cpu" in processors and version in (versions[0], versions[-1]):
                cases[f"{framework}-{version.replace('.', '-')}-cpu"] = job(cls, version, CPU)

    # distribution shapes
    mpi8 = '"mpi": {"enabled": True, "processes_per_host": 8}'
    cases.update({
        "torch-distributed": job("PyTorch", "2.0.0", P4D, 2, 'distribution={"torch_distributed": {"enabled": True}}'),
        "torch-distributed-2-8-g5-12x": job("PyTorch", "2.8.0", "ml.g5.12xlarge", 2,
                                            'distribution={"torch_distributed": {"enabled": True}}'),
        "pytorchddp": job("PyTorch", "2.0.0", P4D, 2, 'distribution={"pytorchddp": {"enabled": True}}'),
        "smddp-pytorch": job("PyTorch", "2.0.1", P4D, 2,
                             'distribution={"smdistributed": {"dataparallel": {"enabled": True}}}'),
        "smddp-pytorch-mpi-options": job("PyTorch", "1.13.1", P4D, 2, 'distribution={"smdistributed": {"dataparallel": '
                                         '{"enabled": True, "custom_mpi_options": "-verbose"}}}'),
        "smddp-tensorflow": job("TensorFlow", "2.11.0", P4D, 2,
                                'distribution={"smdistributed": {"dataparallel": {"enabled": True}}}'),
        "smp-pipeline": job("PyTorch", "2.0.0", P4D, 2, 'distribution={"smdistributed": {"modelparallel": {"enabled": True, '
                            '"parameters": {"partitions": 2, "microbatches": 4, "ddp": True}}}, ' + mpi8 + '}'),
        "smp-tensor": job("PyTorch", "1.13.1", P4D, 1, 'distribution={"smdistributed": {"modelparallel": {"enabled": True, '
                          '"parameters": {"pipeline_parallel_degree": 2, "tensor_parallel_degree": 2, "ddp": True, '
                          '"microbatches": 2}}}, ' + mpi8 + '}'),
        "smp-sharding": job("PyTorch", "2.0.1", P4D, 2, 'distribution={"smdistributed": {"modelparallel": {"enabled": True, '
                            '"parameters": {"sharded_data_parallel_degree": 16, "ddp": True, "bf16": True}}}, ' + mpi8 + '}'),
        "mpi": job("PyTorch", "2.0.0", P4D, 2,
                   'distribution={"mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-x NCCL_DEBUG=INFO"}}'),
        "mpi-tensorflow": job("TensorFlow", "2.13.0", P4D, 2, 'distribution={"mpi": {"enabled": True, "processes_per_host": 8}}'),
        "parameter-server": job("TensorFlow", "2.13.0", CPU, 2, 'distribution={"parameter_server": {"enabled": True}}'),
        "parameter-server-rules": job("TensorFlow", "2.13.0", CPU, 2, 'distribution={"parameter_server": {"enabled": True}}, '
                                      'rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())]'),
        "multi-worker-mirrored": job("TensorFlow", "2.13.0", GPU, 2,
                                     'distribution={"multi_worker_mirrored_strategy": {"enabled": True}}'),
    })

    # profiler and Debugger forms
    report = "ProfilerRule.sagemaker(rule_configs.ProfilerReport())"
    detailed = "profiler_config=ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=3600))"
    cases.update({
        "monitoring-only": job("PyTorch", "2.8.0", GPU, 1, "profiler_config=ProfilerConfig(system_monitor_interval_millis=500)"),
        "monitoring-only-tensorflow": job("TensorFlow", "2.19.0", CPU, 1,
                                          "profiler_config=ProfilerConfig(system_monitor_interval_millis=1000)"),
        "monitoring-s3-path": job("PyTorch", "2.6.0", GPU, 1,
                                  "profiler_config=ProfilerConfig('s3://sagemaker-us-west-2-123456789012/prof', 200)"),
        "detailed-profiler": job("PyTorch", "2.0.0", P4D, 1, detailed),
        "detailed-profiler-positional": job("PyTorch", "1.13.1", "ml.g4dn.12xlarge", 1, "profiler_config=ProfilerConfig("
                                            "None, 500, None, Profiler(120, 60))"),
        "detailed-profiler-tensorflow": job("TensorFlow", "2.12.0", "ml.g4dn.12xlarge", 1, detailed),
        "detailed-profiler-own-rule": job("PyTorch", "2.0.0", P4D, 1, f"{detailed}, rules=[{report}]"),
        "detailed-profiler-no-rules": job("PyTorch", "2.0.0", P4D, 1, f"{detailed}, rules=[]"),
        "detailed-profiler-debug-rule": job("PyTorch", "2.0.0", P4D, 1,
                                            f"{detailed}, rules=[Rule.sagemaker(rule_configs.overfit())]"),
        "framework-profile": job("PyTorch", "1.13.1", GPU, 1, "profiler_config=ProfilerConfig(framework_profile_params="
                                 "FrameworkProfile())"),
        "framework-profile-steps": job("TensorFlow", "2.11.0", GPU, 1, "profiler_config=ProfilerConfig("
                                       "framework_profile_params=FrameworkProfile(start_step=3, num_steps=2))"),
        "framework-profile-time": job("PyTorch", "1.12.1", GPU, 1, "profiler_config=ProfilerConfig(framework_profile_params="
                                      "FrameworkProfile(start_unix_time=1700000000, duration=30))"),
        "disable-profiler": job("PyTorch", "2.0.0", GPU, 1, "disable_profiler=True"),
        "disable-profiler-in-config": job("PyTorch", "2.4.0", GPU, 1,
                                          "profiler_config=ProfilerConfig(disable_profiler=True)"),
        "no-debugger-hook": job("PyTorch", "2.0.0", GPU, 1, "debugger_hook_config=False"),
        "no-hook-no-profiler": job("TensorFlow", "2.16.2", GPU, 1, "debugger_hook_config=False, disable_profiler=True"),
        "debugger-hook-true": job("PyTorch", "2.5.1", GPU, 1, "debugger_hook_config=True"),
        "rules": job("PyTorch", "2.0.0", GPU, 1, "rules=[Rule.sagemaker(rule_configs.loss_not_decreasing()), "
                     "Rule.sagemaker(rule_configs.vanishing_gradient()), Rule.sagemaker(rule_configs.overfit()), "
                     f"{report}]"),
        "rules-with-params": job("PyTorch", "2.1.0", GPU, 1, "rules=[Rule.sagemaker(rule_configs.exploding_tensor(), "
                                 "name='Explode', rule_parameters={'tensor_regex': '.*gradient'}, collections_to_save="
                                 "[CollectionConfig('gradients', {'save_interval': '10'})]), ProfilerRule.sagemaker("
                                 "rule_configs.CPUBottleneck(threshold=70)), ProfilerRule.sagemaker(rule_configs."
                                 "ProfilerReport(CPUBottleneck_threshold=80))]"),
        "rules-no-hook": job("TensorFlow", "2.14.1", GPU, 1, "debugger_hook_config=False, "
                             "rules=[Rule.sagemaker(rule_configs.weight_update_ratio())]"),
        "custom-rule": job("PyTorch", "2.2.0", GPU, 1, "rules=[Rule.custom(name='MyRule', image_uri="
                           "'111122223333.dkr.ecr.us-west-2.amazonaws.com/my-rule:1', instance_type='ml.m5.xlarge', "
                           "volume_size_in_gb=10, source='s3://sagemaker-us-west-2-123456789012/rules/rule.py', "
                           "rule_to_invoke='MyRule', rule_parameters={'threshold': '3'})]"),
        "hook-and-tensorboard": job("PyTorch", "2.3.0", GPU, 1, "output_path='s3://sagemaker-us-west-2-123456789012/out', "
                                    "debugger_hook_config=DebuggerHookConfig(hook_parameters={'save_interval': '100'}, "
                                    "collection_configs=[CollectionConfig('weights'), CollectionConfig(name='losses', "
                                    "parameters={'save_interval': '50'})]), tensorboard_output_config="
                                    "TensorBoardOutputConfig('s3://sagemaker-us-west-2-123456789012/tb', '/opt/ml/tb')"),
        "hook-own-path-and-rules": job("TensorFlow", "2.18.0", GPU, 1, "debugger_hook_config=DebuggerHookConfig("
                                       "'s3://sagemaker-us-west-2-123456789012/hook', '/opt/ml/hook'), rules=["
                                       "Rule.sagemaker(rule_configs.loss_not_decreasing())]"),
        "checkpoints": job("PyTorch", "2.0.0", GPU, 1, "checkpoint_s3_uri='s3://sagemaker-us-west-2-123456789012/ckpt', "
                           "checkpoint_local_path='/opt/ml/checkpoints'"),
        "checkpoints-s3-only": job("PyTorch", "2.0.0", GPU, 2,
                                   "checkpoint_s3_uri='s3://sagemaker-us-west-2-123456789012/ckpt'"),
        "output-path": job("TensorFlow", "2.13.0", GPU, 1, "output_path='s3://sagemaker-us-west-2-123456789012/jobs/'"),
        "model-dir": job("TensorFlow", "2.13.0", GPU, 1, "model_dir='s3://sagemaker-us-west-2-123456789012/models'"),
        "model-dir-false": job("TensorFlow", "2.13.0", GPU, 1, "model_dir=False"),
    })

    # where Debugger does not run: v2 turns monitoring and the hook off (a region without Debugger, trn instances)
    session = "from sagemaker.session import Session\nSESSION = Session(boto3.Session(region_name='eu-central-2'))\n"
    neuron = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:1.13.1-neuronx-py310-sdk2.18.0-ubuntu20.04"
    cases.update({
        "region-without-debugger": session + job("PyTorch", "2.0.0", GPU, 1, "sagemaker_session=SESSION"),
        "trainium": f"est = PyTorch(entry_point='train.py', source_dir=SRC, role=ROLE, image_uri={neuron!r}, "
                    "instance_type='ml.trn1.32xlarge', instance_count=1, distribution={'torch_distributed': "
                    "{'enabled': True}})\nest.fit(wait=False, job_name=JOB)\n",
    })

    # input forms
    train = "'s3://sagemaker-us-west-2-123456789012/grid/train'"
    test = "'s3://sagemaker-us-west-2-123456789012/grid/test'"
    cases.update({
        "input-str": job("PyTorch", "2.0.0", GPU, 1, inputs=train),
        "input-training-input": job("PyTorch", "2.0.0", GPU, 2, inputs=f"TrainingInput({train}, content_type='text/csv', "
                                    "distribution='ShardedByS3Key')"),
        "input-dict": job("TensorFlow", "2.13.0", GPU, 1, inputs=f"{{'train': {train}, 'test': TrainingInput(s3_data={test}, "
                          f"input_mode='FastFile')}}"),
    })
    return cases


def test_the_grid_sends_the_same_create_training_job_from_both_sdks(sdk_v2):
    cases = grid()
    side = sdk_v2([{"id": case_id, "code": SETUP + code} for case_id, code in cases.items()])
    mismatches: dict[str, object] = {}
    for case_id in cases:
        v2, ours = side.v2[case_id], side.ours[case_id]
        if v2["error"] or ours["error"]:
            mismatches[case_id] = {"v2 error": v2["error"], "our error": ours["error"]}
            continue
        [v2_request] = requests(v2, "CreateTrainingJob")
        [our_request] = requests(ours, "CreateTrainingJob")
        our_request, v2_request = without_documented_differences(our_request, v2_request)
        if our_request != v2_request:
            keys = sorted(k for k in {*our_request, *v2_request} if our_request.get(k) != v2_request.get(k))
            mismatches[case_id] = {k: {"ours": our_request.get(k), "v2": v2_request.get(k)} for k in keys}
    matched = len(cases) - len(mismatches)
    print(f"\nSDK v2 parity grid: {len(cases)} CreateTrainingJob cases compared, {matched} match")
    assert len(cases) >= 60
    assert not mismatches, json.dumps(mismatches, indent=1)[:20000]
