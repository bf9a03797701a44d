"""Every file scenario a real node produces, on real files, one test each.

The oracle is the tailer's own counters and offsets plus what reached the engine: each
log line written carries a unique token, and the test checks that every token arrives
exactly once (or is counted as lost, for the truncation window).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from detectors.parse import default_parser
from monitor.tailer import Tailer
from tests.helpers import Sink, append, sync

TOKEN = re.compile(r"step (\d+) \| loss ([\d.]+)")


def line(step: int) -> bytes:
    return f"step {step} | loss {1.0 + step / 1000:.3f} | grad_norm 1.0\n".encode()


def make(tmp: Path, **kw: object) -> tuple[Tailer, Sink]:
    sink = Sink()
    t = Tailer([str(tmp / "**" / "*.log")], default_parser(), sink, **kw)  # type: ignore[arg-type]
    return t, sink


step = sync


def test_partial_line_is_carried_until_complete(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(line(1) + b"step 2 | loss 1.0")
    step(t)
    assert sink.steps() == [1]
    append(log, b"02 | grad_norm 1.0\n")
    step(t)
    assert sink.steps() == [1, 2]
    assert sink.events[-1].source.line == 2 and sink.events[-1].data["loss"] == 1.002
    assert t.stats.lines == 2


def test_a_tqdm_bars_updates_are_read_before_its_newline(tmp_path: Path) -> None:
    """Lightning shows its metrics only in the bar's postfix, rewritten with \\r for a whole
    epoch: a NaN there must not wait for the epoch's newline. Each update is read once, with
    the bar's line number; the line count moves only when the line ends."""
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    bar = "Epoch 0:  {p}%|#| {n}/100 [00:0{n}<00:30, 3.3it/s, v_num=0, train_loss_step={v}]"
    # the second update is being written: it ends mid-value ("...train_loss_step=na")
    log.write_bytes(line(1) + bar.format(p=1, n=1, v="2.31").encode() + b"\r" + bar.format(p=2, n=2, v="na").encode()[:-1])
    step(t)
    losses = [e.data["loss"] for e in sink.events if e.kind.value == "sample" and "loss" in e.data]
    assert losses == [1.001, 2.31] and t.stats.lines == 1
    append(log, b"n]\r" + bar.format(p=3, n=3, v="nan").encode()[:-1])
    step(t)
    bad = [e for e in sink.events if e.kind.value == "sample" and e.data.get("loss") != e.data.get("loss")]
    assert [e.source.line for e in bad] == [2] and t.stats.lines == 1  # the epoch is still running
    append(log, b"]\n" + line(4))
    step(t)
    samples = [e for e in sink.events if e.kind.value == "sample" and "loss" in e.data]
    assert len(samples) == 5 and t.stats.lines == 3  # 1.001, 2.31, nan, nan (the last update), 1.004


def test_rename_create_rotation_no_loss_no_duplicate(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(line(1) + line(2))
    step(t)
    append(log, line(3))  # written to the old file, not read yet
    os.rename(log, tmp_path / "rank0.log.1")  # not matched by *.log
    log.write_bytes(line(4))
    step(t)
    assert sorted(sink.steps()) == [1, 2, 3, 4]
    assert t.stats.rotations == 1
    assert not t.draining


def test_rotated_copy_matching_the_glob_is_not_reread(tmp_path: Path) -> None:
    """logrotate's `train.log` → `train.1.log` when the glob also matches the copy."""
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(b"".join(line(i) for i in range(1, 30)))  # > 256 bytes: fingerprintable
    step(t)
    os.rename(log, tmp_path / "rank0.1.log")
    log.write_bytes(line(30))
    step(t)
    assert sorted(sink.steps()) == list(range(1, 31))


def test_copytruncate_restarts_at_zero_and_counts_the_loss_window(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(b"".join(line(i) for i in range(1, 4)))
    step(t)
    append(log, line(4))  # written ...
    t.rescan()  # ... seen by a rescan (size known) but not read before the truncation
    (tmp_path / "copy.txt").write_bytes(log.read_bytes())  # logrotate copies (not matched)
    with open(log, "r+b") as fh:
        fh.truncate(0)
    append(log, line(5))
    step(t)
    assert sink.steps() == [1, 2, 3, 5]
    assert t.stats.truncations == 1
    assert t.stats.dropped["truncated"] == len(line(4))
    assert sink.events[-1].source.line == 1  # a new generation starts at line 1


def test_truncate_in_place_on_relaunch_marks_rank_restarted(tmp_path: Path) -> None:
    log = tmp_path / "rank3.log"
    t, sink = make(tmp_path)
    log.write_bytes(b"[2026-12-02 10:00:00] attempt 0\n" + b"".join(line(i) for i in range(1, 20)))
    step(t)
    # the relaunch truncates and rewrites the same path (same inode), past the old offset
    # before the next rescan; its first line differs (a new start time), so the head tells
    log.write_bytes(b"[2026-12-02 11:30:00] attempt 1\n" + b"".join(line(i) for i in range(1, 40)))
    step(t)
    assert t.stats.truncations == 1
    assert t.stats.restarts[3] == 1
    assert sink.steps().count(1) == 2  # both generations read in full
    assert t.tails[str(log)].generation == 1


def test_delete_while_reading_finishes_the_file(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(line(1))
    step(t)
    append(log, line(2) + b"step 3 | loss 1.003 | grad_norm 1.0")  # last line unterminated
    log.unlink()
    step(t)
    assert sink.steps() == [1, 2, 3]
    assert t.stats.deletions == 1 and not t.tails and not t.draining


def test_path_recreated_after_delete_is_a_new_file(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(line(1))
    step(t)
    log.unlink()
    step(t)
    log.write_bytes(line(1) + line(2))
    step(t)
    assert sink.steps() == [1, 1, 2]


def test_inode_reuse_with_new_content_is_detected(tmp_path: Path) -> None:
    """Same path and (possibly) same inode, different head: treated as rewritten."""
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path)
    log.write_bytes(b"A" * 10 + b"\n" + line(1))
    step(t)
    with open(log, "r+b") as fh:  # same inode, rewritten from the start, longer
        fh.write(b"B" * 10 + b"\n" + line(7) + line(8))
    step(t)
    assert sink.steps() == [1, 7, 8]
    assert t.stats.truncations == 1


def test_file_appearing_late_is_picked_up(tmp_path: Path) -> None:
    t, sink = make(tmp_path)
    step(t)
    assert not t.tails
    (tmp_path / "node1").mkdir()
    (tmp_path / "node1" / "rank_11.log").write_bytes(line(1))
    step(t)
    assert [e.rank for e in sink.events] == [11]


def test_many_files_and_the_file_cap(tmp_path: Path) -> None:
    for r in range(40):
        (tmp_path / f"rank{r}.log").write_bytes(line(r))
    t, sink = make(tmp_path, max_files=32)
    step(t)
    assert len(t.tails) == 32
    assert len(sink.events) == 32
    assert t.stats.dropped["max_files"] == 8


def test_long_lines_and_binary_garbage_are_survived_and_counted(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    t, sink = make(tmp_path, max_line=4096)
    log.write_bytes(b"\x00\xff\xfe" * 100 + b"\n" + b"x" * 100_000 + b"\n" + line(5))
    step(t)
    assert sink.steps() == [5]
    assert sink.events[0].source.line == 3
    assert t.stats.dropped["line_too_long"] == 1


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_any_read_size_gives_the_same_events(tmp_path: Path, chunk: int) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(b"".join(line(i) for i in range(1, 50)))
    t, sink = make(tmp_path, chunk=chunk)
    step(t)
    assert sink.steps() == list(range(1, 50))
    assert [ln for _, ln in sink.sources()] == list(range(1, 50))
    # rank 0's last own line (the file's path names its rank), however the file was read
    last = "step 49 | loss 1.049 | grad_norm 1.0"
    assert sink.notes[-1].data["value"] == f"g0\t49\t{last}\t{last}"
