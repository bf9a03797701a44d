"""A tiny real skorch job: ``NeuralNetRegressor.fit`` in one process, with one injected fault.

skorch prints its own epoch table (``PrintLog``: ``epoch  train_loss  valid_loss  dur``, a
row per epoch, the best values coloured) on stdout. Each epoch is one full-batch step over the
shared synthetic data (``jobkit.Synthetic``), so an epoch is a step (counted from 1), 20 in all;
skorch's default 80/20 split gives the validation loss. The fault fires in the module's forward
at training step k: the faults of ``jobkit.pre_fault`` (``hang`` and ``sigkill`` excluded: no
peers, no launcher), a NaN in the input, or ``spike``: the learning rate x1000 for the update before that step
(gradients clipped at norm 1 by skorch's ``GradientNormClipping``, so the loss jumps and stays finite).
"""

from __future__ import annotations

import torch
from jobkit import (  # a sibling: the job runs as a script from this folder
    Synthetic,
    job_parser,
    make_net,
    pre_fault,
)
from skorch import NeuralNetRegressor
from skorch.callbacks import Callback, GradientNormClipping


class Faulty(torch.nn.Module):
    """The shared MLP, with the fault in its forward at the k-th training call."""

    def __init__(self, fault: str = "none", at: int = 0) -> None:
        super().__init__()
        self.net, self.fault, self.at, self.calls = make_net(), fault, at, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        at_fault = False
        if self.training:
            self.calls += 1
            at_fault = self.calls == self.at
            pre_fault(self.fault, at_fault, 0)
            if at_fault and self.fault == "nan":
                x = x.clone()
                x[0, 0] = float("nan")
        out: torch.Tensor = self.net(x)
        return out


class LrSpike(Callback):  # type: ignore[misc]
    """The learning rate x1000 for the update that ends step ``at - 1``: skorch logs an epoch's loss
    from its forward, before the update, so the jump shows at step ``at``."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_epoch_begin(self, net: NeuralNetRegressor, **kwargs: object) -> None:
        epoch = len(net.history)  # this epoch's number, from 1
        for group in net.optimizer_.param_groups:
            group["lr"] = net.lr * (1000.0 if epoch == self.at - 1 else 1.0)


def main() -> None:
    p = job_parser(["none", "nan", "exception", "oom", "spike"])
    args = p.parse_args()
    torch.manual_seed(0)
    data = Synthetic(200)
    callbacks: list[Callback] = [GradientNormClipping(gradient_clip_value=1.0)]
    if args.fault == "spike":
        callbacks.append(LrSpike(args.fault_step))
    net = NeuralNetRegressor(Faulty, module__fault=args.fault, module__at=args.fault_step,
                             max_epochs=args.steps, lr=0.05, batch_size=-1, optimizer=torch.optim.SGD,
                             iterator_train__shuffle=False, callbacks=callbacks, device="cpu")
    net.fit(data.x, data.y.unsqueeze(-1))
    print("done")


if __name__ == "__main__":
    main()
