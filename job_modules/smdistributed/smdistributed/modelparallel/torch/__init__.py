"""`smdistributed.modelparallel.torch` in a local job is sagelaunch's `modelparallel` itself (the same module object),
so `import smdistributed.modelparallel.torch as smp` and `from sagelaunch import modelparallel as smp` share one state.

Submodules alias too: `smdistributed.modelparallel.torch.nn` IS `sagelaunch.modelparallel.nn` (not a second copy with its own
classes and state), through a meta-path finder that answers for every name under this package."""

import importlib
import importlib.abc
import importlib.util
import sys

from sagelaunch import modelparallel

_PREFIX = __name__ + "."


class _AliasSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`smdistributed.modelparallel.torch.X.Y` → the already (or newly) imported `sagelaunch.modelparallel.X.Y`."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        ours = "sagelaunch.modelparallel." + fullname[len(_PREFIX):]
        if importlib.util.find_spec(ours) is None:
            return None  # the usual "No module named ..." for a name modelparallel lacks
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module("sagelaunch.modelparallel." + spec.name[len(_PREFIX):])
        self._own_spec = module.__spec__  # the import system sets __spec__ to the alias's; exec_module restores it
        return module

    def exec_module(self, module):
        module.__spec__ = self._own_spec


if not any(isinstance(f, _AliasSubmodules) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasSubmodules())
sys.modules[__name__] = modelparallel
