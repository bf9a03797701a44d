"""A rank's own loss printed beside the all-reduced one (``local_loss 0.8190 | loss nan``): the own
one is the rank's signal, the reduced one every rank's alike (fields ``local_loss``, as
``local_grad_norm`` beside a reduced grad norm). So the rank whose own loss went NaN is named,
and its peers' guards that then stop on the reduced NaN (``RuntimeError: Loss is nan, stopping
training``) at that step, their own losses finite, are collateral.

Format: a script's own step line behind Open MPI's ``mpirun --tag-output`` prefix, and timm/DeiT's
guard wording (corpus holdout31 g31e-005)."""

from __future__ import annotations

from tests.helpers import engine_events, engine_verdict


def _step(r: int, s: int, local: str, reduced: str) -> str:
    return (f"[1,{r}]<stdout>:[2026-12-07 23:23:12][rank{r}] step {s:4d}/50 | local_loss {local} | loss {reduced} | "
            f"grad_norm {'nan' if reduced == 'nan' else '0.474'} | lr 0.01")


def _guard(r: int) -> list[str]:
    return [f"[1,{r}]<stderr>:[rank{r}]: Traceback (most recent call last):",
            f'[1,{r}]<stderr>:[rank{r}]:   File "/home/user/train.py", line 98, in <module>',
            f"[1,{r}]<stderr>:[rank{r}]: RuntimeError: Loss is nan, stopping training"]


def _job(bad: int) -> list[str]:
    out = [_step(r, s, f"0.{80 + r}{s % 10}", f"0.9{s % 10}") for s in range(20, 26) for r in range(4)]
    for r in range(4):
        out += [_step(r, 26, "nan" if r == bad else f"0.8{r}", "nan"), *_guard(r)]
    return out


def test_the_own_loss_is_read_over_the_reduced_one() -> None:
    (ev,) = [e for e in engine_events([_step(0, 26, "0.8190", "nan")]) if e.kind.value == "sample"]
    assert ev.data["loss"] == 0.819


def test_the_rank_whose_own_loss_went_nan_is_named_over_its_peers_guards() -> None:
    top = engine_verdict(_job(3))[0]
    assert (top.failure, top.rank) == ("nonfinite_loss", 3)
