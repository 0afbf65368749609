"""`smdistributed.modelparallel.test.torch` in a local job (see test/torch/utils.py)."""
