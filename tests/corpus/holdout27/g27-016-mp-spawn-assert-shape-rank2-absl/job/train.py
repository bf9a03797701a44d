import os, torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp
from absl import logging
from datetime import timedelta

def collate_patches(batch, rank, step):
    x = torch.stack(batch)
    if rank == 2 and step == 19:
        x = x[:, :, :15]          # simulated: one corrupt image in this shard is 15 px high
    return x

def worker(rank, world):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    logging.set_verbosity(logging.INFO)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 16, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(rank)
    logging.info("[worker %d/%d] ready", rank, world)
    for step in range(1, 31):
        x = collate_patches([torch.randn(3, 16, 16, generator=g) for _ in range(8)], rank, step)
        assert x.shape[1:] == (3, 16, 16), f"bad patch batch shape {tuple(x.shape)} at step {step}"
        y = torch.randint(0, 10, (8,), generator=g)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if step % 5 == 0:
            logging.info("[worker %d] step=%d loss=%.4f", rank, step, loss.item())
    dist.destroy_process_group()

if __name__ == "__main__":
    logging.info("spawning %d workers", 3)
    mp.spawn(worker, args=(3,), nprocs=3, join=True)
