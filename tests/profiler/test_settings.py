"""Config.resolved(): CPU-operator recording is off by default; RecordCpuOps / Config(record_cpu_ops=) turn it on."""

from __future__ import annotations

import json
import logging

import pytest

from sagelaunch.profiler.settings import Config


def resolve(monkeypatch, tmp_path, params: dict | None, config: Config | None = None) -> Config:
    if params is None:
        monkeypatch.setenv("SAGELAUNCH_PROFILER_CONFIG", str(tmp_path / "absent.json"))
    else:
        path = tmp_path / "profilerconfig.json"
        path.write_text(json.dumps({"ProfilingIntervalInMilliseconds": 100, "ProfilingParameters": params}))
        monkeypatch.setenv("SAGELAUNCH_PROFILER_CONFIG", str(path))
    return (config or Config()).resolved()


def test_cpu_ops_are_opt_in(monkeypatch, tmp_path):
    assert resolve(monkeypatch, tmp_path, None).record_cpu_ops is False  # no profilerconfig.json at all
    assert resolve(monkeypatch, tmp_path, {"CPUProfilingDuration": "60"}).record_cpu_ops is False


@pytest.mark.parametrize(("raw", "expected"), [("false", False), ("False", False), ("0", False), ("no", False),
                                               ("true", True), ("TRUE", True), ("1", True), ("", False)])
def test_record_cpu_ops_parameter(monkeypatch, tmp_path, raw, expected):
    assert resolve(monkeypatch, tmp_path, {"RecordCpuOps": raw}).record_cpu_ops is expected


def test_unreadable_value_keeps_the_default_and_says_so(monkeypatch, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="sagelaunch.profiler"):
        assert resolve(monkeypatch, tmp_path, {"RecordCpuOps": "sometimes"}).record_cpu_ops is False
    assert "RecordCpuOps='sometimes' is not true/false" in caplog.text


def test_the_scripts_config_wins_over_the_file(monkeypatch, tmp_path):
    assert resolve(monkeypatch, tmp_path, {"RecordCpuOps": "true"}, Config(record_cpu_ops=False)).record_cpu_ops is False
    assert resolve(monkeypatch, tmp_path, {"RecordCpuOps": "false"}, Config(record_cpu_ops=True)).record_cpu_ops is True


def test_the_cpu_operator_duty_cycle_defaults_and_parameters(monkeypatch, tmp_path):
    from sagelaunch.jobspec.contract import DEFAULT_CPU_OPS_EVERY_STEPS, DEFAULT_CPU_OPS_STEPS

    c = resolve(monkeypatch, tmp_path, None)
    assert (c.cpu_ops_steps, c.cpu_ops_every_steps) == (DEFAULT_CPU_OPS_STEPS, DEFAULT_CPU_OPS_EVERY_STEPS)
    c = resolve(monkeypatch, tmp_path, {"RecordCpuOpsSteps": "3", "RecordCpuOpsEverySteps": "30"})
    assert (c.cpu_ops_steps, c.cpu_ops_every_steps) == (3, 30)
    c = resolve(monkeypatch, tmp_path, {"RecordCpuOpsSteps": "500"})  # more than a cycle: every step
    assert (c.cpu_ops_steps, c.cpu_ops_every_steps) == (500, 500)
    c = resolve(monkeypatch, tmp_path, {"RecordCpuOpsSteps": "3"}, Config(cpu_ops_steps=1, cpu_ops_every_steps=1))
    assert (c.cpu_ops_steps, c.cpu_ops_every_steps) == (1, 1)


def test_a_bad_duty_cycle_parameter_keeps_the_default_and_says_so(monkeypatch, tmp_path, caplog):
    from sagelaunch.jobspec.contract import DEFAULT_CPU_OPS_EVERY_STEPS

    with caplog.at_level(logging.WARNING, logger="sagelaunch.profiler"):
        c = resolve(monkeypatch, tmp_path, {"RecordCpuOpsEverySteps": "-2"})
    assert c.cpu_ops_every_steps == DEFAULT_CPU_OPS_EVERY_STEPS and "RecordCpuOpsEverySteps='-2' is not a positive number of steps" in caplog.text


@pytest.mark.parametrize("kwargs, says", [
    ({"cpu_ops_steps": 0}, "Config(cpu_ops_steps=0): a whole number of steps ≥ 1"),
    ({"cpu_ops_every_steps": 2.5}, "Config(cpu_ops_every_steps=2.5): a whole number of steps ≥ 1"),
    ({"cpu_ops_steps": 5, "cpu_ops_every_steps": 2}, "cpu_ops_steps must be ≤ cpu_ops_every_steps; use cpu_ops_every_steps=5"),
])
def test_a_bad_duty_cycle_in_the_script_is_refused_naming_it(kwargs, says):
    with pytest.raises(ValueError) as err:
        Config(**kwargs)
    assert says in str(err.value)
