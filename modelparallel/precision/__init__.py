"""Mixed precision (fp16/bf16): the half model, fp32 master weights behind smp.DistributedOptimizer, SMP's loss
scalers."""
