"""What v2 has and sagelaunch does not mirror is refused by name, in each form a notebook reaches it (an import of a
module, a name from a mirrored module, an attribute of the package), never a bare ModuleNotFoundError or
AttributeError; each refused name is checked to exist in the real SDK v2, so the refusal speaks of a real v2 name."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec.errors import SagelaunchError

# (the statement a notebook writes, the v2 name it reaches)
REFUSED = [
    ("from sagemaker.sklearn import SKLearn", "sagemaker.sklearn"),
    ("import sagemaker.xgboost.estimator\nsagemaker.xgboost.estimator.XGBoost", "sagemaker.xgboost"),
    ("from sagemaker.processing import ScriptProcessor", "sagemaker.processing"),
    ("from sagemaker import LocalSession", "sagemaker.LocalSession"),
    ("import sagemaker\nsagemaker.Predictor", "sagemaker.Predictor"),
    ("from sagemaker.estimator import EstimatorBase", "sagemaker.estimator.EstimatorBase"),
    ("from sagemaker.tuner import HyperparameterTuningJobAnalytics, create_identical_dataset_and_algorithm_tuner",
     "sagemaker.tuner.create_identical_dataset_and_algorithm_tuner"),
    ("from sagemaker.pytorch import PyTorchProcessor", "sagemaker.pytorch.PyTorchProcessor"),
]


@pytest.mark.parametrize(("statement", "name"), REFUSED, ids=[n for _, n in REFUSED])
def test_a_v2_name_we_lack_is_refused_by_name(statement, name):
    from scripts.sdk_v2_oracle import swap_imports

    with pytest.raises(SagelaunchError, match=rf"^{name} is not implemented by sagelaunch; use the SageMaker SDK v2") as err:
        exec(swap_imports(statement), {})
    assert "sagemaker.tuner" in err.value.allowed and err.value.field == name


def test_each_refused_name_exists_in_sdk_v2(sdk_v2_alone):
    missing = sdk_v2_alone("RESULT = []\nfor statement, name in REFUSED:\n    try:\n        exec(statement, {})\n"
                           "    except Exception as e:\n        RESULT.append(f'{name}: {e}')\n", REFUSED=REFUSED)
    assert missing == []


def test_private_and_dunder_names_keep_pythons_behaviour():
    import sagelaunch.sagemaker as sagemaker
    import sagelaunch.sagemaker.estimator as estimator

    assert hasattr(sagemaker, "__path__") and not hasattr(sagemaker, "_nothing") and not hasattr(estimator, "_x")
    assert sagemaker.tuner.HyperparameterTuner.__name__ == "HyperparameterTuner"
