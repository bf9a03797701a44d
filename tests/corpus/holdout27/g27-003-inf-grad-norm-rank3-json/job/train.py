import os, math, torch, torch.nn as nn, torch.distributed as dist
import structlog
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
structlog.configure(processors=[structlog.processors.add_log_level,
                                structlog.processors.TimeStamper(fmt="iso"),
                                structlog.processors.JSONRenderer()])
log = structlog.get_logger().bind(rank=rank, world_size=world)

class TinyAttnNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.emb = nn.Embedding(100, d)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.head = nn.Linear(d, 100)
    def forward(self, x):
        h = self.emb(x)
        h = h + self.attn(h, h, h, need_weights=False)[0]
        return self.head(h)

torch.manual_seed(1)
model = TinyAttnNet()
for p in model.parameters():
    dist.broadcast(p.data, 0)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(11 + rank)
log.info("run_start", params=sum(p.numel() for p in model.parameters()), seq_len=16, micro_bs=8)
for step in range(1, 71):
    x = torch.randint(0, 100, (8, 16), generator=g)
    logits = model(x[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 100), x[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward()
    if rank == 3 and step == 52:
        model.attn.in_proj_weight.grad[5, 7] = float("inf")   # injected: overflowing grad in attention
    local_gn = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()
    for p in model.parameters():
        dist.all_reduce(p.grad); p.grad /= world
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
    opt.step()
    lt = loss.detach().clone(); dist.all_reduce(lt); lt /= world
    if step % 10 == 0 or 50 <= step <= 55:
        log.info("train_step", step=step, loss=round(loss.item(), 4), mean_loss=round(lt.item(), 4),
                 local_grad_norm=local_gn, grad_norm=gn, lr=1e-3)
log.info("run_end")
dist.destroy_process_group()
