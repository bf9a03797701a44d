"""An uncaught ``std::bad_alloc`` is host memory running out in native code: the process is
terminated (SIGABRT) with no Python traceback. Real pastes: tensorflow/tensor2tensor#192 (during
evaluation), weiliu89/caffe#689 (Caffe's glog stack dump), santi-pdp/segan#40 (the shell's
``Aborted`` line)."""

from __future__ import annotations

from tests.helpers import engine_verdict

_T2T = [
    "INFO:tensorflow:Starting evaluation at 2017-07-28-18:09:20",
    "INFO:tensorflow:Evaluation [1/10]",
    "INFO:tensorflow:Evaluation [2/10]",
    "INFO:tensorflow:Evaluation [3/10]",
    "terminate called after throwing an instance of 'std::bad_alloc'",
    "  what():  std::bad_alloc",
    "Aborted",
]
_CAFFE = [
    "terminate called after throwing an instance of 'std::bad_alloc'",
    "  what():  std::bad_alloc",
    '*** Aborted at 1501135804 (unix time) try "date -d @1501135804" if you are using GNU date ***',
    "PC: @     0x7f31cadd5428 gsignal",
    "*** SIGABRT (@0x30) received by PID 48 (TID 0x7f317b7fe700) from PID 48; stack trace: ***",
    "    @     0x7f31cadd54b0 (unknown)",
    "    @     0x7f31cb40cebc operator new()",
    "Aborted (core dumped)",
]
_SEGAN = [
    "terminate called after throwing an instance of 'std::bad_alloc'",
    "  what():  std::bad_alloc",
    "./clean_wav.sh: line 26:  6499 Aborted",
]


def test_bad_alloc_is_host_memory() -> None:
    for lines in (_T2T, _CAFFE, _SEGAN):
        assert [i.failure for i in engine_verdict(lines)][:1] == ["host_oom"]


def test_another_uncaught_cpp_exception_is_not_host_memory() -> None:
    lines = ["terminate called after throwing an instance of 'std::runtime_error'",
             "  what():  random_device could not be read", "Aborted (core dumped)"]
    assert all(i.failure != "host_oom" for i in engine_verdict(lines))
