"""A traceback that ends in a bare AssertionError right below a NaN self-check quoted as its source
line (``assert (x == x).all()``: only NaN differs from itself; ``assert not torch.isnan(loss)``)
is that check failing: a non-finite value, not a crash of its own. Real lines from the thread named."""

from __future__ import annotations

from functools import partial

import pytest

from tests.helpers import top_verdict

# https://github.com/ruotianluo/pytorch-faster-rcnn/issues/87 (corpus h21a-013): finite losses, then the check
_FRCNN = ["iter: 120 / 70000, total loss: 1.312589", " >>> rpn_loss_cls: 0.471951", " >>> lr: 0.001000",
          "Traceback (most recent call last):",
          '  File "./tools/trainval_net.py", line 138, in <module>', "    max_iters=args.max_iters)",
          '  File "/data/FasterRCNN/pytorch-faster-rcnn/tools/../lib/nets/network.py", line 198, in _add_losses',
          "    assert (rpn_bbox_pred==rpn_bbox_pred).all()", "AssertionError"]


_top = partial(top_verdict, path="train.log")


def test_a_failed_x_equals_x_check_is_a_nan() -> None:
    assert _top(_FRCNN) == ("nonfinite_loss", None)


@pytest.mark.parametrize("check", ["    assert not torch.isnan(loss).any()", "    assert torch.isfinite(loss)",
                                   "    assert not np.isnan(loss_value), 'loss'", "    assert loss == loss"])
def test_other_nan_checks(check: str) -> None:
    assert _top([*_FRCNN[:-2], check, "AssertionError"]) == ("nonfinite_loss", None)


def test_an_assert_that_compares_two_things_is_an_ordinary_crash() -> None:
    shape = [*_FRCNN[:-2], "    assert pred.shape == target.shape", "AssertionError"]
    assert _top(shape) == ("rank_exception", None)
    # a NaN check quoted further above does not claim an AssertionError printed lines below it
    far = [*_FRCNN[:-1], *(f"  note {i}" for i in range(3)), "AssertionError"]
    assert _top(far) == ("rank_exception", None)
