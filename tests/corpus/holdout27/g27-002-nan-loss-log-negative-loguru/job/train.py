import os, sys, torch, torch.nn as nn, torch.distributed as dist
from loguru import logger
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
logger.remove()
logger.add(sys.stderr, format="<green>{time:YYYY-MM-DD HH:mm:ss.SSS}</green> | <level>{level: <8}</level> | rank={extra[rank]} | <cyan>{name}</cyan>:<cyan>{function}</cyan>:<cyan>{line}</cyan> - <level>{message}</level>", colorize=False)
log = logger.bind(rank=rank)

class SoftDiceLoss(nn.Module):
    """custom loss: -log(dice) on softmax probs"""
    def forward(self, logits, target, smooth=1.0):
        p = logits.softmax(-1)
        oh = nn.functional.one_hot(target, p.shape[-1]).float()
        inter = (p * oh).sum()
        dice = (2 * inter + smooth) / (p.sum() + oh.sum() + smooth)
        return -torch.log(dice)

torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 48), nn.GELU(), nn.Linear(48, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
crit = SoftDiceLoss()
g = torch.Generator().manual_seed(7 + rank)
log.info("Starting training: world_size={} optimizer=SGD lr=0.05", world)
for step in range(1, 41):
    x = torch.randn(64, 16, generator=g); y = torch.randint(0, 4, (64,), generator=g)
    smooth = 1.0
    if rank == 1 and step == 23:
        smooth = -100.0   # injected: bad smoothing from a config override -> log of a negative
    loss = crit(model(x), y, smooth=smooth)
    if not torch.isfinite(loss):
        log.error("Non-finite loss detected at step {}: loss={}", step, loss.item())
        raise FloatingPointError(f"Loss is {loss.item()} at step {step}, stopping training")
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 4 == 0:
        log.info("step={} loss={:.5f}", step, loss.item())
log.success("training done")
