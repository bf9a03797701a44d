import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
torch.set_num_threads(1)

class RandomLM(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        base = torch.randint(0, 96, (n, 1), generator=g)
        self.ids = (base + torch.arange(24)) % 128      # learnable: increasing token ids
    def __len__(self): return len(self.ids)
    def __getitem__(self, i): return {"input_ids": self.ids[i], "labels": self.ids[i]}

cfg = GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2)
model = GPT2LMHeadModel(cfg)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=16, per_device_eval_batch_size=32,
                         learning_rate=3e-3, max_steps=120, logging_steps=20, eval_strategy="steps", eval_steps=40,
                         save_strategy="no", report_to=[], use_cpu=True, gradient_checkpointing=True,
                         warmup_steps=10, disable_tqdm=True, seed=0)
trainer = Trainer(model=model, args=args, train_dataset=RandomLM(2048, 0), eval_dataset=RandomLM(128, 1))
trainer.train()
print(trainer.evaluate())
