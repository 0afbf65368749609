"""`smdistributed.modelparallel.test` in a local job: the test helpers SMP scripts import (test.torch.utils)."""
