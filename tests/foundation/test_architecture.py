"""The layers' arrows, checked on the source: every import (lazy ones included, `if TYPE_CHECKING:` blocks
excluded) goes one way, and no modules import each other in a circle.

    sagelaunch → anything
    estimators → jobspec, profiler_config, launcher, planner
    profiler_config, launcher, profiler, modelparallel, planner → jobspec
    jobspec → the standard library and pydantic only
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.foundation.lazy_imports import unjustified as unjustified_function_imports

ROOT = Path(__file__).resolve().parents[2]
# the design's folders, each installed (and imported) as sagelaunch.<name>; sagelaunch/<name> links to the folder
LIBRARIES = ("jobspec", "estimators", "profiler_config", "launcher", "profiler", "modelparallel", "planner")
PACKAGES = (*LIBRARIES, "sagelaunch")  # the layers: the libraries and the application
ALLOWED = {
    "jobspec": set(),
    "profiler_config": {"jobspec"},
    "launcher": {"jobspec"},
    "profiler": {"jobspec"},
    "modelparallel": {"jobspec"},
    "planner": {"jobspec"},
    "estimators": {"jobspec", "profiler_config", "launcher", "planner"},
    "sagelaunch": set(PACKAGES),
}
LEAF_THIRD_PARTY = {"pydantic", "pydantic_core"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in LIBRARIES:
        parts.insert(0, "sagelaunch")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(name: str) -> str | None:
    """The layer a dotted module name belongs to; None outside the project and for the bare `sagelaunch` namespace
    package (every module's parent: it imports nothing)."""
    parts = name.split(".")
    if parts[0] != "sagelaunch" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in LIBRARIES else "sagelaunch"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every import in the file, lazy ones included, TYPE_CHECKING ones not.
    `from a.b import c` yields a.b.c when that is a module, else a.b. `source` replaces the file's text."""
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.append((node.lineno, candidate if _is_module(candidate) else module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def project_files() -> list[Path]:
    """Every module once, at its real path: rglob does not descend into the sagelaunch/<name> links."""
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (packages' __init__ included when importing from outside them)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in project_files():
        this = module_name(path)
        graph[this]
        for _, name in imported_names(path):
            if layer(name) is None or not _is_module(name):
                continue
            graph[this].add(name)
            parts = name.split(".")
            for i in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__ first
                parent = ".".join(parts[:i])
                if not (this == parent or this.startswith(parent + ".")):
                    graph[this].add(parent)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_every_import_follows_the_arrows():
    wrong = []
    for path in project_files():
        owner = layer(module_name(path))
        for line, name in imported_names(path):
            top = layer(name)
            if top is not None and top != owner and top not in ALLOWED[owner]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name} ({owner} → {top} is not an arrow)")
    assert not wrong, "\n".join(wrong)


def test_jobspec_imports_only_the_standard_library_and_pydantic():
    wrong = []
    for path in sorted((ROOT / "jobspec").rglob("*.py")):
        for line, name in imported_names(path):
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in LEAF_THIRD_PARTY and layer(name) != "jobspec":
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles_between_packages_or_modules():
    graph = import_graph()
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        if layer(module) is not None:
            packages[layer(module)] |= {layer(t) for t in targets if layer(t) is not None} - {layer(module)}
    assert cycles(packages) == []
    assert cycles(graph) == [], "modules that import each other (lazy imports count)"


@pytest.mark.parametrize("source, expected", [
    ("from sagelaunch.launcher.common.jobs import TrainingJob\n", ["sagelaunch.launcher.common.jobs"]),
    ("def f():\n    from sagelaunch.jobspec import catalog\n", ["sagelaunch.jobspec.catalog"]),
    ("from . import resolve\nfrom .inputs import to_channels\n", ["sagelaunch.estimators.resolve", "sagelaunch.estimators.inputs"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sagelaunch.launcher.common.jobs\n", ["typing"]),
    ("import typing\nif typing.TYPE_CHECKING:\n    import sagelaunch.launcher.common.jobs\nelse:\n    import json\n", ["typing", "json"]),
])
def test_the_walk_sees_lazy_and_relative_imports_and_skips_type_checking_ones(source, expected):
    as_if = ROOT / "estimators" / "probe.py"  # relative names resolve in estimators/
    assert [name for _, name in imported_names(as_if, source)] == expected


def test_our_code_is_imported_only_through_the_sagelaunch_prefix():
    """A bare `import launcher` would load a second copy of a module (its own state) beside sagelaunch.launcher, and
    fails where sagelaunch is installed (only the prefixed names are); the namespace package itself imports nothing,
    so `import sagelaunch.estimators` stays as light as the estimators."""
    bare = [f"{path.relative_to(ROOT)}:{line} imports {name}" for path in project_files()
            for line, name in imported_names(path) if name.split(".")[0] in LIBRARIES]
    assert not bare, "\n".join(bare)
    assert imported_names(ROOT / "sagelaunch" / "__init__.py") == []
    assert all((ROOT / "sagelaunch" / name).resolve() == ROOT / name for name in LIBRARIES)


def type_only_circles(package: str) -> list[list[str]]:
    """Circles among `package`'s modules once the `if TYPE_CHECKING:` imports count too: a helper that imports, for
    its types only, the module that imports it (typed by the whole class it serves, not by what it reads)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / package).rglob("*.py")):
        this = module_name(path)
        graph[this]
        source = path.read_text().replace("if TYPE_CHECKING:", "if True:")  # what a type checker follows
        graph[this] |= {name for _, name in imported_names(path, source)
                        if name.startswith(f"sagelaunch.{package}.") and name != this and _is_module(name)}
    return cycles(graph)


def test_no_type_only_circles_in_estimators():
    assert type_only_circles("estimators") == []


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("name", ["local", "sagemaker"])
def test_each_backend_provides_the_interface(name):
    import inspect

    from sagelaunch.launcher import backends

    module = backends.backend(name)
    for function in ("submit", "attach", "list_jobs"):
        wanted = inspect.signature(getattr(backends.Backend, function))
        got = inspect.signature(getattr(module, function))
        first = [p for p in wanted.parameters if p != "self"][0]
        assert first in got.parameters, f"{name}.{function} lacks {first!r}"
    assert "wait" in inspect.signature(module.submit).parameters
    assert "status" in inspect.signature(module.list_jobs).parameters
    with pytest.raises(ValueError, match="allowed: local, sagemaker"):
        backends.backend("docker")


def _launcher_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import of sagelaunch.launcher… in the file, TYPE_CHECKING ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("sagelaunch.launcher")]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("sagelaunch.launcher"):
            found.append((node.lineno, node.module or "", [a.name for a in node.names]))
    return found


def test_code_outside_the_launcher_imports_only_its_face():
    """The rule: the project's packages outside launcher/ import `sagelaunch.launcher` (its __init__, the face) and
    the names it exports, never a submodule, so the launcher's inside can move without touching its users. Tests and
    scripts may import submodules where they check or measure internals."""
    from sagelaunch import launcher

    wrong = []
    for path in project_files():
        if layer(module_name(path)) == "launcher":
            continue
        for line, module, names in _launcher_imports(path):
            outside = [n for n in names if n not in launcher.__all__]
            if module != "sagelaunch.launcher" or outside:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module} {outside or ''}")
    assert not wrong, "\n".join(wrong)


def test_the_face_names_each_export_once_for_type_checkers_too():
    """Every name the face exports resolves to its defining module's object, and its TYPE_CHECKING block (what mypy
    reads) binds the same names to the same objects."""
    import importlib

    from sagelaunch import launcher

    typed: dict[str, tuple[str, str | None]] = {}
    face = ast.parse((ROOT / "launcher" / "__init__.py").read_text())
    block = next(n for n in face.body if isinstance(n, ast.If) and _is_type_checking(n.test))
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            as_module = _is_module(f"{node.module}.{alias.name}")
            typed[alias.asname or alias.name] = ((f"{node.module}.{alias.name}", None) if as_module
                                                 else (node.module, alias.name))
    assert typed == launcher._EXPORTS
    for name, (module, attribute) in launcher._EXPORTS.items():
        defined = importlib.import_module(module)
        assert getattr(launcher, name) is (defined if attribute is None else getattr(defined, attribute)), name
    with pytest.raises(AttributeError, match="no attribute 'submodule_that_is_not_exported'"):
        launcher.submodule_that_is_not_exported  # noqa: B018


# Arrows between the launcher's halves that remain (each lazy): local and sagemaker import common, never each other,
# and common imports neither; these four are the exceptions, named so that a new one fails.
LAUNCHER_CROSSINGS = {
    ("sagelaunch.launcher.common.jobs", "sagelaunch.launcher.local.registry"),  # attach(): the local registry first
    ("sagelaunch.launcher.common.predictors", "sagelaunch.launcher.sagemaker.endpoint"),  # SageMakerPredictor's calls
    ("sagelaunch.launcher.common.tuning_jobs", "sagelaunch.launcher.sagemaker.watch"),  # SageMakerTuningJob.wait
    ("sagelaunch.launcher.local.transform", "sagelaunch.launcher.sagemaker.transform"),  # its error; a job's lookup
}


def _launcher_half(name: str) -> str | None:
    parts = name.split(".")
    if parts[:2] != ["sagelaunch", "launcher"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in ("common", "local", "sagemaker") else "top"


def test_the_launchers_halves_import_only_common():
    wrong = []
    for path in project_files():
        this = module_name(path)
        half = _launcher_half(this)
        if half not in ("common", "local", "sagemaker"):
            continue
        for line, name in imported_names(path):
            other = _launcher_half(name)
            if other in (None, half, "common") or (this, name) in LAUNCHER_CROSSINGS:
                continue
            wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name} ({half} → {other})")
    assert not wrong, "\n".join(wrong)


def test_imports_inside_functions_are_heavy_libraries_or_say_why():
    found: dict[str, list[str]] = defaultdict(list)
    for path in project_files():
        for line, module in unjustified_function_imports(path):
            found[layer(module_name(path)) or "sagelaunch"].append(f"{path.relative_to(ROOT)}:{line} ({module})")
    assert not found, "imports inside functions: move them to the module's top, or say why on the line " \
                      f"(# lazy: <why>); heavy libraries: tests/foundation/lazy_imports.py\n{dict(found)}"


@pytest.mark.parametrize("source, flagged", [
    ("import json\ndef f():\n    import torch\n    from boto3 import session\n", []),
    ("def f():\n    import json\n", [(2, "json")]),
    ("def f():\n    from sagelaunch.jobspec import catalog\n", [(2, "sagelaunch")]),
    ("def f():\n    from sagelaunch.jobspec import catalog  # lazy: a cycle through catalog\n", []),
    ("def f():\n    from . import resolve\n", [(2, "sagelaunch")]),
    ("from typing import TYPE_CHECKING\ndef f():\n    if TYPE_CHECKING:\n        import json\n", []),
    ("import json\n", []),
])
def test_the_function_import_rule_flags_only_light_imports_without_a_reason(tmp_path, source, flagged):
    probe = tmp_path / "probe.py"
    probe.write_text(source)
    assert unjustified_function_imports(probe) == flagged
