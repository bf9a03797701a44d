import logging, os, random, torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
class RankFilter(logging.Filter):
    def filter(self, record):
        record.rank = rank
        return True
h = logging.StreamHandler()
h.addFilter(RankFilter())
h.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(name)s [rank%(rank)s]: %(message)s"))
log = logging.getLogger("trainer.loop")
log.addHandler(h); log.setLevel(logging.INFO)
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
g = torch.Generator().manual_seed(100 + rank)
X = torch.randn(2048, 32, generator=g); Y = torch.randint(0, 10, (2048,), generator=g)
log.info("world_size=%d, params=%d, batch_size=32", world, sum(p.numel() for p in model.parameters()))
BAD_STEP = 37
for step in range(1, 61):
    idx = torch.randint(0, 2048, (32,), generator=g)
    out = model(X[idx])
    loss = nn.functional.cross_entropy(out, Y[idx])
    if rank == 2 and step >= BAD_STEP:
        loss = loss * float("nan")  # injected
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 5 == 0 or step >= BAD_STEP - 1 and step <= BAD_STEP + 2:
        log.info("step %d/60 loss %.4f lr %.2e", step, loss.item(), opt.param_groups[0]["lr"])
log.info("finished training")
dist.destroy_process_group()
