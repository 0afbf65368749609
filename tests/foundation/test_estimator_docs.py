"""Every argument of the estimators and the models is documented where it is defined (SDK v2's meaning):
a docstring under each pydantic field, an `name: meaning` line in the class docstring of the v2 model classes."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from sagelaunch.estimators import Estimator, HuggingFace, PyTorch, TensorFlow
from sagelaunch.estimators.base import FrameworkEstimator
from sagelaunch.estimators.framework_model import FrameworkModel, HuggingFaceModel, PyTorchModel, TensorFlowModel
from sagelaunch.estimators.model import Model


def field_docstrings(cls: type) -> dict[str, str]:
    """field name → the string literal right under its definition, for `cls` and its bases."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("sagelaunch.estimators"):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for node, after in zip(body, body[1:]):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                    and isinstance(after.value.value, str):
                found[node.target.id] = after.value.value
    return found


@pytest.mark.parametrize("cls", [FrameworkEstimator, Estimator, PyTorch, TensorFlow, HuggingFace, Model], ids=lambda c: c.__name__)
def test_every_field_has_a_docstring_line(cls):
    docs = field_docstrings(cls)
    undocumented = [name for name in cls.model_fields if len(docs.get(name, "").strip()) < 20]
    assert undocumented == []


def documented_arguments(cls: type) -> set[str]:
    """The `name:` lines of the class docstrings of `cls` and its bases."""
    return {m for klass in cls.__mro__ for m in re.findall(r"^\s+(\w+): \S", klass.__doc__ or "", re.M)}


@pytest.mark.parametrize("cls", [PyTorchModel, TensorFlowModel, HuggingFaceModel], ids=lambda c: c.__name__)
def test_every_model_argument_is_described(cls):
    arguments = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "kwargs")]
    missing = set(arguments) | set(FrameworkModel.KEYWORDS)
    assert missing - documented_arguments(cls) == set()
