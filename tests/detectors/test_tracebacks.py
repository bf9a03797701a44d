"""Tracebacks the exception rule cannot close: a log that stops inside one (a paste cut
there, a process killed while printing it), and ``raise Exception("...")``'s bare
``Exception: ...`` line."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

# the shape of a rank-tagged traceback from a torchrun job (VLM-R1's GRPO trainer, its
# paste ends inside the frames), PyTorch >= 2.2's "[rankN]:" excepthook prefix
_CUT = """Parameter Offload: Total persistent parameters: 755712 in 408 params
[rank2]: Traceback (most recent call last):
[rank2]:   File "/root/VLM-R1/src/open_r1/grpo_rec.py", line 324, in <module>
[rank2]:     main(script_args, training_args, model_args)
[rank2]:   File "/root/VLM-R1/src/open_r1/grpo_rec.py", line 313, in main
[rank2]:     trainer.train()
[rank2]:   File "/usr/lib/python3.10/site-packages/transformers/trainer.py", line 2508, in _inner_training_loop
[rank2]:     batch_samples, num_items_in_batch = self.get_batch_samples(epoch_iterator, num_batches)"""


def incidents(text: str) -> list[dict]:
    return build_report(fed_state(text.splitlines()))["incidents"]


def test_a_log_that_stops_inside_a_traceback_names_its_rank() -> None:
    (inc,) = incidents(_CUT)
    assert (inc["failure"], inc["severity"], inc["initiator"]["rank"]) == ("rank_exception", "critical", 2)
    assert inc["initiator"]["evidence"][0]["line"] == 2 and inc["initiator"]["rank_from"] == "prefix"  # the header
    assert "ends before its exception line" in inc["root_cause"][0]


def test_a_traceback_closed_by_its_exception_line_or_by_progress_is_not_unfinished() -> None:
    closed = incidents(_CUT + "\n[rank2]: ValueError: corrupt sample in shard 3")
    assert [(i["failure"], i["initiator"]["rank"]) for i in closed] == [("rank_exception", 2)]
    assert "ends before" not in str(closed)
    # a handled exception printed with its traceback (an ignored type), then training goes on
    handled = incidents(_CUT + "\n[rank2]: KeyboardInterrupt\n[rank2]: step 12 | loss 0.51")
    assert handled == []


def test_an_unfinished_traceback_never_outranks_a_real_failure() -> None:
    oom = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB"
    got = incidents(oom + "\n" + _CUT)
    assert [(i["failure"], i["initiator"]["rank"]) for i in got][:1] == [("cuda_oom", 1)]


def test_a_bare_exception_line_is_read() -> None:
    # GPT-NeoX's overflow monitor (EleutherAI/gpt-neox#482) raises a bare Exception
    got = incidents("Traceback (most recent call last):\n  File \"train.py\", line 27, in <module>\n"
                    "Exception: Skipped 50 iterations in a row due to Overflow - Exiting training.")
    assert [i["failure"] for i in got][:1] == ["loss_scale_collapse"]
    assert [(i["failure"], i["initiator"]["rank"]) for i in incidents("[rank3]: Exception: shard index out of range")] == [
        ("rank_exception", 3)]
    assert incidents("Caught Exception: retrying the download") == []  # not a line of its own


def test_a_series_of_printed_loss_tensors_is_read() -> None:
    # print(loss) every step (lich99/ChatGLM-finetune-LoRA#32, corpus h3-067)
    lines = ["tensor(3.2207, device='cuda:0')"] + ["tensor(nan, device='cuda:0')"] * 3
    assert [(i["failure"], i["initiator"]["rank"]) for i in incidents("\n".join(lines))] == [("nonfinite_loss", None)]
    # one printed tensor alone is any scalar
    assert incidents("some value\ntensor(nan, device='cuda:0')\n") == []


def test_a_watchdog_timeout_without_seqnum_is_read() -> None:
    # torch <= 1.10 printed no SeqNum (huggingface/accelerate#314, corpus h3-050)
    line = ("[E ProcessGroupNCCL.cpp:485] [Rank 6] Watchdog caught collective operation timeout: "
            "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802246 milliseconds before timing out.")
    assert [i["failure"] for i in incidents(line)] == ["collective_timeout"]
