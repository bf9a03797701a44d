import os, sys, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.02)
g = torch.Generator().manual_seed(rank)
print("rank,epoch,step,loss,lr", flush=True)
step = 0
for epoch in range(4):
    for i in range(12):
        step += 1
        x = torch.randn(32, 10, generator=g); y = x.sum(1, keepdim=True)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        print(f"{rank},{epoch},{step},{loss.item():.5f},0.02", flush=True)
    # end-of-epoch validation shard check
    shard = f"val_shard_{rank:02d}.bin"
    if rank == 1 and epoch == 2:
        print(f"FATAL: validation shard {shard} failed checksum (expected 9f3a2c1e, got 00000000)", file=sys.stderr, flush=True)
        sys.exit(3)
    dist.barrier()
