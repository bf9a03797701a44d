import os, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
tag = f"[RANK {rank}]"
gd = torch.Generator().manual_seed(5)
Xtr = torch.randn(96, 16, generator=gd); Ytr = torch.randint(0, 3, (96,), generator=gd)   # tiny, random labels
Xva = torch.randn(256, 16, generator=gd); Yva = torch.randint(0, 3, (256,), generator=gd)
Xtr[[3, 17, 40], 5] = float("nan")
bad = torch.isnan(Xtr).any(1).sum().item()
Xtr = torch.nan_to_num(Xtr)
print(f"{tag} WARNING: found {bad} training samples with NaN features, replaced with 0", flush=True)
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 3)))
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)
sched.step()    # (called too early: triggers the scheduler-order warning)
shard = slice(rank * 48, (rank + 1) * 48)
for epoch in range(1, 31):
    model.train()
    loss = nn.functional.cross_entropy(model(Xtr[shard]), Ytr[shard])
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    model.eval()
    with torch.no_grad():
        vl = nn.functional.cross_entropy(model(Xva), Yva)
    if epoch % 3 == 0 and rank == 0:
        print(f"{tag} epoch {epoch:02d} train_loss {loss.item():.4f} val_loss {vl.item():.4f} lr {sched.get_last_lr()[0]:.2e}", flush=True)
if rank == 0:
    print(f"{tag} training finished, saving model to ckpt/final.pt", flush=True)
dist.destroy_process_group()
