import os, torch, torch.nn as nn, torch.distributed as dist
from datetime import timedelta
import structlog
torch.set_num_threads(1)
dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank, world = dist.get_rank(), dist.get_world_size()
structlog.configure(processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="%H:%M:%S"),
                                structlog.dev.ConsoleRenderer(colors=False)])
log = structlog.get_logger("ema_trainer").bind(rank=rank)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3))
for p in model.parameters():
    dist.broadcast(p.data, 0)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(rank)
log.info("start", world_size=world)
for step in range(1, 41):
    x = torch.randn(16, 12, generator=g); y = torch.randint(0, 3, (16,), generator=g)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward()
    flat = torch.cat([p.grad.flatten() for p in model.parameters()])
    if rank == 1 and step == 21:
        # bug: "sync EMA weights" path taken only on rank 1 (its own step counter was off by one)
        dist.broadcast(flat, src=0)
    else:
        dist.all_reduce(flat)
    flat /= world
    o = 0
    for p in model.parameters():
        n = p.numel(); p.grad.copy_(flat[o:o + n].view_as(p)); o += n
    opt.step()
    if step % 5 == 0:
        log.info("train", step=step, loss=round(loss.item(), 4))
