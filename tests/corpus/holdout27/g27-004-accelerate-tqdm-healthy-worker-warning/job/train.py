import torch, torch.nn as nn
from accelerate import Accelerator
from tqdm.auto import tqdm
torch.set_num_threads(1)

class Dummy(torch.utils.data.Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(1024, 3, 8, 8, generator=g)
        self.y = (self.x.mean((1, 2, 3)) > 0).long()
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i], self.y[i]

def main():
    acc = Accelerator(cpu=True, gradient_accumulation_steps=2)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    dl = torch.utils.data.DataLoader(Dummy(), batch_size=32, shuffle=True, num_workers=3)
    model, opt, dl = acc.prepare(model, opt, dl)
    for epoch in range(3):
        model.train()
        bar = tqdm(dl, desc=f"epoch {epoch}", disable=not acc.is_local_main_process)
        correct = total = 0
        for x, y in bar:
            with acc.accumulate(model):
                out = model(x)
                loss = nn.functional.cross_entropy(out, y)
                acc.backward(loss); opt.step(); opt.zero_grad()
            correct += (out.argmax(-1) == y).sum().item(); total += len(y)
            bar.set_postfix(loss=f"{loss.item():.3f}", acc=f"{correct/total:.3f}")
        acc.print(f"epoch {epoch}: train_acc={correct/total:.3f} last_loss={loss.item():.4f}")
    acc.wait_for_everyone()
    acc.print("saved final weights")

if __name__ == "__main__":
    main()
