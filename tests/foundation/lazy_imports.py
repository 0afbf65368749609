"""The rule for imports inside functions, in one place: `tests/foundation/test_architecture.py` enforces it.

An import inside a function is allowed for a heavy library (below: slow to import, or an optional extra that is not
always installed), or when its line says why: `# lazy: <reason>` (a real cycle it breaks, a process that must stay
light, a command whose --help must stay fast). Anything else goes at the top of its module, where the reader looks.
"""

from __future__ import annotations

import ast
from pathlib import Path

HEAVY_LIBRARIES = frozenset({
    "torch", "transformers", "tensorflow", "safetensors", "tokenizers", "datasets", "accelerate", "deepspeed",
    "boto3", "botocore", "s3transfer", "moto", "sagemaker",
    "numpy", "pandas", "pyarrow", "plotly", "optuna", "hta", "isal", "msgspec", "orjson",
    "tornado", "rich", "typer", "yaml", "psutil", "pynvml", "playwright",
})
REASON = "# lazy:"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def function_imports(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, top-level module name) of every import inside a function, TYPE_CHECKING blocks
    left out; relative imports count as the project's own (top name "sagelaunch")."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child, in_function)
            return
        if in_function and isinstance(node, ast.Import):
            found.extend((node.lineno, node.end_lineno or node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif in_function and isinstance(node, ast.ImportFrom):
            top = "sagelaunch" if node.level else (node.module or "").split(".")[0]
            found.append((node.lineno, node.end_lineno or node.lineno, top))
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def unjustified(path: Path) -> list[tuple[int, str]]:
    """(line, module) of the function-level imports in `path` the rule does not allow."""
    source = path.read_text()
    lines = source.splitlines()
    return [(first, top) for first, last, top in function_imports(source)
            if top not in HEAVY_LIBRARIES and not any(REASON in lines[i - 1] for i in range(first, last + 1))]
