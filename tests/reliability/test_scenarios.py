"""One test per row of docs/guarantees.md that tests/monitor/ does not already prove.

Each test is named after its scenario; the oracle is what reached the sink (every line
carries a unique step number), the tailer's own counters and the checkpoint records.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from detectors.parse import default_parser
from monitor import checkpoint
from monitor.tailer import Tailer
from tests.helpers import Sink, append, sync
from tests.reliability.proc import metric, rankwatch


def line(step: int) -> bytes:
    return f"step {step} | loss 1.0 | grad_norm 1.0\n".encode()


def lines(a: int, b: int) -> bytes:
    return b"".join(line(i) for i in range(a, b))


@pytest.fixture
def tailers(tmp_path: Path) -> Iterator[list[Tailer]]:
    made: list[Tailer] = []
    yield made
    for t in made:
        t.close()


def make(tmp: Path, made: list[Tailer], resume: dict | None = None, **kw: object) -> tuple[Tailer, Sink]:
    sink = Sink()
    t = Tailer([str(tmp / "*.log")], default_parser(), sink, **kw)  # type: ignore[arg-type]
    if resume is not None:
        t.resume = resume
    made.append(t)
    return t, sink


def restart(t: Tailer, tmp: Path, made: list[Tailer], **kw: object) -> tuple[Tailer, Sink]:
    """Checkpoint as the daemon does (JSON positions + kept records), stop, resume."""
    positions = t.positions()
    for path, rec in t.resume.items():
        positions.setdefault(path, rec)
    t.close()
    fstates = {p: r.pop("fstate", None) for p, r in positions.items()}
    positions = json.loads(json.dumps(positions))  # what survives checkpoint.json
    for p, r in positions.items():
        r["fstate"] = fstates[p]
    return make(tmp, made, positions, **kw)


# ---------------------------------------------------------------------- restarts
def test_graceful_restart_short_file_that_grew_is_not_reread(tmp_path: Path, tailers: list[Tailer]) -> None:
    """A checkpoint taken while the file was shorter than its 256-byte fingerprint."""
    log = tmp_path / "rank0.log"
    log.write_bytes(line(1))
    t, _ = make(tmp_path, tailers)
    sync(t)
    append(log, lines(2, 20))
    t2, sink = restart(t, tmp_path, tailers)
    sync(t2)
    assert sink.lines() == [(i, i) for i in range(2, 20)]


def test_rotation_while_down_to_a_matching_name_resumes_the_renamed_file(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(lines(1, 4))
    t, _ = make(tmp_path, tailers)
    sync(t)
    t.positions()  # the daemon checkpoints ...
    append(log, line(4))
    t2, sink = restart(t, tmp_path, tailers)  # ... and restarts; meanwhile logrotate ran:
    os.rename(log, tmp_path / "rank0.1.log")
    log.write_bytes(line(5))
    sync(t2)
    assert sorted(sink.steps()) == [4, 5]


def test_rotation_to_a_matching_name_is_followed_not_reread(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(lines(1, 3))
    t, sink = make(tmp_path, tailers)
    sync(t)
    append(log, line(3))  # not read yet
    os.rename(log, tmp_path / "rank0.1.log")
    log.write_bytes(line(4))
    sync(t)
    append(tmp_path / "rank0.1.log", line(5))  # a writer that had not reopened yet
    sync(t)
    assert sorted(sink.steps()) == [1, 2, 3, 4, 5]
    assert t.stats.rotations == 1 and len(t.tails) == 2


def test_checkpoint_reads_rotated_and_deleted_files_to_their_end_first(tmp_path: Path, tailers: list[Tailer]) -> None:
    a, b = tmp_path / "rank0.log", tmp_path / "rank1.log"
    a.write_bytes(line(1))
    b.write_bytes(line(2))
    t, sink = make(tmp_path, tailers)
    sync(t)
    append(a, line(3))
    append(b, line(4) + b"step 5 | loss 1.0 | grad_norm 1.0")  # unterminated
    os.rename(a, tmp_path / "rank0.log.1")  # out of the glob
    b.unlink()
    positions = t.positions()  # nobody could find these two after a restart
    assert sorted(sink.steps()) == [1, 2, 3, 4, 5]
    assert positions == {} and not t.draining


def test_inode_reuse_across_restart_reads_the_new_file_from_its_start(tmp_path: Path, tailers: list[Tailer]) -> None:
    """Same path, same inode, other content (the relaunch rewrote it while we were down)."""
    log = tmp_path / "rank0.log"
    log.write_bytes(b"[2026-12-02 10:00:00] attempt 0\n" + lines(1, 10))
    t, _ = make(tmp_path, tailers)
    sync(t)
    ino = log.stat().st_ino
    t2, sink = restart(t, tmp_path, tailers)
    with open(log, "r+b") as fh:
        fh.write(b"[2026-12-02 11:30:00] attempt 1\n" + lines(100, 120))
    assert log.stat().st_ino == ino
    sync(t2)
    assert sink.steps() == list(range(100, 120))
    assert sink.lines()[0] == (100, 2)


def test_checkpoint_inside_an_overlong_line_resumes_after_that_line(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(line(1) + b"x" * 5000)  # an over-long line still being written
    t, _ = make(tmp_path, tailers, max_line=1024, chunk=4096)
    sync(t)
    append(log, b"x" * 3000 + b"\n" + line(3))
    t2, sink = restart(t, tmp_path, tailers, max_line=1024)
    sync(t2)
    assert sink.lines() == [(3, 3)]  # the rest of line 2 is not a line; numbering holds
    assert t.stats.dropped["line_too_long"] == 1


# ---------------------------------------------------------------------- truncation
def test_truncate_and_rewrite_read_by_a_poll_before_any_rescan(tmp_path: Path, tailers: list[Tailer]) -> None:
    """With inotify hints a poll can come before the rescan that would notice the truncation."""
    log = tmp_path / "rank3.log"
    log.write_bytes(lines(1, 5))
    t, sink = make(tmp_path, tailers)
    sync(t)
    with open(log, "r+b") as fh:
        fh.truncate(0)
    append(log, b"[relaunch] attempt 1\n" + lines(100, 110))
    t.poll()
    assert sink.steps() == [*range(1, 5), *range(100, 110)]
    assert t.stats.truncations == 1 and t.stats.restarts[3] == 1


def test_truncated_to_the_same_size_is_noticed_by_the_next_rescan(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(lines(10, 14))
    t, sink = make(tmp_path, tailers)
    sync(t)
    t.rescan()  # the rescan after the read: it knows this size
    size = log.stat().st_size
    time.sleep(0.01)  # a distinct mtime even on coarse-clock filesystems
    with open(log, "r+b") as fh:
        fh.truncate(0)
        fh.write(lines(20, 24))
    assert log.stat().st_size == size
    t.poll()  # no new bytes past our offset: a poll cannot tell
    sync(t)
    assert sink.steps() == [*range(10, 14), *range(20, 24)]


def test_truncated_below_the_fingerprinted_head_but_past_the_offset(tmp_path: Path, tailers: list[Tailer]) -> None:
    """A restart opens the file with more bytes than it had read (the head it fingerprints is
    longer than its offset); the file is then truncated and rewritten to a size between the two.
    The size never drops below the offset, but a log only grows: a file shorter than the head
    seen at open was truncated (a property-test find: the new lines were missed, or read twice
    after the next restart)."""
    log = tmp_path / "rank1.log"
    log.write_bytes(line(1))
    t, sink = make(tmp_path, tailers)
    sync(t)
    append(log, lines(2, 6))  # written while the daemon restarts: not read yet
    t2, sink2 = restart(t, tmp_path, tailers)
    t2.rescan()
    with open(log, "r+b") as fh:
        fh.truncate(0)
        fh.write(lines(6, 8))
    sync(t2)
    t3, sink3 = restart(t2, tmp_path, tailers)
    sync(t3)
    delivered = sink.steps() + sink2.steps() + sink3.steps()
    assert [s for s in delivered if s >= 6] == [6, 7]
    assert t2.stats.truncations == 1


def test_truncated_then_deleted_before_a_rescan_is_read(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(lines(1, 5))
    t, sink = make(tmp_path, tailers)
    sync(t)
    with open(log, "r+b") as fh:
        fh.truncate(0)
        fh.write(line(9))
    log.unlink()
    sync(t)
    t.poll()
    assert sink.steps() == [1, 2, 3, 4, 9] and not t.draining


# ---------------------------------------------------------------------- long lines, binary
def test_very_long_lines_memory_bounded_and_counted(tmp_path: Path, tailers: list[Tailer]) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path, tailers, max_line=64 << 10, chunk=256 << 10)
    log.write_bytes(line(1))
    sync(t)
    with open(log, "ab") as fh:  # 8 MiB in one line, then 2 MiB unterminated
        for _ in range(32):
            fh.write(b"[rank0]: " + b"A" * (256 << 10))
            fh.flush()
            t.poll()
            assert len(t.tails[str(log)].reader._carry) <= (64 << 10) + 1
        fh.write(b"\n" + line(3) + b"B" * (2 << 20))
    sync(t)
    assert sink.lines() == [(1, 1), (3, 3)]
    assert t.stats.dropped["line_too_long"] == 2
    assert len(t.tails[str(log)].reader._carry) == 0  # the unterminated tail is being skipped


def test_binary_data_and_invalid_utf8_never_stop_reading(tmp_path: Path, tailers: list[Tailer]) -> None:
    rng = random.Random(7)
    log = tmp_path / "rank0.log"
    parts = []
    for i in range(1, 200):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300))).replace(b"\n", b"")
        parts.append(junk + b"\n" + line(i))
    log.write_bytes(b"\x00" * 1000 + b"\n" + b"".join(parts) + b"\xff\xfe\x00")
    t, sink = make(tmp_path, tailers, chunk=4096)
    sync(t)
    assert sink.steps() == list(range(1, 200))


# ---------------------------------------------------------------------- the state directory
def test_power_loss_leaves_the_old_or_the_new_checkpoint(tmp_path: Path) -> None:
    """tmp + fsync + rename + fsync(dir): a crash during a save leaves the old one whole;
    a checkpoint damaged anyway (storage that lied about fsync) is refused, not trusted."""
    state = tmp_path / "state"
    checkpoint.save(state, checkpoint.Checkpoint("j", {"/x.log": {"dev": 1, "ino": 2, "head": "h", "offset": 10, "lines": 1}}, {"n": 1}))
    # a save interrupted after writing part of its temporary file
    (state / ".checkpoint.json.tmp").write_text('{"version": 1, "job": "j", "positions": {"/x.lo')
    cp, why = checkpoint.load(state, "j")
    assert cp is not None and cp.engine == {"n": 1} and cp.positions["/x.log"]["offset"] == 10, why
    checkpoint.save(state, checkpoint.Checkpoint("j", {}, {"n": 2}))
    assert not (state / ".checkpoint.json.tmp").exists()
    good = (state / "checkpoint.json").read_bytes()
    flipped = json.loads(good)
    flipped["engine"] = json.loads(json.dumps(flipped["engine"]).replace("2", "3"))  # one value changed, digest kept
    assert flipped["engine"] != json.loads(good)["engine"]
    for damaged in (good[: len(good) // 2], json.dumps(flipped).encode(), b"\x00" * len(good)):
        (state / "checkpoint.json").write_bytes(damaged)
        cp, why = checkpoint.load(state, "j")
        assert cp is None and ("unreadable" in why or "checksum" in why or "invalid" in why), why


def test_an_older_capture_written_late_never_replaces_a_newer_checkpoint(tmp_path: Path) -> None:
    """The daemon writes checkpoints in a worker thread: a periodic write still encoding when the
    final save at shutdown lands must not overwrite it with the older state."""
    state = tmp_path / "state"
    old = checkpoint.capture(checkpoint.Checkpoint("j", {}, {"n": 1}))
    new = checkpoint.capture(checkpoint.Checkpoint("j", {}, {"n": 2}))
    checkpoint.write(state, new)
    checkpoint.write(state, old)
    cp, why = checkpoint.load(state, "j")
    assert cp is not None and cp.engine == {"n": 2}, why


@pytest.mark.slow
def test_state_dir_full_keeps_tailing_counts_and_keeps_the_old_checkpoint(tmp_path: Path) -> None:
    """ENOSPC on the checkpoint write (the temporary file is a link to /dev/full)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    log = logs / "rank0.log"
    log.write_bytes(lines(1, 11))
    with rankwatch([str(logs / "*.log")], state, "full", tmp_path / "out.txt") as rw:
        while metric(rw.get("/metrics"), "rankwatch_lines_total") < 10 or not (state / "checkpoint.json").exists():
            time.sleep(0.05)
        old = (state / "checkpoint.json").read_bytes()
        (state / ".checkpoint.json.tmp").symlink_to("/dev/full")
        append(log, lines(11, 21))
        deadline = time.monotonic() + 60
        while True:
            text = rw.get("/metrics")
            failed = metric(text, "rankwatch_dropped_total", 0.0, reason="checkpoint_failed")
            if failed >= 1 and metric(text, "rankwatch_lines_total") == 20:
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.05)
        assert (state / "checkpoint.json").read_bytes() == old  # still the last good one
        assert json.loads(rw.get("/healthz"))["status"] == "ok"
        (state / ".checkpoint.json.tmp").unlink()  # space again
        append(log, line(21))
        while json.loads((state / "checkpoint.json").read_text())["positions"][str(log)]["offset"] != log.stat().st_size:
            time.sleep(0.05)
        assert rw.stop() == 0
    assert "checkpoint failed" in rw.output() and "No space left on device" in rw.output()
