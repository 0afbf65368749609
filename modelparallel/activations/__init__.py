"""Activation memory: smp.set_activation_checkpointing and activation offloading."""
