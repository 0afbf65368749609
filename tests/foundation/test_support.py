"""The support matrix: required facts, their sources, image URIs, and agreement with botocore's model."""

from __future__ import annotations

import botocore.session
import pytest

from sagelaunch.jobspec import catalog as support
from sagelaunch.launcher.common import environment


@pytest.fixture(scope="module")
def sagemaker_model():
    return botocore.session.get_session().get_service_model("sagemaker")


def test_profiler_images_resolve_to_the_exact_full_tags():
    expected = {
        ("pytorch", "2.0.0", "py310"): "pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker",
        ("pytorch", "1.13.1", "py39"): "pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker",
        ("tensorflow", "2.12.0", "py310"): "tensorflow-training:2.12.0-gpu-py310-cu118-ubuntu20.04-sagemaker",
        ("tensorflow", "2.11.1", "py39"): "tensorflow-training:2.11.1-gpu-py39-cu112-ubuntu20.04-sagemaker",
    }
    for (fw, version, py), tail in expected.items():
        for region in ("us-east-1", "eu-west-1"):
            uri = support.training_image_uri(fw, version, py, region, "ml.p4d.24xlarge")
            assert uri == f"763104351884.dkr.ecr.{region}.amazonaws.com/{tail}"
            assert support.profiler_image_uri(fw, version, region) == uri


def test_profiler_regions_and_instance_types():
    p = support.profiler_facts()
    assert p["regions"] == ["us-east-1", "us-east-2", "us-west-2", "eu-central-1", "eu-west-1"]
    assert p["instance_types"] == ["ml.p4d.24xlarge", "ml.p3dn.24xlarge", "ml.g4dn.12xlarge"]


def test_gpu_facts_of_the_training_families():
    cases = {"ml.p4d.24xlarge": (8, "A100", 40), "ml.p4de.24xlarge": (8, "A100", 80), "ml.p5.48xlarge": (8, "H100", 80),
             "ml.p3.2xlarge": (1, "V100", 16), "ml.p3dn.24xlarge": (8, "V100", 32), "ml.g4dn.12xlarge": (4, "T4", 16),
             "ml.g5.48xlarge": (8, "A10G", 24), "ml.g6.12xlarge": (4, "L4", 24)}
    for itype, (gpus, model, mem) in cases.items():
        info = support.instance_info(itype)
        assert (info["gpus"], info["gpu"], info["gpu_memory_gib"]) == (gpus, model, mem)
    assert support.instance_info("ml.trn1.32xlarge")["accelerators"] == 16
    for cpu in ("ml.m5.xlarge", "ml.c5.2xlarge", "ml.m6i.large", "ml.c6i.4xlarge"):
        assert support.instance_info(cpu) == {**support.instance_info(cpu), "kind": "cpu", "gpus": 0}


def test_every_fact_block_names_its_source():
    m = support.matrix()
    for block in ("dlc_registry_accounts", "profiler", "distribution", "instance_types", "inference_instance_types"):
        assert m[block]["_source"]
    for fw in m["frameworks"].values():
        for scope in fw.values():
            assert scope["_source"]
    for name, info in support.matrix()["instance_types"].items():
        if not name.startswith("_"):
            assert info["source"].split(":")[0] in ("sdk", "aws")


def test_instance_types_exist_in_botocores_training_enum(sagemaker_model):
    enum = set(sagemaker_model.shape_for("TrainingInstanceType").enum)
    missing = [t for t in support.training_instance_types() if t not in enum]
    assert missing == []


def test_recent_pytorch_versions_are_offered():
    versions = support.framework_versions("pytorch")
    for v in ("2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.1", "2.6.0"):
        assert v in versions
    assert support.py_versions("pytorch", "2.6.0") == ["py312"]
    assert support.version_entry("pytorch", "2.6.0")["cuda"] == "cu126"
    assert support.resolve_framework_version("pytorch", "2.0") == "2.0.1"


def test_cpu_images_and_registry_accounts():
    assert support.training_image_uri("pytorch", "2.0.0", "py310", "us-west-2", "ml.m5.xlarge").endswith(
        "pytorch-training:2.0.0-cpu-py310-ubuntu20.04-sagemaker")
    assert support.registry_account("af-south-1") == "626614931356"
    assert support.registry("cn-north-1") == "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn"


def test_inference_images_for_deployment():
    assert support.inference_image_uri("pytorch", "2.0.0", "us-west-2", "ml.c7g.4xlarge") == (
        "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference-graviton:2.0.0-cpu-py310-ubuntu20.04-sagemaker")
    # serving images carry exactly SDK v2's tags (tests/parity_v2/test_images.py checks every version)
    assert support.inference_image_uri("pytorch", "2.0.1", "us-west-2", "ml.g4dn.xlarge").endswith(
        "pytorch-inference:2.0.1-gpu-py310")
    assert support.inference_image_uri("tensorflow", "2.11.0", "us-west-2", "ml.m5.large").endswith(
        "tensorflow-inference:2.11.0-cpu")  # its own image, not 2.11.1's
    # a training-only version has no serving image: refused as v2 refuses it, naming the nearest one
    with pytest.raises(ValueError, match=r"framework_version='2.8.0' has no pytorch inference image.*'2.6.0'"):
        support.inference_image_uri("pytorch", "2.8.0", "us-west-2", "ml.m5.large")
    assert support.is_graviton("ml.m6g.xlarge") and not support.is_graviton("ml.m5.xlarge")


def test_default_region_without_network(monkeypatch, tmp_path):
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "config"
    config.write_text("[default]\nregion = eu-central-1\n[profile work]\nregion = ap-south-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    assert environment.default_region() == "eu-central-1"
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert environment.default_region() == "ap-south-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-2")
    assert environment.default_region() == "us-east-2"
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert environment.default_region() == "eu-west-1"


def test_every_image_tag_names_its_source():
    sources = support.matrix()["sources"]
    for fw, scopes in support.matrix()["frameworks"].items():
        for scope, block in scopes.items():
            for version, entry in block["versions"].items():
                assert entry.get("tag_source"), (fw, scope, version)
                assert any(key in entry["tag_source"] for key in sources), (fw, scope, version, entry["tag_source"])


def test_versions_v2_accepts_are_accepted_with_v2s_images():
    # the versions of issue 28's notebooks: v2's moving tags, old images in their own accounts, v2's aliases
    assert support.training_image_uri("pytorch", "1.5.0", "py3", "us-east-1", "ml.m5.xlarge") == (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:1.5.0-cpu-py3")
    assert support.training_image_uri("pytorch", "1.10", "py38", "us-east-1", "ml.g5.xlarge").endswith(
        "pytorch-training:1.10-gpu-py38")  # v2 tags an alias as written
    assert support.resolve_framework_version("pytorch", "1.10") == "1.10.2"
    assert support.training_image_uri("tensorflow", "2.3.1", "py37", "us-east-1", "ml.p4d.24xlarge").endswith(
        "tensorflow-training:2.3.1-gpu-py37-cu110-ubuntu18.04")  # v2's p4d container version
    assert support.training_image_uri("pytorch", "0.4.0", "py3", "us-east-1", "ml.m5.xlarge") == (
        "520713654638.dkr.ecr.us-east-1.amazonaws.com/sagemaker-pytorch:0.4.0-cpu-py3")
    assert support.training_image_uri("tensorflow", "1.13.1", "py2", "us-east-1", "ml.m5.xlarge").endswith(
        "/sagemaker-tensorflow-scriptmode:1.13.1-cpu-py2")  # v2 keys this version's repository by Python
    with pytest.raises(ValueError, match=r"framework_version='1.7.0' has no pytorch training image.*1\.7\.1"):
        support.resolve_framework_version("pytorch", "1.7.0")


def test_support_status_names_unpatched_versions():
    from datetime import date

    assert support.support_status("pytorch", "2.8.0", today=date(2026, 8, 6)) is None  # last day of patches
    assert "end of patch was 2026-08-06" in support.support_status("pytorch", "2.8.0", today=date(2026, 8, 7))
    assert "not in the DLC framework support policy" in support.support_status("pytorch", "1.5.0")
    assert "TensorFlow 2.3 inference" in support.support_status("tensorflow", "2.3.1", "inference")
    with pytest.warns(support.UnpatchedVersionWarning, match="PyTorch 1.5 training"):
        support.warn_if_unpatched("pytorch", "1.5.0")


def test_unverified_full_tags_fall_back_to_moving_tags():
    assert support.training_image_uri("tensorflow", "2.14.1", "py310", "us-west-2", "ml.g5.xlarge").endswith(
        "tensorflow-training:2.14.1-gpu-py310")
    with pytest.raises(ValueError, match="no CPU"):
        support.training_image_uri("tensorflow", "2.11.1", "py39", "us-west-2", "ml.m5.xlarge")
    assert support.training_image_uri("pytorch", "2.8.0", "py312", "us-west-2", "ml.p4d.24xlarge").endswith(
        "pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-sagemaker")
