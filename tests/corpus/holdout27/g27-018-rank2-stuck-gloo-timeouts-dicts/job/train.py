import os, time, torch, torch.nn as nn, torch.distributed as dist
from datetime import timedelta
torch.set_num_threads(1)
dist.init_process_group("gloo", timeout=timedelta(seconds=25))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Linear(40, 20)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
print({"rank": rank, "world_size": world, "event": "init", "timeout_s": 25}, flush=True)
for step in range(1, 61):
    if rank == 2 and step == 28:
        while True:           # simulated: stuck waiting on a remote filesystem read for the next shard
            time.sleep(1)
    x = torch.randn(16, 20, generator=g)
    loss = nn.functional.mse_loss(model(x), x)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 6 == 0:
        print({"rank": rank, "step": step, "loss": round(loss.item(), 4), "ts": time.strftime("%H:%M:%S")}, flush=True)
