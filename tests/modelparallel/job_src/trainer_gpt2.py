"""transformers' Trainer on a tiny GPT-2, as a Hugging Face script runs it (no SMP calls of its own)."""
import os
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, i):
        ids = torch.arange(8) % 32
        return {"input_ids": ids, "labels": ids}

model = GPT2LMHeadModel(GPT2Config(vocab_size=32, n_positions=8, n_embd=16, n_layer=2, n_head=2))
args = TrainingArguments(output_dir=os.environ["SM_MODEL_DIR"], max_steps=2, per_device_train_batch_size=2,
                         report_to=[], save_strategy="no")
Trainer(model=model, args=args, train_dataset=Rows()).train()
print("TRAINER FINISHED")
