import os, time, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(
    nn.Linear(40, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 8)))
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=100)
g = torch.Generator().manual_seed(rank)
W = torch.randn(40, 8, generator=torch.Generator().manual_seed(99))
if rank == 0:
    print(f"{'step':>6} | {'loss':>8} | {'scale':>10} | {'overflow':>8} | {'lr':>8} | {'ms/step':>7}")
    print("-" * 62)
skipped = 0
for step in range(1, 161):
    t = time.time()
    x = torch.randn(64, 40, generator=g); y = (x @ W).argmax(-1)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    old = scaler.get_scale(); scaler.update(); new = scaler.get_scale()
    ov = new < old; skipped += ov
    if ov and rank == 0:
        print(f"[rank0] Gradient overflow. Skipping step, reducing loss scale to {new:g}")
    if rank == 0 and (step <= 12 or step % 10 == 0):
        print(f"{step:>6} | {loss.item():>8.4f} | {new:>10g} | {str(bool(ov)):>8} | {5e-4:>8.1e} | {1000*(time.time()-t):>7.1f}")
if rank == 0:
    print(f"finished 160 steps, skipped {skipped} steps due to overflow, final loss scale {scaler.get_scale():g}")
dist.destroy_process_group()
