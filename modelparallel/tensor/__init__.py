"""Tensor parallelism: DTensor plans over the tp sub-mesh, smp.tensor_parallelism marks, the scaled batch, SMP's
distributed-transformer names and initialisation, delayed parameter initialisation."""
