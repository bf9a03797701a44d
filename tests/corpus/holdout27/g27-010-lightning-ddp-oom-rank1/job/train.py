import torch, torch.nn as nn
import lightning as L
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)

class LitSeq(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.GRU(16, 64, batch_first=True); self.head = nn.Linear(64, 3)
    def training_step(self, batch, idx):
        x, y = batch
        if self.global_rank == 1 and self.global_step == 27:
            # simulated: a long-sequence bucket arrives on rank 1 and the activations do not fit
            raise torch.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 23.64 GiB of which "
                "1.12 GiB is free. Including non-PyTorch memory, this process has 22.51 GiB memory in use. Of the "
                "allocated memory 20.87 GiB is allocated by PyTorch, and 1.19 GiB is reserved by PyTorch but "
                "unallocated. If reserved but unallocated memory is large try setting "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
        out, _ = self.enc(x)
        loss = nn.functional.cross_entropy(self.head(out[:, -1]), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

if __name__ == "__main__":
    L.seed_everything(0)
    ds = TensorDataset(torch.randn(1024, 20, 16), torch.randint(0, 3, (1024,)))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, log_every_n_steps=5,
                        enable_checkpointing=False, logger=False)
    trainer.fit(LitSeq(), DataLoader(ds, batch_size=16, shuffle=True))
