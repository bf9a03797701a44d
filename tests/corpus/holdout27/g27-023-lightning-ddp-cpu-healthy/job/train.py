import torch, torch.nn as nn
import lightning as L
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)

class LitClassifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 4))
    def training_step(self, batch, idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(self, batch, idx):
        x, y = batch
        logits = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())
    def on_validation_epoch_end(self):
        m = self.trainer.callback_metrics
        self.print(f"epoch {self.current_epoch}: val_loss={m['val_loss']:.4f} val_acc={m['val_acc']:.3f}")
    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=2e-3)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)}

if __name__ == "__main__":
    L.seed_everything(1)
    W = torch.randn(20, 4)
    X = torch.randn(1536, 20); Y = (X @ W).argmax(-1)
    tr = TensorDataset(X[:1280], Y[:1280]); va = TensorDataset(X[1280:], Y[1280:])
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=5, log_every_n_steps=10,
                        enable_checkpointing=False, logger=False, enable_progress_bar=False)
    trainer.fit(LitClassifier(), DataLoader(tr, batch_size=32, shuffle=True), DataLoader(va, batch_size=64))
