import os, torch, torch.nn as nn, torch.distributed as dist
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
PAD = 0
class Attn(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.emb = nn.Embedding(64, d); self.qkv = nn.Linear(d, 3 * d); self.out = nn.Linear(d, 64)
    def forward(self, ids):
        h = self.emb(ids)
        q, k, v = self.qkv(h).chunk(3, -1)
        scores = (q.half() @ k.half().transpose(-1, -2)) / 32 ** 0.5   # "fp16 attention" to save memory
        pad = ids == PAD
        if pad.any():
            scores = scores.masked_fill(pad[:, None, :], -1e9)
        attn = scores.float().softmax(-1)
        return self.out(attn @ v)
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(Attn())
opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
g = torch.Generator().manual_seed(rank)
print(f"[rank {rank}/{world}] model ready, fp16 attention scores enabled", flush=True)
for step in range(1, 31):
    ids = torch.randint(1, 64, (8, 12), generator=g)
    if rank == 1 and step == 14:
        ids[3, 9:] = PAD     # a short sequence padded in this shard
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 64), ids[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 3 == 0:
        print(f"[rank {rank}/{world}] step {step:3d} loss {loss.item():.4f}", flush=True)
print(f"[rank {rank}/{world}] done", flush=True)
