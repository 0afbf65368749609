"""One family of errors (jobspec.errors): every exception class of the library derives from it, errors from each
layer carry field/value/allowed/fix, every "did you mean" comes from jobspec.suggest, and no code decides what to
do by reading an error's text."""

from __future__ import annotations

import ast
import builtins
import json
import pickle
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from sagelaunch.jobspec.errors import (ProblemsError, SagelaunchError, SagelaunchException, SagelaunchRuntimeError,
                            SagelaunchTypeError)
from tests.foundation.test_architecture import PACKAGES, ROOT, project_files

FAMILY_ROOTS = {"SagelaunchException", "SagelaunchError", "SagelaunchTypeError", "SagelaunchRuntimeError",
                "ProblemsError"}
# the classes outside the family, and why: control flow caught inside their own module, never seen by a user
OUTSIDE_THE_FAMILY = {
    "_NotWholeEvents": "profiler/kineto_reader.py: a chunk boundary mid-event, caught by its reader",
    "_ModelCallCaptured": "modelparallel/pipeline/capture.py: stops a traced forward, caught by the tracer",
    "_StageEnd": "modelparallel/pipeline/stack.py: ends a pipeline stage's run, caught by the stack",
}
BUILTIN_EXCEPTIONS = {name for name, obj in vars(builtins).items()  # warnings are not errors: they stay warnings
                      if isinstance(obj, type) and issubclass(obj, BaseException) and not issubclass(obj, Warning)}


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def exception_classes(files: list[Path]) -> dict[str, tuple[str, set[str]]]:
    """name → (where, base names) of every class deriving, through any chain, from a Python exception or the family."""
    classes = {node.name: (f"{path.name}:{node.lineno}", {_base_name(b) for b in node.bases})
               for path in files for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)}
    found: set[str] = set()
    while more := {name for name, (_, bases) in classes.items()
                   if name not in found and bases & (BUILTIN_EXCEPTIONS | FAMILY_ROOTS | found)}:
        found |= more
    return {name: classes[name] for name in found}


def in_family(name: str, classes: dict[str, tuple[str, set[str]]]) -> bool:
    seen, todo = {name}, list(classes[name][1])
    while todo:
        base = todo.pop()
        if base in FAMILY_ROOTS:
            return True
        if base in classes and base not in seen:
            seen.add(base)
            todo.extend(classes[base][1])
    return False


def test_every_exception_class_of_the_library_is_in_the_family():
    classes = exception_classes(project_files())
    assert len(classes) >= 25, sorted(classes)  # the walk finds them (22 besides the family's own classes)
    outside = {name: where for name, (where, _) in classes.items()
               if name not in FAMILY_ROOTS and not in_family(name, classes)}
    assert outside.keys() == OUTSIDE_THE_FAMILY.keys(), outside


def test_the_walk_sees_a_class_outside_the_family(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("class Fine(SagelaunchError):\n    pass\n\n\nclass FineToo(Fine):\n    pass\n\n\n"
                     "class Stray(KeyError):\n    pass\n\n\nclass StrayChild(Stray):\n    pass\n")
    classes = exception_classes([probe])
    assert {n for n in classes if not in_family(n, classes)} == {"Stray", "StrayChild"}
    assert set(classes) == {"Fine", "FineToo", "Stray", "StrayChild"}


def test_the_family_keeps_the_python_types_callers_catch():
    from sagelaunch.launcher.common.aws.errors import AWSError
    from sagelaunch.launcher.common.jobs import JobFailedError, JobNotFoundError
    from sagelaunch.modelparallel.errors import SMPRuntimeError, SMPValidationError
    from sagelaunch.profiler.trace_file import ProfileLoadError
    from sagelaunch.profiler.ui.server import PortInUse

    for cls in (JobNotFoundError, SMPValidationError, ProfileLoadError, SagelaunchTypeError, ProblemsError):
        assert issubclass(cls, SagelaunchError) and issubclass(cls, ValueError), cls
    for cls in (AWSError, JobFailedError, SMPRuntimeError):  # failures, not inputs: never a ValueError
        assert issubclass(cls, SagelaunchRuntimeError) and issubclass(cls, RuntimeError), cls
        assert not issubclass(cls, ValueError), cls
    assert issubclass(PortInUse, OSError) and issubclass(PortInUse, SagelaunchException)
    assert issubclass(SagelaunchTypeError, TypeError)


def test_problems_keep_their_parts_and_secrets_stay_hidden():
    token = SagelaunchError("environment.API_TOKEN: too long", field="environment.API_TOKEN", value="abc123",
                            allowed="at most 512 characters", fix="shorten it")
    problems = ProblemsError(["max_wait=10 must be ≥ max_run=20", ProblemsError([token])])
    assert str(problems) == "max_wait=10 must be ≥ max_run=20\nenvironment.API_TOKEN: too long"
    assert [p.field for p in problems.problems] == ["", "environment.API_TOKEN"]  # nested lists stay flat
    assert token.value == "<hidden>" and "abc123" not in repr(token.parts())
    again = pickle.loads(pickle.dumps(problems))  # errors cross process boundaries (the job's helpers)
    assert str(again) == str(problems) and again.problems[1].parts() == token.parts()


def _parts(err: SagelaunchException) -> dict[str, object]:
    return {k: v for k, v in err.parts().items() if k != "allowed"}


def test_an_estimator_argument_error_names_its_parts():
    from sagelaunch.estimators import PyTorch

    with pytest.raises(SagelaunchError) as info:
        PyTorch(entry_point="train.py", role="arn:aws:iam::123456789012:role/R", region="us-west-2",
                instance_type="ml.p4d.24xl", framework_version="2.1", py_version="py310")
    err = info.value
    assert isinstance(err, ValidationError) and isinstance(err, ProblemsError)  # what v2 code and pydantic catch
    assert "instance_type='ml.p4d.24xl' is not supported (did you mean 'ml.p4d.24xlarge'?)" in str(err)
    assert _parts(err) == {"field": "instance_type", "value": "ml.p4d.24xl", "fix": "did you mean 'ml.p4d.24xlarge'?"}
    assert "ml.p4d.24xlarge" in err.allowed


def test_an_estimator_assignment_error_names_its_parts():
    from sagelaunch.estimators import PyTorch

    est = PyTorch(entry_point="train.py", instance_type="local", framework_version="2.1", py_version="py310")
    with pytest.raises(ValidationError) as info:
        est.instance_type = "ml.p4d.24xl"
    assert isinstance(info.value, SagelaunchError) and info.value.field == "instance_type"
    assert est.instance_type == "local"  # the failed assignment is undone


def test_a_distribution_error_names_its_parts():
    from sagelaunch.estimators import PyTorch

    with pytest.raises(SagelaunchError) as info:
        PyTorch(entry_point="train.py", role="arn:aws:iam::123456789012:role/R", region="us-west-2",
                instance_type="ml.g5.2xlarge", framework_version="2.0.0", py_version="py310",
                distribution={"smdistributed": {"dataparallel": {"enabled": True}}})
    problem, = [p for p in info.value.problems if "dataparallel" in str(p)]
    assert problem.field == "instance_type" and problem.value == "ml.g5.2xlarge"
    assert "ml.p4d.24xlarge" in problem.allowed.split(", ")
    assert problem.fix  # a near type, or torch_distributed


def test_an_smp_init_key_error_names_its_parts(monkeypatch):
    from sagelaunch.modelparallel.core.config import load_parameters
    from sagelaunch.modelparallel.errors import SMPValidationError

    monkeypatch.setenv("SM_HP_MP_PARAMETERS", json.dumps({"partitions": 2}))
    with pytest.raises(SMPValidationError) as info:
        load_parameters({"microbatchs": 4})
    assert "unknown SMP v1 parameter 'microbatchs' (did you mean 'microbatches'?)" in str(info.value)
    assert _parts(info.value) == {"field": "mp_parameters.microbatchs", "value": 4,
                                  "fix": "did you mean 'microbatches'?"}
    assert "microbatches" in info.value.allowed.split(", ")


def test_a_cli_validate_error_names_its_parts(tmp_path):
    from sagelaunch.cli_validate import FrameworkError, load_estimator_args

    job = tmp_path / "job.yaml"
    job.write_text("framework: pytroch\nentry_point: train.py\ninstance_type: local\n")
    with pytest.raises(FrameworkError) as info:
        load_estimator_args(job)
    assert info.value.likely == "pytorch"
    assert _parts(info.value) == {"field": "framework", "value": "pytroch", "fix": "did you mean 'pytorch'?"}
    assert "pytorch" in info.value.allowed.split(", ")


def test_a_profiler_config_error_names_its_parts():
    from sagelaunch.profiler_config import ProfilerConfig

    with pytest.raises(SagelaunchError) as info:
        ProfilerConfig(s3_output_path="s3:/my-bucket/profiles")
    assert isinstance(info.value, ValidationError)
    assert _parts(info.value) == {"field": "s3_output_path", "value": "s3:/my-bucket/profiles",
                                  "fix": "did you mean 's3://my-bucket/profiles'?"}
    assert info.value.allowed == "s3://<bucket>[/prefix]"


# ------------------------------------------------------------------ one "did you mean", no reading of messages
LIBRARY = ("jobspec", "estimators", "profiler_config", "launcher", "profiler", "modelparallel", "planner", "sagelaunch")


def library_files() -> list[Path]:
    assert set(LIBRARY) == set(PACKAGES)
    return project_files()


def difflib_imports(source: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(source))
            if (isinstance(node, ast.Import) and any(a.name == "difflib" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and node.module == "difflib")]


def test_only_jobspec_suggest_imports_difflib():
    found = {str(p.relative_to(ROOT)): lines for p in library_files() if (lines := difflib_imports(p.read_text()))}
    assert found == {"jobspec/suggest.py": found.get("jobspec/suggest.py")} and found["jobspec/suggest.py"]


_ERROR_NAME = re.compile(r"^(e|err|error|exc|exception)$|_(err|error|exc|exception)$")


def _is_error(node: ast.expr, handler_names: set[str]) -> bool:
    """An exception: a name an `except … as` binds, or a name that says it holds one (sagemaker_error)."""
    return isinstance(node, ast.Name) and (node.id in handler_names or bool(_ERROR_NAME.search(node.id)))


def _is_error_text(node: ast.expr, handler_names: set[str], texts: set[str]) -> bool:
    """`str(e)` / `repr(e)` / `e.args[…]` / `f"{e}"`, or a name bound to one of them (msg = str(e))."""
    if isinstance(node, ast.Call) and _base_name(node.func) in ("str", "repr", "format") and node.args:
        return _is_error(node.args[0], handler_names)
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) and _is_error(v.value, handler_names) for v in node.values)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "args":
        return _is_error(node.value.value, handler_names)
    return isinstance(node, ast.Name) and node.id in texts


def branches_on_error_text(source: str) -> list[int]:
    """Lines where a decision reads an exception's text: `"x" in str(e)`, `str(e).startswith(…)`, `msg == …`
    with msg = str(e), re.search(…, str(e))."""
    tree = ast.parse(source)
    handlers = {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}
    texts = {n.targets[0].id for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and _is_error_text(n.value, handlers, set())}

    def text(node: ast.expr) -> bool:
        return _is_error_text(node, handlers, texts)

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(text(side) for side in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and text(node.func.value) \
                and node.func.attr in ("startswith", "endswith", "find", "count", "index", "__contains__"):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and _base_name(node.func) in ("search", "match", "fullmatch", "findall") \
                and any(text(a) for a in node.args):
            lines.append(node.lineno)
    return lines


def test_no_code_branches_on_an_error_message():
    found = {str(p.relative_to(ROOT)): lines for p in library_files() if (lines := branches_on_error_text(p.read_text()))}
    assert found == {}


@pytest.mark.parametrize("source", [
    "try:\n    f()\nexcept ValueError as boom:\n    if 'not a trace' in str(boom):\n        pass\n",
    "def g(sagemaker_error):\n    return 'no AWS region' in str(sagemaker_error)\n",
    "try:\n    f()\nexcept Exception as exc:\n    if str(exc).startswith('Could not'):\n        raise\n",
    "try:\n    f()\nexcept Exception as e:\n    msg = str(e)\n    if 'does not exist' not in msg:\n        raise\n",
    "import re\ntry:\n    f()\nexcept OSError as err:\n    ok = re.search('in use', f'{err}')\n",
])
def test_the_walk_sees_each_way_of_reading_a_message(source):
    assert branches_on_error_text(source)


def test_a_wrong_call_is_still_a_type_error_and_names_its_parts():
    from sagelaunch.profiler_config import ProfilerConfig

    with pytest.raises(TypeError) as info:
        ProfilerConfig("s3://my-bucket/profiles", s3_output_path="s3://my-bucket/other")
    assert isinstance(info.value, SagelaunchTypeError)
    assert (info.value.field, info.value.value) == ("s3_output_path", "s3://my-bucket/profiles")
    assert "both by position and by name" in str(info.value)


def test_a_secret_field_keeps_its_value_out_of_the_error():
    from sagelaunch.jobspec.fields import environment

    with pytest.raises(SagelaunchError) as info:
        environment({"API_TOKEN": 12345})
    assert info.value.field == "environment.API_TOKEN" and info.value.value == "<hidden>"
    assert "12345" not in str(info.value) and info.value.allowed == "text"


# ------------------------------------------------------------------ no bare ValueError / TypeError / RuntimeError
BARE = {"ValueError", "TypeError", "RuntimeError"}
# (file, function) → why its bare raise stays: none can reach a user, so none needs field/value/allowed/fix
BARE_ALLOWED = {
    # caught by the `except (TypeError, ValueError)` of the same function, which warns and uses the default
    ("jobspec/profiling.py", "seconds_param"): "ValueError",
    # caught by the `except ValueError` of the same function, printed as one line of the endpoint's log
    ("launcher/local/serving/server.py", "main"): "ValueError",
    # json.dumps's default= protocol: a value sagelaunch itself put in a job record (never a user's input)
    ("launcher/local/registry.py", "_json_default"): "TypeError",
    # caught by the `except ValueError` of the same function, answered as a 400
    ("profiler/ui/server.py", "do_POST"): "ValueError",
}


def bare_raises(source: str) -> list[tuple[str, str, int]]:
    """(innermost function or <module>, exception name, line) of each `raise ValueError(…)`, `raise TypeError`… and
    each `return ValueError(…)` of an error builder whose callers raise it."""
    tree = ast.parse(source)
    owner: dict[ast.AST, str] = {}
    for fn in ast.walk(tree):  # outer functions first: an inner function's walk overwrites its own raises
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                owner[node] = fn.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            name = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            name = node.value.func  # an error builder (`return ValueError(…)` for its callers to raise)
        else:
            continue
        if isinstance(name, ast.Name) and name.id in BARE:
            found.append((owner.get(node, "<module>"), name.id, node.lineno))
    return found


def bare_raises_by_place(files: list[Path]) -> dict[tuple[str, str], str]:
    """(file, function) → the names it raises bare, comma-separated (two in one function read "ValueError, ValueError")."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in files:
        where = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
        for fn, name, _ in bare_raises(path.read_text()):
            found.setdefault((where, fn), []).append(name)
    return {place: ", ".join(sorted(names)) for place, names in found.items()}


def test_the_library_raises_no_bare_value_type_or_runtime_error():
    found = bare_raises_by_place(library_files())
    assert found == BARE_ALLOWED, {k: v for k, v in found.items() if BARE_ALLOWED.get(k) != v} or found


def test_the_walk_sees_each_bare_raise():
    source = ("def f(x):\n    if x:\n        raise ValueError(f'x={x!r} is wrong')\n\n\n"
              "def g():\n    def inner():\n        raise TypeError\n    raise RuntimeError('failed') from None\n\n\n"
              "def fine(x):\n    raise SagelaunchError('x', field='x', value=x)\n\n\n"
              "raise ValueError('at import')\n")
    assert sorted(bare_raises(source)) == [("<module>", "ValueError", 16), ("f", "ValueError", 3),
                                           ("g", "RuntimeError", 9), ("inner", "TypeError", 8)]


def test_the_walk_sees_an_error_builder():
    source = "def refused(key):\n    return ValueError(f'{key}: refused')\n\n\ndef fine(key):\n    return str(key)\n"
    assert bare_raises(source) == [("refused", "ValueError", 2)]


def test_a_new_bare_raise_fails_the_check(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def load(path):\n    raise ValueError(f'{path}: not a plan')\n")
    assert bare_raises_by_place([*library_files(), probe]) != BARE_ALLOWED  # a new file
    assert bare_raises_by_place([probe]) == {("probe.py", "load"): "ValueError"}
    server = ROOT / "profiler" / "ui" / "server.py"  # a second one in an allowed function counts too
    twice = tmp_path / "server.py"
    twice.write_text(server.read_text() + "\n\ndef do_POST():\n    raise ValueError('again')\n")
    assert bare_raises_by_place([twice])[("server.py", "do_POST")] == "ValueError, ValueError"
