"""Classes of line the fw4 jobs (Hydra, MMEngine, wandb; tests/e2e/README.md, "first look, fw4")
showed the engine reading wrongly, each with lines from other real sources (named above each):

1. an iteration counter that names its loop before the bracket: MMEngine's iteration-based loop
   prints ``Iter(train) [ 7/20]`` (the global iteration), with the metrics after it; read as no
   step, a NaN grad norm one iteration before the loss turned NaN looked like the same moment;
2. a world size under the name an environment dump gives it: MMEngine's ``Runtime environment``
   block says ``GPU number: N`` (its Runner's ``_world_size``); unread, a console where only rank 0
   logs (MMLogger prints nothing on other ranks) looked like a one-rank job, so rank 0's reduced
   view was taken as its own loss.
"""

from __future__ import annotations

from detectors.diagnosis import build_report
from detectors.model import EventKind
from detectors.parse import default_parser
from detectors.parsers.base import FileState, JobParseState
from tests.helpers import fed_state


def _samples(lines: list[str]) -> list[tuple[int | None, dict[str, object]]]:
    fs = FileState("train.log", year=2026, job=JobParseState())
    parser = default_parser()
    return [(ev.step, ev.data) for i, line in enumerate(lines, 1) for ev in parser.parse_line(line, i, fs)
            if ev.kind is EventKind.SAMPLE and ev.data.get("scope") != "perf"]  # throughput keys: their own


def _context(lines: list[str]) -> dict[str, object]:
    fs = FileState("train.log", year=2026, job=JobParseState())
    parser = default_parser()
    return {str(ev.data["key"]): ev.data["value"] for i, line in enumerate(lines, 1)
            for ev in parser.parse_line(line, i, fs) if ev.kind is EventKind.CONTEXT}


def _incidents(lines: list[str]) -> list[tuple[str, int | None, int | None]]:
    return [(inc["failure"], inc["initiator"]["rank"], inc["initiator"]["step"])
            for inc in build_report(fed_state(lines))["incidents"]]


# --- 1. Iter(train) [ i/N] ----------------------------------------------------------------------

# xtuner's docs (InternLM/xtuner, "the correct training log may look similar to": padded counter)
_XTUNER = ("01/29 21:35:34 - mmengine - INFO - Iter(train) [ 10/720]  lr: 9.0001e-05  eta: 0:31:46  "
           "time: 2.6851  data_time: 0.0077  memory: 12762  loss: 2.6900")
# an mmsegmentation FastSCNN fine-tuning log (a tutorial's pasted console; loss components after the loss)
_MMSEG = ("08/02 12:35:47 - mmengine - INFO - Iter(train) [ 9600/10000]  lr: 1.1351e-01  eta: 0:00:50  "
          "time: 0.1238  data_time: 0.0031  memory: 864  loss: 0.0688  decode.loss_ce: 0.0305  "
          "decode.acc_seg: 92.9966  aux_0.loss_ce: 0.0163  aux_0.acc_seg: 87.6057")
# xtuner's DeepSeek-V2 full fine-tune log (its README): throughput keys after the loss
_XTUNER_DS = ("2025/02/09 07:47:19 - mmengine - INFO - Iter(train) [ 8851/96000]  lr: 9.7918e-06  "
              "eta: 18 days, 16:18:38  time: 115.0463  data_time: 99.0316  memory: 54047  loss: 0.0018  "
              "tflops: 4.8280  tokens_per_sec: 142.4122")
# MMEngine 0.10.7's Runner on 4 CPU ranks (fw4's recorded job): grad_norm from the OptimWrapper's clip
_FW4 = ("[default0]:12/04 13:33:55 - mmengine - INFO - Iter(train) [ 7/20]  lr: 5.0000e-02  eta: 0:00:00  "
        "time: 0.0184  data_time: 0.0013  grad_norm: nan  loss: 0.4039")


def test_the_iteration_of_a_named_loop_is_the_step() -> None:
    got = _samples([_XTUNER, _MMSEG, _XTUNER_DS, _FW4])
    assert [step for step, _ in got] == [10, 9600, 8851, 7]
    assert [d.get("loss") for _, d in got[:3]] == [2.69, 0.0688, 0.0018]


def test_a_validation_loops_counter_is_not_the_training_step() -> None:
    # mmseg's validation summary (same tutorial): its counter restarts every evaluation
    line = ("08/02 12:36:38 - mmengine - INFO - Iter(val) [11/11]    aAcc: 88.9900  mIoU: 57.5900  "
            "mAcc: 67.3000  data_time: 0.0075  time: 0.0340  loss: 0.31")
    assert all(step is None for step, _ in _samples([line]))


def test_a_nan_grad_norm_an_iteration_before_the_nan_loss_names_no_rank_from_the_loss() -> None:
    # rank 0 logs for the job: grad_norm (all-reduced) nan at 7, its loss nan only from 8
    lines = [_FW4, _FW4.replace("[ 7/20]", "[ 8/20]").replace("loss: 0.4039", "loss: nan")]
    assert _incidents(lines)[0][:2] == ("nonfinite_loss", None)
    assert _incidents(lines)[0][2] == 7


# --- 2. GPU number: N ---------------------------------------------------------------------------

# MMEngine's "Runtime environment" block as the Runner logs it (mmengine/runner/runner.py
# _log_env: runtime_env['GPU number'] = self._world_size); fw4's recorded 4-rank job
_ENV = ["[default0]:Runtime environment:", "[default0]:    dist_cfg: {'backend': 'gloo'}",
        "[default0]:    Distributed launcher: pytorch", "[default0]:    Distributed training: True",
        "[default0]:    GPU number: 4"]


def test_mmengines_gpu_number_is_the_world_size() -> None:
    assert _context(_ENV).get("world_size") == 4
    assert _context(["    cudnn_benchmark: False", "    Distributed training: False", "    GPU number: 1"]).get(
        "world_size") == 1


def test_a_lone_logging_rank_of_a_known_world_names_no_rank() -> None:
    # only rank 0 prints metrics (MMLogger logs at ERROR on the other ranks); a NaN in its loss
    # at the first bad step is the logging rank's view, not proof that rank 0 went bad
    nan_at_once = [_FW4.replace("grad_norm: nan  loss: 0.4039", "grad_norm: 0.91  loss: 0.4039"),
                   _FW4.replace("[ 7/20]", "[ 8/20]").replace("loss: 0.4039", "loss: nan")]
    assert _incidents(nan_at_once)[0][:2] == ("nonfinite_loss", 0)  # one rank seen, world unknown
    assert _incidents([*_ENV, *nan_at_once])[0][:2] == ("nonfinite_loss", None)


def test_a_plain_epoch_before_its_batch_counter_orders_the_epochs_lines() -> None:
    # plain loops print the epoch bare before the bracketed batch counter ("Epoch 2 [20/31]", a CPU
    # torchrun job, corpus holdout18 g18-047; "Epoch 3/10 [120/500]"): the epoch and the batch
    # within it, no global step
    got = _samples(["2026-12-06 03:28:27,414 INFO [rank=2] train.py:21 Epoch 2 [20/31] loss=1.1340 lr=0.0030",
                    "Epoch 3/10 [120/500] loss: 0.5213"])
    assert [(step, d.get("epoch"), d.get("epoch_iter")) for step, d in got] == [(None, 2.0, 20.0), (None, 3.0, 120.0)]
