"""Lines of a healthy large job that read like failures (corpus holdout28, first look).

- NCCL's SHARP plugin failing to set up in-network reductions is a fallback: NCCL says it uses
  its point-to-point network instead and training goes on (NVIDIA/nccl#1050,
  Mellanox/nccl-rdma-sharp-plugins#151, coreweave/nccl-tests#39; h28a-009, an MLPerf RNN-T run
  that trained 57 epochs after them).
- A run's parsed arguments printed whole (``Namespace(..., loss_scale=0.0, ...)``: MLPerf BERT,
  the word_language_model example, DETR, torchvision's references in the corpus) are settings,
  not a step's metrics: ``loss_scale=0.0`` asks for dynamic scaling, it is no scale at 0.
- ``global_steps`` is a step counter (MLPerf BERT's ``{'global_steps': 20, 'eval_loss': ...}``,
  TF's LoggingTensorHook dicts).
- 1024 processes printing apex's back-offs into one stream glue reports onto one line; once a
  line shows that, the same back-off again with nothing of its own between is another
  process's copy (h28a-014: 65536 → 512 told dozens of times is four moves at the start).
"""

from __future__ import annotations

from detectors.correlate import _dedupe_moves
from detectors.model import EventKind
from detectors.parsers.fields import extract
from tests.helpers import engine_events, engine_verdict, fed_state

_SHARP = [
    "ib-vm-52:1047884:1048148 [7] sharp_plugin.c:320 NCCL WARN NET/IB : SHARP coll init error: Cannot create SHARP job(-11)",
    "[ip-0A23040D:0:57050 - context.c:601] ERROR sharp_create_job failed: No Aggregation Manager (sharp_am) detected(-52)",
    "ib-vm-41:1056918:1057186 [0] transport.cc:323 NCCL WARN Cannot initialize CollNet, using point-to-point network instead",
]
_BACKOFF = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}"


def test_a_sharp_set_up_failure_is_a_fallback_not_an_alert() -> None:
    # (even with no training step after them: an excerpt of the set-up alone)
    incidents = engine_verdict(_SHARP)
    assert all(i.severity == "info" for i in incidents), [(i.failure, i.severity) for i in incidents]
    # a real NCCL error beside them is still one
    bad = engine_verdict([*_SHARP, "ib-vm-41:1056918:1057186 [0] NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"])
    assert [(i.failure, i.severity) for i in bad][:1] == [("nccl_error", "critical")]


def test_a_printed_namespace_of_arguments_is_no_metric_line() -> None:
    line = ("Namespace(allreduce_post_accumulation=True, fp16=True, learning_rate=0.00039, loss_scale=0.0, "
            "max_steps=7100.0, train_batch_size=2048)")
    assert [e for e in engine_events([line]) if e.kind is EventKind.SAMPLE] == []
    assert [e for e in engine_events(["args: " + line]) if e.kind is EventKind.SAMPLE] == []
    # a metric line that merely mentions a namespace later is still read
    assert extract("step 5 loss 2.31 (see Namespace(x=1))")["loss"] == 2.31


def test_global_steps_is_a_step_counter() -> None:
    assert extract("{'global_steps': 20, 'eval_loss': 4.171822547912598, 'eval_mlm_accuracy': 0.3688699007034302}")[
        "step"] == 20


def test_glued_copies_make_every_repeat_a_copy() -> None:
    many = [_BACKOFF.format("65536.0")] * 5 + [_BACKOFF.format("8192.0") * 2, _BACKOFF.format("8192.0"), ""]
    many += [_BACKOFF.format("512.0") * 3, "", _BACKOFF.format("512.0"), _BACKOFF.format("512.0")]
    moves = _dedupe_moves(fed_state(many).scale_moves)
    assert [m.to_scale for m in moves] == [65536.0, 8192.0, 512.0]


def test_without_a_glued_line_repeats_after_other_lines_stay_one_process_backing_off() -> None:
    # one process printing the same back-off again, with lines of the run between (it grew back)
    lone = [x for _ in range(5) for x in (_BACKOFF.format("512.0"), "", "INFO saving checkpoint")]
    assert len(_dedupe_moves(fed_state(lone).scale_moves)) == 5
