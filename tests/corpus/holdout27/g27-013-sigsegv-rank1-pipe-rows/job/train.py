import os, signal, time, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 16)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(rank)
if rank == 0:
    print(f"training on {world} processes", flush=True)
t0 = time.time()
for step in range(1, 81):
    x = torch.randn(32, 64, generator=g); y = torch.randint(0, 16, (32,), generator=g)
    if rank == 1 and step == 44:
        # simulated: native extension (custom augmentation op) dereferences a bad pointer
        os.kill(os.getpid(), signal.SIGSEGV)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if rank == 0 and step % 10 == 0:
        el = time.time() - t0
        print(f"step {step:4d} | loss {loss.item():.4f} | lr {1e-3:.1e} | {1000*el/step:.1f} ms/it | elapsed {el:.1f}s", flush=True)
if rank == 0:
    print("training complete", flush=True)
