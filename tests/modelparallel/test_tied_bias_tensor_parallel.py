"""BertForMaskedLM under tensor parallelism keeps transformers' ties: the MLM decoder's weight is the word
embedding's and its bias is cls.predictions.bias (`_tied_weights_keys`). Both vocabulary-parallel shards stay one
parameter each, so the bias gets its gradient and DDP over tp×dp reduces every parameter. tp=2 and tp2×dp2 train
3 steps under torchrun and match one process (loss, every gradient, gathered state_dict within 1e-5), each rank
holding only its shards."""

from __future__ import annotations

import pytest

from tests.modelparallel import area
from tests.modelparallel.test_equivalence import _check_case
from tests.modelparallel.test_parallel_models import SHARDS, _check_sharded

pytestmark = pytest.mark.slow  # real torchrun processes

TP2 = {"tensor_parallel_degree": 2, "ddp": True}
TP2_CASE = {"name": "bert_mlm_tp2", "kind": "train", "model": "bert_mlm", "config": TP2, "local_batch": 2,
            "tensor_parallel": True}
TP2_DP2_CASE = {**TP2_CASE, "name": "bert_mlm_tp2_dp2"}
SHARDS["bert_mlm"] = {  # vocabulary 64, hidden 16, intermediate 32 (models.build_bert_mlm), tp=2
    "bert.embeddings.word_embeddings.weight": [32, 16], "cls.predictions.bias": [32],
    "bert.encoder.layer.0.attention.self.query.weight": [8, 16],
    "bert.encoder.layer.0.attention.output.dense.weight": [16, 8],
    "bert.encoder.layer.0.intermediate.dense.weight": [16, 16], "bert.encoder.layer.0.output.dense.weight": [16, 16]}


GROUP = area.register(__name__, "mp_worker", {2: [TP2_CASE], 4: [TP2_DP2_CASE]})


@pytest.fixture(scope="module")
def worlds(_launches):
    return {size: _launches.ranks(GROUP, size) for size in (2, 4)}


@pytest.mark.parametrize("case, size", [(TP2_CASE, 2), (TP2_DP2_CASE, 4)], ids=["tp2", "tp2_dp2"])
def test_mlm_bias_stays_tied_to_the_decoder_and_trains_as_one_process(case, size, worlds):
    per_rank = worlds[size]
    _check_case(case, per_rank)
    _check_sharded(case, per_rank)
    for results in per_rank:
        res = results[case["name"]]
        # one parameter under the name transformers gives it first: no separate, untrained decoder.bias
        assert "cls.predictions.decoder.bias" not in res["local_shapes"], sorted(res["local_shapes"])
        assert all("cls.predictions.bias" in grads for grads in res["grads"])
