"""Data parallelism: sharded data parallelism (FSDP2) over the data-parallel ranks, DDP over the replica group."""
