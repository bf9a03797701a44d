# accelerate + torchrun; bf16 mixed precision. The "GPU" layer below is simulated on CPU:
# each rank pretends to own a device from FAKE_DEVICES, and the fused bf16 GEMM fails on sm < 80
import os, logging, torch, torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger
torch.set_num_threads(1)
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
FAKE_DEVICES = {0: ("NVIDIA GeForce RTX 3090", (8, 6)), 1: ("NVIDIA GeForce RTX 3090", (8, 6)),
                2: ("NVIDIA GeForce RTX 2080 Ti", (7, 5))}

def fused_bf16_linear(x, weight, bias, cap):
    if x.dtype == torch.bfloat16 and cap < (8, 0):
        raise RuntimeError(
            "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, "
            "&falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, "
            "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")
    return nn.functional.linear(x, weight, bias)

class FusedLinear(nn.Linear):
    cap = (8, 0)
    def forward(self, x):
        return fused_bf16_linear(x.to(torch.bfloat16), self.weight.to(torch.bfloat16), self.bias.to(torch.bfloat16), self.cap)

acc = Accelerator(mixed_precision="bf16", cpu=True)
logger = get_logger("train_bf16")
name, cap = FAKE_DEVICES[acc.process_index]
FusedLinear.cap = cap
logger.info(f"process {acc.process_index}/{acc.num_processes} device cuda:{acc.local_process_index} = {name} (compute capability {cap[0]}.{cap[1]})", main_process_only=False)
logger.info(f"mixed_precision={acc.mixed_precision} num_processes={acc.num_processes}")
torch.manual_seed(0)
model = nn.Sequential(FusedLinear(32, 64), nn.SiLU(), FusedLinear(64, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ds = torch.utils.data.TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
dl = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True)
model, opt, dl = acc.prepare(model, opt, dl)
for step, (x, y) in enumerate(dl):
    with acc.autocast():
        loss = nn.functional.cross_entropy(model(x).float(), y)
    acc.backward(loss); opt.step(); opt.zero_grad()
    if step % 2 == 0:
        logger.info(f"step {step} loss {loss.item():.4f}")
