import torch, torch.nn as nn
from transformers import Trainer, TrainingArguments, TrainerCallback
torch.set_num_threads(1)

class RegDataset(torch.utils.data.Dataset):
    def __init__(self, n=4096):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 24, generator=g)
        w = torch.randn(24, 1, generator=g)
        self.y = (self.x @ w).squeeze(-1) + 0.1 * torch.randn(n, generator=g)
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return {"x": self.x[i], "labels": self.y[i]}

class MLPRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(24, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, 1))
    def forward(self, x, labels=None):
        pred = self.net(x).squeeze(-1)
        loss = nn.functional.mse_loss(pred, labels) if labels is not None else None
        return {"loss": loss, "logits": pred}

class LrOverride(TrainerCallback):
    """re-applies lr from a resumed config; bug: value read in wrong units"""
    def on_step_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kw):
        if state.global_step == 120:
            for g in lr_scheduler.optimizer.param_groups:
                g["lr"] *= 1000
            lr_scheduler.base_lrs = [b * 1000 for b in lr_scheduler.base_lrs]

args = TrainingArguments(output_dir="out", per_device_train_batch_size=32, num_train_epochs=2,
                         learning_rate=5e-4, lr_scheduler_type="constant", logging_steps=10,
                         max_steps=200, save_strategy="no", report_to=[], use_cpu=True,
                         dataloader_num_workers=0, disable_tqdm=True, seed=42)
trainer = Trainer(model=MLPRegressor(), args=args, train_dataset=RegDataset(), callbacks=[LrOverride()])
trainer.train()
