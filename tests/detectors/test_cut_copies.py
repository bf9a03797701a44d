"""An exception line cut short where a paste or a log ends (``RuntimeError: NCCL error in:
/opt/conda/.../torch/l``), whose text is the start of a line another process printed whole and a
fingerprint named: the same error, not a plain exception outranking it.

Source: facebookresearch/maskrcnn-benchmark, two training processes failing in ``dist.barrier()``
with torch 1.0's ``NCCL error in: ProcessGroupNCCL.cpp:388, invalid argument``, the second
traceback cut by the paste (corpus holdout24 h24b-017)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_TB = ["Traceback (most recent call last):", '  File "tools/train_net.py", line 174, in <module>', "    main()",
       '  File "/home/user/maskrcnn_benchmark/utils/comm.py", line 45, in synchronize', "    dist.barrier()",
       '  File "/opt/envs/mb/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 1177, in barrier',
       "    work = _default_pg.barrier()"]
_WHOLE = "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1549635019666/work/torch/lib/c10d/ProcessGroupNCCL.cpp:388, invalid argument"


def test_a_cut_copy_of_an_nccl_error_is_that_error() -> None:
    top = engine_verdict([*_TB, _WHOLE, *_TB, _WHOLE[:80]])[0]
    assert (top.failure, top.rank) == ("nccl_error", None)


def test_a_cut_line_that_starts_no_other_stays_an_exception() -> None:
    top = engine_verdict([*_TB, _WHOLE, *_TB, "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu"])[0]
    assert top.failure == "rank_exception"
