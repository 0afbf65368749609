"""notebooks/roberta_finetune.ipynb executed end to end with nbclient on an ipykernel of this Python.

Like papermill, a cell after the one tagged "parameters" makes the run small (1 epoch on a subset);
everything else runs as written: estimator.fit with a ProfilerConfig on instance_type="local", the
metrics and the profile, the model check, packaging, a local deployment, predictions, clean-up.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO_ROOT / "notebooks" / "roberta_finetune.ipynb"


def cell_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "".join(parts)


@pytest.mark.slow
def test_notebook_runs_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))  # the kernel inherits it: a private job registry
    nb = nbformat.read(NOTEBOOK, as_version=4)
    [index] = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    output = tmp_path / "output"
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(
        f"EPOCHS = 1\nMAX_TRAIN_SAMPLES = 256\nMAX_EVAL_SAMPLES = 64\nOUTPUT_PATH = {str(output)!r}\n"
        "import sys\nprint('kernel python:', sys.executable)"))
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()

    text = "\n".join(cell_text(c) for c in nb.cells if c.cell_type == "code")
    assert f"kernel python: {sys.executable}" in text  # the notebook ran on this environment's Python
    assert "Completed" in text
    assert "test macro recall" in text
    assert "profiled steps" in text and "algo-1" in text  # step annotations and host utilisation
    assert "Covid cases are increasing fast!" in text  # test_trained_model printed its examples
    assert "code/inference.py" in text and "code/requirements.txt" in text
    assert "serving at http://127.0.0.1:" in text and "'label':" in text
    assert "refused as it should be: 400" in text and "endpoint deleted" in text
    # artifacts where the estimator's output_path said
    [job_dir] = [p for p in output.iterdir() if p.name.startswith("roberta-sentiment-nb-")]
    assert (job_dir / "output" / "model.tar.gz").is_file()
    assert any(p.is_file() for p in (job_dir / "profiler").rglob("*"))
    assert (output / "serving" / "model.tar.gz").is_file()
