"""`smdistributed.modelparallel.torch` in a local job is sagelaunch's `modelparallel` itself (the same module object),
so `import smdistributed.modelparallel.torch as smp` and `import modelparallel as smp` share one state."""

import sys

import modelparallel

sys.modules[__name__] = modelparallel
