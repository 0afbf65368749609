"""Which backend runs an instance type, and how many GPUs it has, is the catalog's answer (`jobspec.instance_types`):
no other module tests the name's text ("local", "local_gpu", "ml.") again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.foundation.test_architecture import ROOT, project_files

CATALOG = {ROOT / "jobspec" / "catalog.py", ROOT / "jobspec" / "instance_types.py"}
LOCAL_NAMES = {"local", "local_gpu"}


def _names_local(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in LOCAL_NAMES
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_names_local(e) for e in node.elts)


def string_tests(source: str) -> list[tuple[int, str]]:
    """(line, code) of every test of an instance type's text: a comparison or `in` with "local"/"local_gpu"
    (the other side naming an instance type; "local_gpu" on any side), `.startswith("local…" / "ml.")`, and the
    catalog's own LOCAL_INSTANCE_TYPES."""
    found = []
    for node in ast.walk(ast.parse(source)):
        code = ""
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, operand in enumerate(operands):
                others = " ".join(ast.unparse(o) for j, o in enumerate(operands) if j != i)
                if _names_local(operand) and ("instance" in others.lower() or "local_gpu" in ast.unparse(operand)):
                    code = ast.unparse(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
            if any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith(("local", "ml."))
                   for a in node.args):
                code = ast.unparse(node)
        elif isinstance(node, (ast.Name, ast.Attribute, ast.alias)):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else node.name
            if name == "LOCAL_INSTANCE_TYPES":
                code = name
        if code:
            found.append((getattr(node, "lineno", 0), code))
    return found


def test_no_string_test_of_an_instance_type_outside_the_catalog():
    offenders = [f"{path.relative_to(ROOT)}:{line}: {code}" for path in project_files() if path not in CATALOG
                 for line, code in string_tests(path.read_text())]
    assert not offenders, "ask jobspec.instance_types instead:\n" + "\n".join(offenders)


@pytest.mark.parametrize("source", [
    'local = instance_type in ("local", "local_gpu")',
    'if job.instance_type == "local_gpu": pass',
    'if instance_type != "local": pass',
    'x = str(instance_type).startswith("ml.")',
    'x = name.startswith("local")',
    'from sagelaunch.jobspec.catalog import LOCAL_INSTANCE_TYPES',
    'x = t in LOCAL_INSTANCE_TYPES',
])
def test_the_walk_finds_each_form_of_string_test(source):
    assert string_tests(source)


@pytest.mark.parametrize("source", [
    'if job.backend == "local": pass',  # a backend's name, not an instance type
    'local = is_local(instance_type)',
    'kind = instance_type("ml.p4d.24xlarge").kind',
])
def test_the_walk_leaves_other_code_alone(source):
    assert not string_tests(source)


def test_the_catalog_modules_exist():
    assert all(Path(p).is_file() for p in CATALOG)
