"""Lines of real jobs in frameworks the project had not seen (accelerate 1.16, Lightning Fabric 2.6,
PyTorch-Ignite 0.5, 4 ranks on the CPU, recorded in round 4 for an unseen check): each test is a
class of line the first look missed."""

from __future__ import annotations

from functools import partial

from tests.helpers import top_verdict

_ACC = "12/03/2026 17:55:11 - INFO - __main__ - [RANK {r}] step {s}: local loss {v}, gathered losses [0.2329, 0.3920, {g}, 0.1589]"


_top = partial(top_verdict, path="console.log")


def test_a_ranks_own_finite_loss_beside_a_nan_mean_leaves_the_nan_to_the_rank_that_had_it() -> None:
    """accelerate: every rank logs its local loss and the gathered list; rank 0 also logs the mean
    (NaN, as any mean with a NaN is). Rank 0's own loss at step 7 was finite: rank 2 went NaN."""
    lines = [_ACC.format(r=r, s=6, v=0.3, g=0.4) for r in range(4)]
    lines += [_ACC.format(r=0, s=7, v=0.2330, g="nan"),
              "12/03/2026 17:55:11 - INFO - __main__ - [RANK 0] step 7: mean loss nan grad_norm nan",
              _ACC.format(r=1, s=7, v=0.3921, g="nan"), _ACC.format(r=2, s=7, v="nan", g="nan"),
              _ACC.format(r=3, s=7, v=0.1589, g="nan")]
    assert _top(lines) == ("nonfinite_loss", 2)


def test_ignites_nan_guard_names_its_rank() -> None:
    lines = ["[default1]:TerminateOnNan: Output 'nan' contains NaN or Inf. Stop training",
             "[default0]:RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
             "Timed out waiting 15000ms for recv operation to complete"]
    assert _top(lines) == ("nonfinite_loss", 1)


def test_a_non_finite_clip_norm_raised_on_every_rank_names_none() -> None:
    """Lightning Fabric clips with error_if_nonfinite=True: every rank raises on the all-reduced
    norm, its own tagged traceback right below each line (no block may claim it)."""
    msg = ("RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
           "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
           "`error_if_nonfinite=False`")
    lines = []
    for r in (1, 3, 0, 2):
        lines += [f"[default{r}]:[rank{r}]: {msg}", f"[default{r}]:[rank{r}]: Traceback (most recent call last):"]
    assert _top(lines) == ("nonfinite_loss", None)


def test_a_spawned_process_that_only_timed_out_is_not_the_crash() -> None:
    """torch.multiprocessing.spawn (Ignite's idist.spawn) names the first process it saw fail and
    prints its traceback: a gloo timeout there is that process waiting on another one."""
    lines = [
        "torch.multiprocessing.spawn.ProcessRaisedException: ",
        "",
        "-- Process 1 terminated with the following error:",
        "Traceback (most recent call last):",
        '  File "/home/user/job/.venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
        "    fn(i, *args)",
        "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out "
        "waiting 15000ms for recv operation to complete",
    ]
    assert _top(lines) == ("collective_timeout", None)
    crashed = [*lines[:-1], "ValueError: corrupt sample in shard 3"]
    assert _top(crashed) == ("rank_exception", 1)


def test_rank_zero_only_metrics_name_no_rank_for_a_spike() -> None:
    """Lightning Fabric's fabric.print in a per-rank layout: only rank 0's file has metrics; the
    grad-norm explosion they show is the all-reduced norm of every rank."""
    lines = ["Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4"]
    lines += [f"[rank0]: iter {i}: loss 0.21, grad_norm {g}" for i, g in enumerate([0.7, 0.8, 0.75, 0.7, 0.72, 0.71,
                                                                                    0.69, 0.7, 0.73, 0.7, 0.71], 1)]
    lines += ["[rank0]: iter 12: loss 0.2100, grad_norm 73.8579"]
    assert _top(lines) == ("grad_norm_explosion", None)


_COSY = "2025-02-20 00:46:13,{ms} DEBUG TRAIN Batch 7/100 loss {v} lr 0.00055784 grad_norm {v} rank {r}"


def test_ranks_whose_loss_went_nan_within_one_steps_logging_time_name_none() -> None:
    """QwenAudio/CosyVoice#652: four ranks log 'loss nan' for the same batch within 21 ms and the
    line carries no step the parser reads: no rank went bad first as far as the log shows."""
    lines = [_COSY.format(ms=ms, v="nan", r=r) for ms, r in ((777, 2), (777, 3), (778, 0), (798, 1))]
    assert _top(lines) == ("nonfinite_loss", None)
    # a rank whose loss went NaN a second before the others' is the first one
    early = ["2025-02-20 00:46:12,500 DEBUG TRAIN Batch 6/100 loss nan lr 0.00055784 grad_norm nan rank 3",
             *[_COSY.format(ms=ms, v="nan", r=r) for ms, r in ((777, 2), (778, 0), (798, 1))]]
    assert _top(early) == ("nonfinite_loss", 3)
