"""smp.nn.huggingface.<family>: state-dict translations between Hugging Face models and SMP's distributed models."""

from sagelaunch.modelparallel.nn.huggingface import bert, gpt2, gptj, gptneo, roberta  # noqa: F401
