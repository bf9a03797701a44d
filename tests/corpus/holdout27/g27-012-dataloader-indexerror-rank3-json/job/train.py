import json, time, os, torch, torch.nn as nn, torch.distributed as dist
from torch.utils.data import Dataset, DataLoader, DistributedSampler
torch.set_num_threads(1)

class ShardedTokens(Dataset):
    def __init__(self, n=800, rank=0):
        self.n = n; self.rank = rank
        self.offsets = list(range(0, n * 8, 8))
        if rank == 3:
            self.offsets = self.offsets[:-40]   # simulated: truncated index file for shard 3
        self.data = torch.randint(0, 50, (n * 8,))
    def __len__(self): return self.n
    def __getitem__(self, i):
        o = self.offsets[i]
        return self.data[o:o + 8]

def jlog(**kw):
    kw = {"ts": round(time.time(), 3), **kw}
    print(json.dumps(kw), flush=True)

if __name__ == "__main__":
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ds = ShardedTokens(rank=rank)
    dl = DataLoader(ds, batch_size=8, num_workers=1, shuffle=False)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Embedding(50, 16), nn.Flatten(), nn.Linear(16 * 7, 50)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    jlog(event="start", rank=rank, world_size=world, num_batches=len(dl))
    for step, b in enumerate(dl):
        loss = nn.functional.cross_entropy(model(b[:, :-1]), b[:, -1])
        opt.zero_grad(); loss.backward(); opt.step()
        if step % 20 == 0:
            jlog(event="train", rank=rank, step=step, loss=round(loss.item(), 4))
    jlog(event="end", rank=rank)
