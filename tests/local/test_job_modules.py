"""SageMaker's module names in local jobs: given when the real library is absent, never shadowing one."""

import os
import subprocess
import sys
from types import SimpleNamespace

from sagelaunch.launcher.local.job_modules import JOB_MODULES_ROOT, job_module_paths

ROOT = JOB_MODULES_ROOT.parent
MP_JOB = SimpleNamespace(mp_parameters={"partitions": 1})


TOOLKIT_PATH = str(JOB_MODULES_ROOT / "sagemaker_training")
TOOLKIT_NOTE = ("sagemaker_training: sagelaunch's environment and entry_point from SM_TRAINING_ENV "
                "(the real library is not installed)")
# what every job gets: SageMaker Profiler's names and the training toolkit's
PROFILER_PATHS = [str(JOB_MODULES_ROOT / "smppy"), str(JOB_MODULES_ROOT / "smprof"), TOOLKIT_PATH]
PROFILER_NOTES = ["smppy: sagelaunch's profiler (the real library is not installed)",
                  "smprof: sagelaunch's profiler (the real library is not installed)", TOOLKIT_NOTE]


def test_an_smp_job_gets_smdistributed_as_sagelaunchs_modelparallel():
    paths, notes = job_module_paths(MP_JOB, sys.executable)
    assert paths == [str(JOB_MODULES_ROOT / "smdistributed"), *PROFILER_PATHS]
    assert notes == ["smdistributed.modelparallel: sagelaunch's modelparallel (the real library is not installed)",
                     *PROFILER_NOTES]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *paths])}
    out = subprocess.run([sys.executable, "-c", "import smdistributed.modelparallel.torch as smp; from sagelaunch import modelparallel; "
                          "print(smp is modelparallel)"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_job_without_model_parallelism_gets_no_smdistributed():
    assert job_module_paths(SimpleNamespace(mp_parameters=None), sys.executable) == (PROFILER_PATHS, PROFILER_NOTES)


def test_every_job_gets_sagemaker_profilers_names_as_sagelaunchs_profiler():
    paths, _ = job_module_paths(SimpleNamespace(mp_parameters=None), sys.executable)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *paths])}
    out = subprocess.run([sys.executable, "-c", "import smppy, smprof; from sagelaunch.profiler import smprof as ours; "
                          "print(smppy is smprof is ours, smppy.SMProfiler.instance() is ours.SMProfiler.instance(), "
                          "callable(smppy.annotate), smppy.Config.__module__)"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True", "sagelaunch.profiler.settings"]


def test_a_real_installed_library_is_never_shadowed(tmp_path, monkeypatch):
    real = tmp_path / "smdistributed" / "modelparallel"
    real.mkdir(parents=True)
    (real.parent / "__init__.py").write_text("")
    (real / "__init__.py").write_text("")
    (tmp_path / "smprof").mkdir()  # SageMaker Profiler's package, as the current DLCs install it
    (tmp_path / "smprof" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the user's environment, which the job inherits
    paths, notes = job_module_paths(MP_JOB, sys.executable)
    assert paths == [str(JOB_MODULES_ROOT / "smppy"), TOOLKIT_PATH]
    assert notes == ["smdistributed.modelparallel: the installed library", PROFILER_NOTES[0],
                     "smprof: the installed library", TOOLKIT_NOTE]


SURFACE_PROBE = """
import importlib, sys
import smdistributed.modelparallel, smdistributed.modelparallel.torch as smp
from sagelaunch import modelparallel
import smdistributed.modelparallel.torch.nn
import smdistributed.modelparallel.torch.nn.huggingface.gpt2 as alias_gpt2
from smdistributed.modelparallel.torch.nn import FusedLayerNorm
from smdistributed.modelparallel.torch.model import DistributedModel
from smdistributed.modelparallel.torch.optimizers import FusedLAMB
from smdistributed.modelparallel.torch.amp import GradScaler
import sagelaunch.modelparallel.nn, sagelaunch.modelparallel.nn.huggingface.gpt2 as gpt2
assert sys.modules["smdistributed.modelparallel.torch.nn"] is modelparallel.nn  # one module object, not a copy
assert alias_gpt2 is gpt2 and FusedLayerNorm is modelparallel.nn.FusedLayerNorm
assert modelparallel.nn.__spec__.name == "sagelaunch.modelparallel.nn"  # the alias leaves the module's own spec alone
assert DistributedModel is smp.DistributedModel and smp.model.DistributedModel is DistributedModel
assert smp.optimizers.FusedLAMB is FusedLAMB and smp.amp.GradScaler is GradScaler
assert smp.utils.rmsg("x") == "x"
for name in ("get_tp_group", "get_pp_group", "get_dp_group", "get_mp_group", "get_rdp_group", "get_world_group",
             "model_creation", "set_partition", "delay_param_initialization", "state", "step", "save", "load",
             "save_checkpoint", "resume_from_checkpoint", "DistributedOptimizer", "set_activation_checkpointing"):
    getattr(smp, name)
print(smdistributed.modelparallel.__version__, smp.__version__)
try:
    import smdistributed.modelparallel.torch.no_such_module
except ModuleNotFoundError as err:
    print(err.name)
"""


def test_submodules_alias_and_the_v1_surface_imports_in_a_fresh_process():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(JOB_MODULES_ROOT / "smdistributed")])}
    out = subprocess.run([sys.executable, "-c", SURFACE_PROBE], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.15.0", "1.15.0", "smdistributed.modelparallel.torch.no_such_module"]
