"""SMP v1's `model.module.module` is the user's model (`model.module` is the data-parallel wrapper): example scripts
read `model.module.module.config`, and transformers' unwrap_model (`while hasattr(model, "module")`) must end at the
user's model, not loop. Parameter and state-dict names stay those of before. Checked on 1 rank and on 2 (tp=2)."""

from __future__ import annotations

import pytest

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun

GROUP = area.register(__name__, "module_module_worker", {1: [], 2: []})


@pytest.fixture(scope="module")
def worlds(_launches):
    return {size: _launches.ranks(GROUP, size) for size in (1, 2)}


@pytest.mark.parametrize("world", [1, 2])
def test_module_module_is_the_users_model(worlds, world):
    for got in worlds[world]:
        assert got["module_module_is_user"] and got["get_module_is_user"]
        assert got["view_is_stable"] and got["view_isinstance"] and got["write_through"]
        assert got["config_n_embd"] == 16 and got["config_through_view"]
        assert (got["tp_sharded"] > 0) == (world == 2)  # tp=2 really shards GPT-2, and the names still hold


@pytest.mark.parametrize("world", [1, 2])
def test_transformers_unwrap_model_ends_at_the_users_model(worlds, world):
    for got in worlds[world]:
        assert got["unwrap_own_is_user"] and got["unwrap_recursive_is_user"]


@pytest.mark.parametrize("world", [1, 2])
def test_parameter_and_state_dict_names_are_unchanged(worlds, world):
    for got in worlds[world]:
        assert got["named_parameters"] == got["expected_named_parameters"]  # `module.<name>`, as before
        assert got["view_named_parameters"] == got["user_named_parameters"]
        assert got["state_dict_keys"] == got["expected_state_dict_keys"]
        assert got["module_state_dict_keys"] == got["expected_state_dict_keys"]
        assert got["trained"]
