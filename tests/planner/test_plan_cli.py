"""`sagelaunch plan`: the table and the verdict, --json (the Plan record's JSON, read back), --search, bad input
in the family's one-line error; the memory chart renders in headless Chromium."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sagelaunch.cli import app
from sagelaunch.planner.plan import Plan
from sagelaunch.planner.search import SearchResult

GPT2_30B = {"model_type": "gpt2", "n_layer": 48, "n_embd": 7168, "n_head": 64, "vocab_size": 50264,
            "n_positions": 1024}
BASE = ["--instance-type", "ml.p4d.24xlarge", "--instance-count", "16", "--seq-len", "512", "--precision", "fp16"]


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT2_30B))
    return str(path)


def run(*args):
    return CliRunner().invoke(app, ["plan", *args], catch_exceptions=False)


def test_plan_prints_the_split_and_the_verdict(config):
    result = run(config, *BASE, "--global-batch", "64", "--tp", "8", "--activation-checkpointing")
    assert result.exit_code == 0, result.output
    assert "optimizer state" in result.output and "does not fit" in result.output
    assert "price unknown" in result.output


def test_plan_json_is_the_plan_record(config):
    result = run(config, *BASE, "--global-batch", "64", "--tp", "8", "--shard-optimizer-state",
                 "--activation-checkpointing", "--json")
    plan = Plan.model_validate_json(result.stdout)
    assert plan.verdict.status == "fits" and plan.layout.tp == 8 and plan.world_size == 128
    assert plan.speed is not None and 0 < plan.speed.mfu < 1


def test_plan_search_json(config):
    result = SearchResult.model_validate_json(run(config, *BASE, "--global-batch", "256", "--search", "--json").stdout)
    assert result.rows and result.why


def test_bad_input_is_one_error_line(config):
    result = CliRunner().invoke(app, ["plan", config, *BASE, "--global-batch", "64", "--tp", "3"])
    assert result.exit_code == 1 and "error:" in result.output and "tensor_parallel_degree" in result.output


@pytest.mark.browser
def test_the_memory_chart_renders_in_headless_chromium(config, tmp_path, page):
    chart = tmp_path / "memory.html"
    result = run(config, *BASE, "--global-batch", "256", "--search", "--chart", str(chart))
    assert result.exit_code == 0
    page.goto(chart.as_uri())
    page.wait_for_selector(".main-svg")
    bars = page.locator("g.trace.bars")
    assert bars.count() >= 4  # parameters, gradients, optimizer state, activations, …
    assert "GiB on the most loaded GPU" in page.content()
    assert page.console_errors == []


def test_a_job_file_naming_its_model_is_refused_by_validate_when_it_cannot_fit(tmp_path, config):
    """`sagelaunch validate JOB.yaml`: planned_model relative to the job file; 30B at tp 8 without optimizer
    sharding on 16 p4d is refused with the smallest change, before anything is built."""
    import shutil

    shutil.copy(config, tmp_path / "gpt2-30b.json")
    (tmp_path / "train.py").write_text("print('never runs')\n")
    job = tmp_path / "job.yaml"
    job.write_text(
        "framework: pytorch\nentry_point: train.py\nrole: arn:aws:iam::123456789012:role/R\nregion: us-west-2\n"
        "framework_version: '2.0.1'\npy_version: py310\ninstance_type: ml.p4d.24xlarge\ninstance_count: 16\n"
        "planned_model: gpt2-30b.json\n"
        "distribution:\n  smdistributed:\n    modelparallel:\n      enabled: true\n      parameters:\n"
        "        tensor_parallel_degree: 8\n        ddp: true\n        fp16: true\n"
        "  mpi:\n    enabled: true\n    processes_per_host: 8\n")
    result = CliRunner().invoke(app, ["validate", str(job)])
    assert result.exit_code == 1
    assert "cannot fit" in result.output and "shard_optimizer_state=True" in result.output


def test_a_price_per_hour_given_by_the_user_shows_the_cost_with_its_source(config):
    args = [config, *BASE, "--global-batch", "64", "--tp", "8", "--shard-optimizer-state",
            "--activation-checkpointing"]
    plain = run(*args, "--json")
    assert json.loads(plain.output)["cost"] is None  # the catalog has no price: "price unknown"
    priced = Plan.model_validate_json(run(*args, "--price-per-hour", "30", "--json").output)
    assert priced.cost is not None and priced.cost.usd_per_hour == pytest.approx(16 * 30.0)
    assert "given by the caller" in priced.cost.source
    text = " ".join(run(*args, "--price-per-hour", "30").output.split())  # as Rich wraps it
    assert "$480.00/hour" in text and "given by the caller" in text
    bad = CliRunner().invoke(app, ["plan", *args, "--price-per-hour", "-1"])
    assert bad.exit_code == 1 and "price_per_hour" in bad.output


def test_a_layout_that_does_not_fit_names_the_nearest_layouts_that_do(config):
    args = [config, *BASE, "--global-batch", "64", "--tp", "8", "--activation-checkpointing"]
    text = " ".join(run(*args).output.split())
    assert "does not fit" in text and "shard_optimizer_state=True (fits" in text
    nearest = json.loads(run(*args, "--json").output)["changes_that_fit"]
    changes = {n["change"] for n in nearest}
    assert {"shard_optimizer_state=True", "pipeline_parallel_degree=2"} <= changes
    assert all(not n["verdict"].startswith("does not fit") for n in nearest)
    fits = json.loads(run(config, *BASE, "--global-batch", "64", "--tp", "8", "--shard-optimizer-state",
                          "--activation-checkpointing", "--json").output)
    assert fits["changes_that_fit"] == []  # only a layout that does not fit gets alternatives
