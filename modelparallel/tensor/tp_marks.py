"""The tensor-parallelism mark smp.tensor_parallelism() / set_tensor_parallelism() put on modules (no torch)."""

MARK = "_smp_tensor_parallel"


def is_marked(module) -> bool:
    """Marked itself, or (the top-level module of a tensor_parallelism() block, which no parent registered)
    all of its children are."""
    if MARK in vars(module):
        return bool(vars(module)[MARK])
    children = list(module.children())
    return bool(children) and all(getattr(c, MARK, False) for c in children)
