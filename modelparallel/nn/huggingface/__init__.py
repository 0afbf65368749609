"""smp.nn.huggingface.<family>: state-dict translation between Hugging Face models and SMP's distributed models."""

from sagelaunch.modelparallel.nn.huggingface import gpt2  # noqa: F401
