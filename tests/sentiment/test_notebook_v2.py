"""notebooks/sagemaker_v2_dropin.ipynb: a notebook written for the SageMaker SDK v2 runs on sagelaunch with only
its imports changed, end to end (nbclient, an ipykernel of this Python): a local fit with TrainingInput channels
and a detailed ProfilerConfig, model_data, hyperparameters(), attach, deploy with v2's serializers, predict,
delete_endpoint — and the same estimator submitted to SageMaker (the session's moto server).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.sentiment.test_notebook import cell_text

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO_ROOT / "notebooks" / "sagemaker_v2_dropin.ipynb"
sys.path.insert(0, str(REPO_ROOT / "scripts"))
from sdk_v2_oracle import swap_imports  # noqa: E402  (the one table of v2 imports → ours)

# an import of one of sagelaunch's packages, or a name reached through one (`sagelaunch.launcher.local…`)
OURS = re.compile(r"^\s*(?:from|import)\s+(?:estimators|profiler_config|launcher|profiler|jobspec|sagelaunch)\b"
                  r"|\b(?:estimators|profiler_config|launcher|profiler|jobspec)\.\w", re.MULTILINE)


def test_only_the_imports_cell_differs_from_the_v2_notebook():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    [imports] = [c for c in nb.cells if "imports" in c.metadata.get("tags", [])]
    v2_lines = [line.removeprefix("#   ") for line in imports.source.splitlines() if line.startswith("#   from sagemaker")]
    ours = [line for line in imports.source.splitlines() if line.startswith("from ")]
    assert len(v2_lines) == len(ours) >= 5
    assert [swap_imports(line) for line in v2_lines] == ours  # each import is the v2 one, swapped by the table
    for cell in nb.cells:
        if cell.cell_type == "code" and cell is not imports:
            assert not OURS.search(cell.source), cell.source  # nothing else names sagelaunch's modules


@pytest.mark.slow
def test_v2_notebook_runs_end_to_end(tmp_path, monkeypatch, sagemaker_env):
    import boto3

    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))  # the kernel inherits it: a private registry
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="v2-notebook-data", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.upload_file(str(REPO_ROOT / "scripts" / "sentiment_data" / "train.jsonl"), "v2-notebook-data", "train.jsonl")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    [index] = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    output = tmp_path / "output"
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(
        f"EPOCHS = 1\nMAX_TRAIN_SAMPLES = 256\nMAX_EVAL_SAMPLES = 64\nOUTPUT_PATH = {str(output)!r}\n"
        "SAGEMAKER_INSTANCE_TYPE = 'ml.p4d.24xlarge'\nTRAIN_S3_URI = 's3://v2-notebook-data/train.jsonl'\n"
        "import sys\nprint('kernel python:', sys.executable)"))
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    text = "\n".join(cell_text(c) for c in nb.cells if c.cell_type == "code")
    assert f"kernel python: {sys.executable}" in text
    assert "'model_name_or_path': '\"tiny-roberta\"'" in text  # hyperparameters(): JSON-encoded, as v2 returns them
    [job] = re.findall(r"job: (roberta-sentiment-v2-\S+) Completed", text)
    [model_data] = re.findall(r"model data: (\S+)", text)
    assert model_data.removeprefix("file://") == f"{output}/{job}/output/model.tar.gz"
    assert (output / job / "output" / "model.tar.gz").is_file()
    assert any(p.is_file() for p in (output / job / "profiler").rglob("*"))  # the detailed profiler ran
    assert f"attached: {job} True" in text
    assert "'label':" in text and "endpoint deleted" in text
    # the SageMaker job: one CreateTrainingJob through the recording proxy, with the notebook's settings
    [create] = [r.json() for r in sagemaker_env.proxy.records if r.action == "CreateTrainingJob"]
    assert create["ResourceConfig"]["InstanceType"] == "ml.p4d.24xlarge"
    assert create["InputDataConfig"][0]["DataSource"]["S3DataSource"]["S3Uri"] == "s3://v2-notebook-data/train.jsonl"
    assert "ProfilingParameters" in create["ProfilerConfig"]
    assert re.search(rf"submitted: {re.escape(create['TrainingJobName'])} (InProgress|Completed)", text)
