import os, signal, time, resource, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
def kv(level, msg, **f):
    fields = " ".join(f"{k}={v}" for k, v in f.items())
    print(f'time={time.strftime("%Y-%m-%dT%H:%M:%S")} level={level} rank={rank} msg="{msg}" {fields}', flush=True)
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Conv1d(4, 16, 5, padding=2), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 64, 2)))
opt = torch.optim.Adam(model.parameters(), lr=3e-4)
g = torch.Generator().manual_seed(rank)
cache = []   # "prefetch cache" that grows without bound on rank 2 (bug)
kv("info", "starting", world_size=world, pid=os.getpid())
for step in range(1, 61):
    x = torch.randn(16, 4, 64, generator=g); y = torch.randint(0, 2, (16,), generator=g)
    if rank == 2:
        cache.append(torch.empty(2_000_000).fill_(1.0))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 8 == 0:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        kv("info", "train step", step=step, loss=f"{loss.item():.4f}", rss_mb=rss)
    if rank == 2 and step == 37:
        os.kill(os.getpid(), signal.SIGKILL)   # simulated: kernel OOM killer picks this process
kv("info", "finished")
