"""A local transform job's run over real files: records split by split_type, batched by strategy and max_payload,
answers written to <name>.out under the output folder, and SageMaker's failure modes (a record over the payload
limit, a model error) ending the job Failed with the reason; options only SageMaker has are refused by name."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.sagemaker.transform import TransformJobFailedError
from sagelaunch.launcher.local.transform import run_local_transform
from sagelaunch.launcher.common.transform_request import TransformSettings


def _settings(tmp_path, **changes):
    base = dict(job_name="t-job", model_name="m", instance_count=1, instance_type="local",
                data=str(tmp_path / "in"), output_path=str(tmp_path / "out"), content_type="text/csv")
    return TransformSettings(**{**base, **changes})


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.csv").write_text("1,2\n3,4\n5,6\n")
    (tmp_path / "in" / "sub" / "b.csv").write_text("7,8\n")
    return tmp_path


def _recording():
    sent: list[bytes] = []

    def invoke(body: bytes, content_type: str, accept: str) -> bytes:
        sent.append(body)
        return b"".join(b"<" + line + b">\n" for line in body.splitlines())

    return sent, invoke


def test_single_record_lines_assembled_by_line(inputs):
    sent, invoke = _recording()
    job = run_local_transform(_settings(inputs, split_type="Line", strategy="SingleRecord", assemble_with="Line"),
                              invoke, None)
    assert job.wait()["TransformJobStatus"] == "Completed"
    assert (inputs / "out" / "a.csv.out").read_text() == "<1,2>\n<3,4>\n<5,6>"
    assert (inputs / "out" / "sub" / "b.csv.out").read_text() == "<7,8>"
    assert len(sent) == 4  # one request per record


def test_multi_record_batches_within_max_payload(inputs):
    sent, invoke = _recording()
    run_local_transform(_settings(inputs, split_type="Line", strategy="MultiRecord"), invoke, None).wait()
    assert sent[0] == b"1,2\n3,4\n5,6\n" and len(sent) == 2  # one request per file: all records fit


def test_whole_file_without_split_type(inputs):
    sent, invoke = _recording()
    run_local_transform(_settings(inputs), invoke, None).wait()
    assert sent == [b"1,2\n3,4\n5,6\n", b"7,8\n"]


def test_a_record_over_max_payload_fails_the_job_naming_the_file(inputs):
    (inputs / "in" / "a.csv").write_bytes(b"x" * (1024 * 1024 + 10) + b"\n")
    _, invoke = _recording()
    job = run_local_transform(_settings(inputs, split_type="Line", max_payload=1), invoke, None)
    with pytest.raises(TransformJobFailedError, match="a.csv.*exceeds MaxPayloadInMB"):
        job.wait()
    assert job.describe()["TransformJobStatus"] == "Failed"


def test_a_model_error_fails_the_job(inputs):
    def invoke(body, content_type, accept):
        raise RuntimeError("the model answered 500: boom")

    job = run_local_transform(_settings(inputs), invoke, None)
    with pytest.raises(TransformJobFailedError, match="boom"):
        job.wait()


@pytest.mark.parametrize("option", [{"split_type": "RecordIO"}, {"input_filter": "$[1:]"}, {"join_source": "Input"}])
def test_sagemaker_only_options_are_refused_by_name(inputs, option):
    with pytest.raises(SagelaunchError, match=next(iter(option))):
        run_local_transform(_settings(inputs, **option), _recording()[1], None)


def test_bad_settings_are_refused_with_the_choices(tmp_path):
    with pytest.raises(SagelaunchError, match="MultiRecord"):
        _settings(tmp_path, strategy="Multi")
