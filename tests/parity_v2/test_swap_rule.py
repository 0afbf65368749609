"""The one swap rule: v2's module tree mirrored under `sagelaunch.sagemaker`.

- README states the rule with exactly the forms `SWAP_RULE` holds (one table);
- every mirrored module is one of v2's, and every name it exports is importable from the same path in the real
  SDK v2 (the oracle, in its own interpreter) — so a v2 import line that works with v2 finds the same name here;
- the mirror is as light as `import sagelaunch.estimators` (no torch, no boto3);
- `swap_imports` rewrites each form of import line, and only import lines.
"""

from __future__ import annotations

import json
import pkgutil
import re
import subprocess
import sys

import pytest

import sagelaunch.sagemaker as mirror
from scripts.sdk_v2_oracle import SWAP_RULE, swap_imports
from tests.fixtures.sdk_v2 import ROOT


def mirrored_modules() -> dict[str, list[str]]:
    """v2 module path → the names our mirror of it exports."""
    import importlib

    out = {"sagemaker": list(mirror.__all__)}
    for info in pkgutil.walk_packages(mirror.__path__, "sagelaunch.sagemaker."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):  # the mirror's own machinery (_not_mirrored), not v2's
            continue
        module = importlib.import_module(info.name)
        out[info.name.removeprefix("sagelaunch.")] = list(getattr(module, "__all__", []))
    return out


def test_readme_states_the_rule_of_the_oracle():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From SageMaker SDK v2", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", section, re.MULTILINE)
    assert rows == list(SWAP_RULE)


def test_every_mirrored_name_exists_at_the_same_path_in_sdk_v2(sdk_v2_alone):
    modules = mirrored_modules()
    assert len(modules) >= 14 and all(modules.values()), modules
    probe = ("import importlib\nRESULT = []\n"
             "for module, names in MODULES.items():\n"
             "    m = importlib.import_module(module)\n"
             "    RESULT += [f'{module}.{n}' for n in names if n != '__version__' and not hasattr(m, n)]\n")
    assert sdk_v2_alone(probe, MODULES=modules) == []


def test_the_mirror_is_as_light_as_estimators():
    code = ("import sys, json, pkgutil, importlib; import sagelaunch.sagemaker as s\n"
            "[importlib.import_module(i.name) for i in pkgutil.walk_packages(s.__path__, 'sagelaunch.sagemaker.')]\n"
            "print(json.dumps([m for m in ('torch', 'boto3', 'botocore', 'transformers', 'numpy') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_swap_imports_rewrites_each_form_and_nothing_else():
    v2 = ("import sagemaker\nimport sagemaker.pytorch\nimport sagemaker.debugger as dbg\n"
          "from sagemaker import get_execution_role\n    from sagemaker.pytorch.model import PyTorchModel\n"
          "import sagemakerx\nsession = sagemaker.Session()  # from sagemaker import x\n")
    assert swap_imports(v2) == (
        "import sagelaunch.sagemaker as sagemaker\nimport sagelaunch.sagemaker as sagemaker\n"
        "import sagelaunch.sagemaker.debugger as dbg\nfrom sagelaunch.sagemaker import get_execution_role\n"
        "    from sagelaunch.sagemaker.pytorch.model import PyTorchModel\nimport sagemakerx\n"
        "session = sagemaker.Session()  # from sagemaker import x\n")
    namespace: dict = {}
    exec(swap_imports("import sagemaker.pytorch\nE = sagemaker.pytorch.PyTorch\nR = sagemaker.get_execution_role"),
         namespace)
    from sagelaunch.estimators import PyTorch
    from sagelaunch.estimators.session import get_execution_role

    assert namespace["E"] is PyTorch and namespace["R"] is get_execution_role
