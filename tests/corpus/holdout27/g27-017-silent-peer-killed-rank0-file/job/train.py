import logging, os, signal, sys, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                    format=f"%(asctime)s | %(levelname).1s | node0/gpu{rank} | %(module)s:%(lineno)d | %(message)s")
log = logging.getLogger(__name__)
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(30, 60), nn.ReLU(), nn.Linear(60, 30)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
log.info("DDP ready (world_size=%d)", world)
for step in range(1, 101):
    if rank == 1 and step == 63:
        os.kill(os.getpid(), signal.SIGKILL)     # simulated: process killed from outside, no message
    x = torch.randn(24, 30, generator=g)
    loss = nn.functional.mse_loss(model(x), x.flip(-1))
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 15 == 0:
        log.info("iter %d: recon_loss=%.5f", step, loss.item())
log.info("done")
