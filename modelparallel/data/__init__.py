"""Data parallelism: sharded data parallelism (FSDP2) over the data-parallel ranks, DDP over the replica group,
optimizer-state sharding (ZeRO-1) over it."""
