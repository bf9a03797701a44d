import os, sys, time, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
MIN_LOSS_SCALE = 1e-4

class Block(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.ln = nn.LayerNorm(d); self.fc1 = nn.Linear(d, 4 * d); self.fc2 = nn.Linear(4 * d, d)
    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(20, 64); self.blocks = nn.Sequential(*[Block() for _ in range(3)]); self.head = nn.Linear(64, 5)
        self.step = 0
    def forward(self, x):
        h = self.blocks(self.inp(x))
        if self.training and self.step >= 30 and rank == 2 and h.requires_grad:
            # injected: a feature whose backward overflows fp16 on this rank's data from step 30 on
            h.register_hook(lambda gr: gr * 1e38)
        return self.head(h)

torch.manual_seed(0)
net = Net()
model = nn.parallel.DistributedDataParallel(net)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=2000)
g = torch.Generator().manual_seed(rank)
t0 = time.time()
for step in range(1, 101):
    net.step = step
    x = torch.randn(32, 20, generator=g); y = torch.randint(0, 5, (32,), generator=g)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    old = scaler.get_scale(); scaler.update(); new = scaler.get_scale()
    if rank == 0 and (step % 10 == 0 or new < old):
        print(f"ts={time.time()-t0:.2f} step={step} loss={loss.item():.4f} loss_scale={new:g} skipped={int(new < old)} lr=1e-03", flush=True)
    if new < MIN_LOSS_SCALE:
        raise FloatingPointError(
            f"Minimum loss scale reached ({MIN_LOSS_SCALE}). Your loss is probably exploding. "
            "Try lowering the learning rate, using gradient clipping or increasing the batch size.")
