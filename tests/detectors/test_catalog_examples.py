"""Every catalog fingerprint's example (a real log line) parses to a MATCH of its own entry.

The example is the line as a user sees it, prefixes included, parsed by the real parser
(the path the tailer uses, with a fresh ``FileState``). A real line whose higher-priority
entry wins instead, or that a launcher rule explains before the fingerprints run, is a
catalog finding, not a test to bend: those are listed in ``KNOWN_CONFLICTS`` with the
reason and marked strict xfail, so a fix shows up as an XPASS to clean up.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from detectors.catalog import Entry, Fingerprint, load_catalog
from detectors.model import EventKind
from detectors.parse import LogParser, default_parser
from detectors.parsers.base import FileState
from detectors.scanner import available_engines

# (entry id, pattern) -> why the real example does not parse to a MATCH of that entry
KNOWN_CONFLICTS: dict[tuple[str, str], str] = {
    ('launcher_teardown', '(?:NCCL|Process group) watchdog thread terminated with exception'):
        'a real watchdog-exit line always carries its cause (collective timeout, CUDA or NCCL error) and that higher-priority entry wins: this fingerprint cannot be the MATCH of a real line',
    ('launcher_teardown', 'Sending process (?P<pid>\\d+) closing signal (?P<signal>SIG\\w+)'):
        'the launcher rule explains the line first (TEARDOWN event); catalog fingerprints do not run',
    ('launcher_teardown', 'Root Cause \\(first observed failure\\)'):
        'the launcher summary rule consumes the line (no event); catalog fingerprints do not run',
    ('launcher_teardown', 'exits with return code = -?\\d+'):
        'the DeepSpeed launcher rule explains the line first (EXIT event); catalog fingerprints do not run',
    ('launcher_teardown', 'Killing subprocess \\d+'):
        'the DeepSpeed launcher rule explains the line first (TEARDOWN event); catalog fingerprints do not run',
    ('peer_connection_lost', 'remote process exited or there was a network error'):
        "real lines with this wording are 'NCCL error in: ..., remote process exited ...' and nccl_error (priority 60, a cause) outranks peer_connection_lost (15, collateral)",
    ('collective_timeout', 'failed to pass monitoredBarrier in (?P<timeout_ms>\\d+) ms'):
        'a line that names one rank names the hang\'s culprit (rank_hang wins); this fingerprint is for lines naming several ranks',
    ('peer_connection_lost', 'Connection closed by remote peer (?P<peer>\\S+)'):
        "inside an 'NCCL WARN Net :' line the NCCL error (nccl_error, priority 60) wins; the wording is also printed by gloo and PyTorch's own sockets",
}

# fingerprints for which no real line was found yet (see the report of the examples task);
# a fingerprint added without an example fails test_every_fingerprint_has_an_example_or_is_listed
WITHOUT_EXAMPLE: set[tuple[str, str]] = {
    ('amp_no_speedup', 'CUDA is not available or torch_xla is imported\\. Disabling autocast'),
    ('bf16_unsupported_gpu', 'cuDNN MHA only supports gpu architectures in the range \\[sm80'),
    ('collective_timeout', '(?:Received a global dump signal|watchdog detected a dump signal) from rank \\d+'),
    ('collective_timeout', 'Caught collective operation timeout: '),
    ('collective_timeout', 'gloo/transport/tcp/\\S+:\\d+\\] Read timeout'),
    ('collective_timeout', 'timed out in monitoredBarrier after \\d+'),
    ('cuda_oom', 'Allocation was preemptively rejected because it would exceed per_process_memory_fraction'),
    ('gpu_ecc_error', '(?:ECC error|ecc error)s? (?:detected|found)'),
    ('gpu_xid', 'Timeout after \\d+s of waiting for RPC response from GPU\\d+ GSP!'),
    ('launcher_teardown', 'Main process received SIG(?:INT|TERM), exiting'),
    ('launcher_teardown', 'Signal 15 \\(SIGTERM\\) received by PID \\d+'),
    ('loss_spike', "message='Spiky loss'"),
    ('nccl_version_mismatch', 'Mismatched NCCL version detected : rank (?P<peer_rank>\\d+) version (?P<peer_version>\\d+) rank (?P<self_rank>\\d+) version (?P<version>\\d+)'),
    ('nonfinite_loss', 'Detected nan and/or inf values in'),
    ('nonfinite_loss', 'Rank (?P<rank>\\d+), node (?P<node>\\S+), device (?P<device>\\d+), iteration #?(?P<iteration>\\d+): Unexpected result'),
    ('nonfinite_loss', 'The loss returned in .training_step. is (?P<value>nan|inf|-inf)'),
    ('peer_connection_lost', 'NCCL communicator was aborted after a previous error'),
    ('collective_timeout', 'monitoring thread detects no heartbeat'),
    ('rank_segfault', 'segfault at [0-9a-fA-F]+ ip [0-9a-fA-F]+ sp [0-9a-fA-F]+ error \\d+'),
}


def _fingerprints() -> list[tuple[Entry, int, Fingerprint]]:
    return [(e, i, fp) for e in sorted(load_catalog(), key=lambda e: e.id) for i, fp in enumerate(e.fingerprints)]


def _case(entry: Entry, i: int, fp: Fingerprint) -> Any:
    reason = KNOWN_CONFLICTS.get((entry.id, fp.pattern))
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(entry, fp, id=f"{entry.id}#{i}", marks=marks)


_WITH_EXAMPLE = [_case(e, i, fp) for e, i, fp in _fingerprints() if fp.example is not None]


@pytest.mark.parametrize(("entry", "fp"), _WITH_EXAMPLE)
def test_example_parses_to_its_own_entry(entry: Entry, fp: Fingerprint) -> None:
    assert fp.example is not None
    events = default_parser().parse_line(fp.example, 1, FileState("x.log"))
    matches = [ev.failure for ev in events if ev.kind is EventKind.MATCH]
    assert matches == [entry.id], f"{fp.example!r} gave {[(ev.kind.name, ev.failure) for ev in events]}"


@pytest.mark.parametrize(("entry", "fp"), [pytest.param(e, fp, id=f"{e.id}#{i}") for e, i, fp in _fingerprints()
                                           if fp.example is not None])
def test_example_is_matched_by_its_own_pattern(entry: Entry, fp: Fingerprint) -> None:
    assert fp.example is not None
    assert re.search(fp.pattern, fp.example), f"{entry.id}: {fp.pattern!r} does not match its own example"


def test_every_fingerprint_has_an_example_or_is_listed() -> None:
    missing = {(e.id, fp.pattern) for e, _, fp in _fingerprints() if fp.example is None}
    assert missing == WITHOUT_EXAMPLE, (
        f"fingerprints without a real example line: {sorted(missing - WITHOUT_EXAMPLE)}; "
        f"listed but now have one (remove them from WITHOUT_EXAMPLE): {sorted(WITHOUT_EXAMPLE - missing)}"
    )


def test_conflict_list_names_fingerprints_that_have_an_example() -> None:
    with_example = {(e.id, fp.pattern) for e, _, fp in _fingerprints() if fp.example is not None}
    assert set(KNOWN_CONFLICTS) <= with_example


_CHUNK_HEAD = b"[rank0]:[I1202 13:15:05.079] train.py:88] step 5 | loss 0.3\nx\n"


@pytest.mark.parametrize("engine", [e for e in available_engines() if e != "re"])
def test_every_example_is_a_candidate_line_inside_a_chunk(engine: str) -> None:
    """The multi-pattern engine finds every example line in the middle of a chunk, as the tailer
    reads it, with the id of the example's own pattern. Hyperscan once missed a line after a
    newline when two patterns shared a prefix and ended alike: only the Python regex test above
    would not have shown it (the parser searches only the lines the scan returns)."""
    parser = LogParser(engine=engine)
    ids = {(e.id, fp.pattern): parser._n_special + k for k, (e, fp) in
           enumerate((r.entry, r.fp) for r in parser.fingerprints)}
    lost = []
    for entry, _, fp in _fingerprints():
        if fp.example is None:
            continue
        line = fp.example.encode()
        buf = _CHUNK_HEAD + line + b"\nthe next line\n"
        start = len(_CHUNK_HEAD)
        got = [hit_ids for s, _e, hit_ids in parser.scanner.scan(buf) if s == start]
        if not got or ids[(entry.id, fp.pattern)] not in got[0]:
            lost.append(f"{entry.id}: {fp.example!r}")
    assert lost == [], f"{engine} does not return these example lines inside a chunk: {lost}"
