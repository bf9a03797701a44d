"""tensorboardX warns ``NaN or Inf found in input tensor.`` when a value it is asked to write is
not finite. Without a loss scaler at work every report of it is a loss gone NaN
(DayBreak-u/Thundernet_Pytorch#45, NVlabs/wetectron#83, Chiaraplizz/ST-TR#5,
NVIDIA/semantic-segmentation#29); under fp16 with a dynamic scaler the value can be the grad norm
of an overflow step the scaler skips (corpus h14a-002, h9a-005), which is not a failure."""

from __future__ import annotations

from tests.helpers import engine_verdict

_ST_TR = [
    "[ Wed Jan 20 10:01:12 2021 ] Training epoch: 21",
    "WARNING:root:NaN or Inf found in input tensor.",
    "WARNING:root:NaN or Inf found in input tensor.",
    "WARNING:root:NaN or Inf found in input tensor.",
]
_WARMUP = [
    "Epoch: [0]  [  0/582]  eta: 2:52:07  lr: 0.000000  loss: 0.6931 (0.6931)  loss_scale: 65536.0000 (65536.0000)"
    "  grad_norm: 0.3532 (0.3532)",
    "NaN or Inf found in input tensor.",
    "Epoch: [0]  [ 10/582]  eta: 0:17:00  lr: 0.000002  loss: 0.6931 (0.6931)  loss_scale: 32768.0000 (35746.9091)"
    "  grad_norm: 0.3857 (inf)",
    "Epoch: [0]  [ 20/582]  eta: 0:09:34  lr: 0.000003  loss: 0.6929 (0.6930)  loss_scale: 32768.0000 (34328.3810)"
    "  grad_norm: 0.3246 (inf)",
]


def test_the_warning_alone_is_a_nan_loss() -> None:
    assert [i.failure for i in engine_verdict(_ST_TR)][:1] == ["nonfinite_loss"]


def test_under_a_moving_loss_scaler_it_is_not_a_failure() -> None:
    assert not [i for i in engine_verdict(_WARMUP) if i.severity in ("critical", "warning")]


def test_a_loop_saying_its_loss_has_nan_values() -> None:
    # wav2letter's glog FATAL check, then its stack trace and SIGABRT (a 2019 LibriSpeech recipe run)
    lines = ["F0104 23:37:18.678984 7164 Train.cpp:472] Loss has NaN values",
             "*** Check failure stack trace: ***",
             "@ 0x7fde58c535cd google::LogMessage::Fail()",
             "@ 0x418c2b main",
             "Aborted (core dumped)"]
    assert [i.failure for i in engine_verdict(lines)][:1] == ["nonfinite_loss"]
    # a metric named test_loss is not the training loss
    assert engine_verdict(["Note: test_loss has NaN values; continuing because train/val are finite."]) == []
