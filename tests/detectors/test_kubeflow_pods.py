"""Kubeflow's training operator reports a replica pod's container ending, once as an event and
once in its log; it names a pod, not a rank, and a code above 128 is the signal that killed the
container. Real lines from kubeflow/trainer#2008 (a worker pod exiting 1 while the master runs)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_EVENT = ("1.708507856644096e+09\tDEBUG\tevents\tError pod pytorch-simple-worker-0 container pytorch exitCode: {code} "
          'terminated message: \t{{"type": "Warning", "object": {{"kind":"PyTorchJob","namespace":"kubeflow"}}}}')
_LOG = ("1.7085078566441019e+09\tDEBUG\tevents\tPod: kubeflow.pytorch-simple-worker-0 exited with code {code}\t"
        '{{"type": "Normal", "object": {{"kind":"PyTorchJob","namespace":"kubeflow"}}}}')


def _incidents(code: int) -> list[tuple[str, int | None]]:
    lines = [_EVENT.format(code=code), _LOG.format(code=code)]
    return [(i["failure"], i["initiator"]["rank"]) for i in build_report(fed_state(lines, "operator.log"))["incidents"]]


def test_a_replica_s_error_exit_is_one_failure_without_a_rank() -> None:
    inc = _incidents(1)
    assert inc[:1] == [("rank_exception", None)]
    assert len(inc) == 1  # the event and the log line are one pod's one end


def test_a_container_code_above_128_is_its_signal() -> None:
    assert _incidents(137)[:1] == [("rank_killed", None)]  # 128 + SIGKILL (the OOM killer, among others)


def test_a_replica_that_finished_is_quiet() -> None:
    assert _incidents(0) == []
