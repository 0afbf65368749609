"""In-process checks of SMP's loss scalers and the fp16/bf16 parameter rules (the training itself: test_amp.py)."""

from __future__ import annotations

import pytest

from sagelaunch.modelparallel.precision.amp_scaler import DynamicLossScaler, LossScaler
from sagelaunch.modelparallel.core.config import check_supported, load_parameters
from sagelaunch.modelparallel.errors import SMPValidationError


def _scales(scaler, overflows):
    out = []
    for overflow in overflows:
        scaler.update_scale(overflow)
        out.append(scaler.loss_scale)
    return out


def test_dynamic_scaler_backs_off_grows_and_stops_at_min_scale():
    scaler = DynamicLossScaler(init_scale=8.0, scale_window=3, min_scale=2.0)
    assert scaler.loss_scale == 8.0
    # halve on each overflow (never below min_scale); double after scale_window clean steps since the last one
    assert _scales(scaler, [True, True, True, False, False, False, False]) == [4.0, 2.0, 2.0, 2.0, 2.0, 4.0, 4.0]


def test_dynamic_scaler_delayed_shift_is_the_examples_hysteresis():
    # the GPT-2 example's dynamic_loss_args: the first overflow only uses up one unit of hysteresis
    scaler = DynamicLossScaler(init_scale=2.0**32, scale_window=1000, min_scale=1, delayed_shift=2)
    assert _scales(scaler, [True, True, True]) == [2.0**32, 2.0**31, 2.0**30]
    assert DynamicLossScaler().loss_scale == 2.0**32  # SMP's default start


def test_scaler_arguments_are_checked_by_name():
    with pytest.raises(SMPValidationError, match=r"unknown key\(s\) scale_windw; allowed: init_scale, scale_factor, "
                                                 r"scale_window"):
        DynamicLossScaler(scale_windw=10)
    with pytest.raises(SMPValidationError, match=r"static_loss_scale=0\): a positive number is required"):
        LossScaler(0)
    from sagelaunch.modelparallel.precision.amp_optimizer import make_scaler

    with pytest.raises(SMPValidationError, match=r"static_loss_scale=None, dynamic_loss_scale=False\) with fp16"):
        make_scaler(True, None, False, {})
    assert make_scaler(True, 128.0, False, {}).loss_scale == 128.0
    assert make_scaler(False, None, True, {"init_scale": 4.0}).loss_scale == 1.0  # bf16 is never scaled


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("layout", [{"tensor_parallel_degree": 2, "shard_optimizer_state": True},
                                    {"pipeline_parallel_degree": 2}, {"sharded_data_parallel_degree": 2}])
def test_fp16_and_bf16_are_accepted_with_every_layout(monkeypatch, precision, layout):
    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    assert check_supported(load_parameters({precision: True, "ddp": True, **layout})) == []
