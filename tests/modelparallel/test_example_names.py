"""The rest of the smdistributed names public SMP v1 examples import, in a job's Python (the job_modules stand-ins
on its path): each is the real thing, exercised on its input, not only importable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sagelaunch.launcher.local.job_modules import JOB_MODULES_ROOT

SCRIPT = r'''
import json, torch
import smdistributed.modelparallel.torch as smp
from smdistributed.modelparallel.torch.state_mod import state  # the GPT-2 example's fp16 utilities
from smdistributed.modelparallel.torch.utils import get_distribution_axis
from smdistributed.modelparallel.test.torch.utils import ATOL, FP16_Module, dump_model, verify  # the BERT example
from smdistributed.modelparallel.torch.nn.huggingface.gpt2 import (  # the May 2022 GPT-2 example
    translate_hf_state_dict_to_smdistributed, translate_state_dict_to_hf_gpt2)

smp.init({"_match_weights": True, "_fp32_grad_accumulation": False, "ddp": True})
torch.manual_seed(0)
model = smp.DistributedModel(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)))
out = {"state_is_smps": state is smp.state, "cfg_match_weights": state.cfg.match_weights,
       "state_model_is_model": state.model is model}
out["axes"] = [get_distribution_axis(p) for p in model.parameters()] + [get_distribution_axis(torch.ones(2))]
dumped = dump_model(model, "dump.pt")
out["dumped"] = sorted(dumped) == sorted(torch.load("dump.pt"))
verify(dumped, {k: v.clone() for k, v in dumped.items()})
bad = {k: v + 1e-3 for k, v in dumped.items()}
try:
    verify(dumped, bad)
except AssertionError as err:
    out["verify_error"] = str(err)
half = FP16_Module(torch.nn.Linear(4, 2))
y = half(torch.ones(1, 4))
out["fp16"] = [str(half.module.weight.dtype), str(y.dtype)]
hf = {"transformer.wte.weight": torch.ones(2), "lm_head.weight": torch.ones(2)}
out["translated"] = sorted(translate_hf_state_dict_to_smdistributed(hf, 16))
try:
    translate_hf_state_dict_to_smdistributed({"transformer.seq_layers.0.attention.query.weight": torch.ones(1)})
except ValueError as err:
    out["translate_error"] = str(err)
out["atol"] = ATOL
print("RESULT " + json.dumps(out))
'''


@pytest.mark.slow
def test_the_names_examples_import_work_in_a_job(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(JOB_MODULES_ROOT.parent),
                                                        str(JOB_MODULES_ROOT / "smdistributed")])}
    env.pop("SM_HP_MP_PARAMETERS", None)
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.split("RESULT ", 1)[1])
    assert out["state_is_smps"] and out["cfg_match_weights"] and out["state_model_is_model"]
    assert out["axes"] == [None] * 5  # degree 1: nothing is split; a tensor outside the model: not distributed
    assert out["dumped"]
    assert "max |difference| 0.001 > atol 1e-05" in out["verify_error"] and out["verify_error"].startswith("value['0.weight']")
    assert out["fp16"] == ["torch.float16", "torch.float32"]
    assert out["translated"] == ["lm_head.weight", "transformer.wte.weight"]
    assert "seq_layers" in out["translate_error"]
    assert out["atol"] == 1e-5


def test_every_familys_translations_keep_hugging_face_names_and_refuse_smps_layout():
    import torch

    from sagelaunch.modelparallel.errors import SMPValidationError
    from sagelaunch.modelparallel.nn.huggingface import bert, gpt2, gptj, gptneo, roberta
    from tests.modelparallel.models import build_gptj, build_roberta

    for model, functions in ((build_gptj(0), (gptj.translate_hf_state_dict_to_smdistributed_gptj,
                                              gptj.translate_hf_gptj_state_dict_to_smdistributed,
                                              gptj.translate_state_dict_to_hf_gptj)),
                             (build_roberta(0), (roberta.translate_hf_state_dict_to_smdistributed,
                                                 roberta.translate_hf_state_dict_to_smdistributed_roberta,
                                                 roberta.translate_state_dict_to_smdistributed,
                                                 roberta.translate_state_dict_to_hf_roberta))):
        state = model.state_dict()
        for translate in functions:
            out = translate(state)
            assert list(out) == list(state) and all(out[k] is state[k] for k in state)
            model.load_state_dict(out)  # what the scripts do with it
    smp_layout = {"transformer.seq_layers.0.attention.query.weight": torch.ones(1)}
    for translate in (gpt2.translate_hf_state_dict_to_smdistributed, bert.translate_state_dict_to_hf_bert,
                      roberta.translate_state_dict_to_hf_roberta, gptneo.translate_state_dict_to_hf_gptneo):
        with pytest.raises(SMPValidationError, match="seq_layers"):
            translate(smp_layout)
    with pytest.raises(SMPValidationError, match="'bert.pooler.dense.weight' is not a Hugging Face gptj name"):
        gptj.translate_state_dict_to_hf_gptj({"bert.pooler.dense.weight": torch.ones(1)})
