import os, sys, time, torch, torch.nn as nn, torch.distributed as dist
from datetime import timedelta
torch.set_num_threads(1)
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
g = torch.Generator().manual_seed(rank)
for epoch in range(3):
    for it in range(25):
        if rank == 2 and epoch == 1 and it == 11:
            time.sleep(10_000)          # simulated: stuck (never returns)
        x = torch.randn(16, 8, generator=g); y = x.pow(2).sum(1, keepdim=True)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if it % 5 == 0:
            print(f"Epoch [{epoch+1}/3] Iter [{it:02d}/25] Loss: {loss.item():.4f} Time: {time.strftime('%H:%M:%S')}", flush=True)
