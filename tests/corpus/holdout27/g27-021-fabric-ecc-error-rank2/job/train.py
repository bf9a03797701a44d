import time, torch, torch.nn as nn
import lightning as L
torch.set_num_threads(1)

class HwFault(RuntimeError):
    pass

def main():
    fabric = L.Fabric(accelerator="cpu", devices=3, strategy="ddp")
    fabric.launch()
    r = fabric.global_rank
    fabric.seed_everything(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, opt = fabric.setup(model, opt)
    g = torch.Generator().manual_seed(r)
    fabric.print(f"Fabric world_size={fabric.world_size}")
    for it in range(1, 51):
        x = torch.randn(32, 32, generator=g)
        y = model(x)
        if r == 2 and it == 33:
            # simulated hardware fault on this rank's GPU, with the message PyTorch prints
            raise RuntimeError(
                "CUDA error: uncorrectable ECC error encountered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
        loss = nn.functional.mse_loss(y, x)
        opt.zero_grad(); fabric.backward(loss); opt.step()
        if it % 8 == 0:
            print(f"rank{r} it={it} loss={loss.item():.4f} t={time.strftime('%H:%M:%S')}", flush=True)

if __name__ == "__main__":
    main()
