"""Values are named by what they are, not by the shape they are printed in.

- A dict print (``{'step': 120, 'loss': nan, ...}``) has the shape of HF Trainer's reduced log,
  but when every rank prints its own behind a ``[rankN]`` tag and the others' losses at that step
  are finite, the NaN is that rank's own: a value reduced over ranks is the same on every rank.
- A rank whose OWN grad norm (``local_grad_norm``) went non-finite steps before every rank's loss
  went NaN at once started it: the all-reduced inf spread from its gradients.

Sources of the shapes: CPU ``torchrun`` jobs of the round-19 gatherers (corpus holdout24 g24-025,
a per-rank dict print; g24-026, ``rank=1 step=95 loss=0.31651 local_grad_norm=inf grad_norm=inf``)."""

from __future__ import annotations

from tests.helpers import engine_verdict


def _dicts(bad: dict[int, int]) -> list[str]:
    lines = []
    for step in [*range(20, 120, 20), 119, *range(120, 126)]:
        for r in (2, 1, 3, 0):
            loss = "nan" if step >= bad.get(r, 10**9) else f"{0.9 - step / 400 + r / 50:.6f}"
            lines.append(f"[rank{r}] {{'step': {step}, 'loss': {loss}, 'lr': 0.001}}")
    return lines


def test_one_ranks_nan_in_a_dict_print_beside_the_others_finite_names_it() -> None:
    top = engine_verdict(_dicts({3: 120}))[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 3, 120)


def test_every_ranks_dict_nan_at_once_names_no_rank() -> None:
    top = engine_verdict(_dicts({0: 120, 1: 120, 2: 120, 3: 120}))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)


def _kv(own_inf: int | None) -> list[str]:
    lines = []
    for step in range(5, 105, 5):
        for r in (0, 1):
            if step >= 100:
                lines.append(f"rank={r} step={step} loss=nan local_grad_norm=nan grad_norm=nan")
                continue
            local = "inf" if own_inf is not None and r == own_inf and step >= 95 else f"{1.0 + r / 10 + step / 500:.4f}"
            reduced = "inf" if own_inf is not None and step >= 95 else f"{1.05 + step / 500:.4f}"
            lines.append(f"rank={r} step={step} loss={0.9 - step / 300:.5f} local_grad_norm={local} grad_norm={reduced}")
    return lines


def test_the_rank_whose_own_grad_norm_went_inf_before_every_loss_went_nan_is_named() -> None:
    top = engine_verdict(_kv(own_inf=1))[0]
    assert (top.failure, top.rank, top.step) == ("nonfinite_loss", 1, 95)


def test_every_loss_nan_at_once_with_no_own_norm_before_names_no_rank() -> None:
    top = engine_verdict(_kv(own_inf=None))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", None)
