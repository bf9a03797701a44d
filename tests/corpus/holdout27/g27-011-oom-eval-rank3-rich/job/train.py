import logging, os, torch, torch.nn as nn, torch.distributed as dist
from rich.logging import RichHandler
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
logging.basicConfig(level="INFO", format=f"[r{rank}] %(message)s", datefmt="[%X]",
                    handlers=[RichHandler(show_path=True, rich_tracebacks=False)])
log = logging.getLogger("finetune")
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(48, 96), nn.ReLU(), nn.Linear(96, 48)))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
g = torch.Generator().manual_seed(rank)
log.info("loaded model on cuda:%d, world_size=%d", rank, world)
for step in range(1, 41):
    x = torch.randn(16, 48, generator=g)
    loss = nn.functional.mse_loss(model(x), x)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 10 == 0:
        log.info("step %d train/loss=%.4f", step, loss.item())
        model.eval()
        with torch.no_grad():
            if rank == 3 and step == 30:
                # simulated: eval batch with all logits kept -> allocator failure on this GPU
                raise torch.OutOfMemoryError(
                    "CUDA out of memory. Tried to allocate 4.88 GiB. GPU 3 has a total capacity of 79.15 GiB of which "
                    "3.61 GiB is free. Including non-PyTorch memory, this process has 75.53 GiB memory in use. Of the "
                    "allocated memory 71.02 GiB is allocated by PyTorch, and 3.87 GiB is reserved by PyTorch but "
                    "unallocated. If reserved but unallocated memory is large try setting "
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
                    "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
            vx = torch.randn(64, 48, generator=g)
            vl = torch.tensor(nn.functional.mse_loss(model(vx), vx).item())
        dist.all_reduce(vl); vl /= world
        log.info("step %d eval/loss=%.4f", step, vl.item())
        model.train()
log.info("done")
