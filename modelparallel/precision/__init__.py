"""Mixed precision (fp16/bf16): fp32 master weights behind smp.DistributedOptimizer and SMP's loss scalers."""
