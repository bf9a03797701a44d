"""HPE Cray PALS's mpiexec (ALCF Aurora and Polaris) reports each rank that ended badly by its
global rank: ``HOST: rank N died from signal S`` and ``HOST: rank N exited with code C``; the
ranks it then SIGTERMs are the teardown's. Real lines from pmodels/mpich#7605 (Aurora, 512 nodes)."""

from __future__ import annotations

from detectors.diagnosis import build_report
from detectors.prefixes import split_prefixes
from tests.helpers import fed_state


def test_the_rank_that_died_first_is_named_and_the_sigterm_one_is_collateral() -> None:
    lines = ["x4213c4s7b0n0.hsn.cm.aurora.alcf.anl.gov: rank 27421 died from signal 6",
             "x4417c3s5b0n0.hsn.cm.aurora.alcf.anl.gov: rank 48109 died from signal 15"]
    inc = build_report(fed_state(lines, "rfm_job.out"))["incidents"][0]
    assert inc["initiator"]["rank"] == 27421
    assert inc["initiator"]["rank_from"] == "launcher"
    assert 48109 in {c["rank"] for c in inc["collateral"]}


def test_a_relayed_shell_code_is_read_as_its_signal() -> None:
    # intel/pti-gpu#69's last lines: a wrapper script relayed rank 0's SIGSEGV as exit code 139
    lines = ["hostname: rank 0 exited with code 139", "hostname: rank 1 died from signal 15"]
    inc = build_report(fed_state(lines, "run.log"))["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_segfault", 0)


def test_a_signal_that_dumped_core_is_read_too() -> None:
    # E3SM-Project/E3SM#6985 (Polaris): a peer's PMI recv fails first, then PALS names the segfault
    lines = ["Sat Mar  8 04:27:33 2025: [PE_84]:_pmi_network_allgather:_pmi_inet_recv from target 2 failed",
             "x3102c0s25b1n0.hsn.cm.polaris.alcf.anl.gov: rank 96 died from signal 11 and dumped core",
             "x3102c0s25b1n0.hsn.cm.polaris.alcf.anl.gov: rank 99 died from signal 15"]
    inc = build_report(fed_state(lines, "e3sm.log"))["incidents"][0]
    assert (inc["failure"], inc["initiator"]["rank"]) == ("rank_segfault", 96)


def test_an_ordinary_line_about_a_rank_is_not_a_launcher_report() -> None:
    assert split_prefixes("step 10: rank 3 loss 0.25").rank is None
    assert not build_report(fed_state(["epoch 1: rank 3 exited with code 0 after saving"], "x.log"))["incidents"]
