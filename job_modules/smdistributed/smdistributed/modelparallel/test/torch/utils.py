"""`smdistributed.modelparallel.test.torch.utils` in a local job: sagelaunch's modelparallel.verification."""

from sagelaunch.modelparallel.verification import ATOL, FP16_Module, add_num_grads_hook, dump_model, verify  # noqa: F401
