"""Open MPI's ``MPI_ABORT was invoked on rank N in communicator C`` (with ``with errorcode E.``
on the same or the next line): rank N called MPI_Abort (Horovod and mpi4py do on an uncaught
exception) and Open MPI killed the rest, so rank N ended the job. Real lines from the Open MPI
users' list and users' pastes (an exabayes run, an OpenFOAM solver, a Horovod-style traceback)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from tests.helpers import fed_state

_BANNER = "--------------------------------------------------------------------------"
_NOTE = "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes."


def _top(lines: list[str]) -> tuple[str, int | None, str | None]:
    inc = build_report(fed_state(lines, "job.out"))["incidents"][0]
    return inc["failure"], inc["initiator"]["rank"], inc["initiator"].get("rank_from")


def test_the_aborting_rank_is_named() -> None:
    # errorcode on the next line, a negative code (exabayes on 16 ranks)
    lines = ["[claudia@darwin02] (41)$ mpirun -np 16 exabayes -f aln.phy -q aln.part  -n myRun -s $RANDOM -c config.nex -R 4",
             _BANNER, "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD ", "with errorcode -1.", "", _NOTE]
    assert _top(lines) == ("rank_exception", 0, "launcher")


def test_a_higher_rank_with_the_code_on_the_same_line() -> None:
    lines = ["mpirun -np 4 myHeatFoam -parallel", _BANNER,
             "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1."]
    assert _top(lines)[:2] == ("rank_exception", 3)


def test_the_rank_s_own_error_above_is_the_cause() -> None:
    # an OOM printed by the aborting rank before the banner: the abort is its consequence
    lines = ["[1,2]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 2; 15.78 GiB total capacity)",
             _BANNER, "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD", "with errorcode 1.", "", _NOTE]
    assert _top(lines)[:2] == ("cuda_oom", 2)


def test_prose_about_mpi_abort_is_not_a_report() -> None:
    assert not build_report(fed_state(["see the FAQ on why MPI_ABORT kills every process"], "x.log"))["incidents"]
