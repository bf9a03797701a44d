"""Crash consistency: ``rankwatch run`` SIGKILLed at random moments while ranks write.

A writer thread keeps appending to three rank files — step lines, fatal lines with a
unique token, lines written in two halves (a partial line on disk for a moment) — and
rotates them (rename to a name the glob also matches, then a new file). Meanwhile the
daemon is started and SIGKILLed, 16 times at seeded random moments (during start-up,
between checkpoints, maybe inside a checkpoint write), then run one last time to the
end and stopped with SIGTERM.

What "found" means across restarts: the checkpoint holds the engine state together with
the file offsets it has consumed, written atomically, so a restart continues the engine
from exactly the bytes it had seen. Hence, in the checkpoint the last graceful stop
writes, the engine must have counted every fatal line written — exactly once: none lost,
none counted twice (a duplicate would mean an offset and the engine disagreed). And:

- after every kill, the checkpoint on disk is readable (old or new, never torn), never
  points past the data of its file or into the middle of a line, and its line count
  agrees with its offset;
- an incident keeps its id across restarts: over all checkpoints, one id per (failure,
  initiating rank).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from monitor import checkpoint
from tests.reliability.proc import metric, rankwatch

RANKS = 3
KILLS = 16
SEED = int(os.environ.get("TEST_CRASH_SEED", "20261202"))  # another seed explores other interleavings (not RANKWATCH_*: that is the daemon's config)
JOB = "crash"


class Writer(threading.Thread):
    """Appends to ``rank{r}.log`` with O_APPEND writes and rotates the files."""

    def __init__(self, logs: Path, seed: int) -> None:
        super().__init__(name="rank-writer", daemon=True)
        self.logs = logs
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        # held while a line (and a rotation before it) is written: a checker holding it sees the
        # directory between two renames, never in the middle of one
        self.lock = threading.Lock()
        self.fatal: set[str] = set()
        self.lines = 0
        self.rotations = 0
        self.error: BaseException | None = None
        self.fds = {r: self._open(r) for r in range(RANKS)}
        self.step = Counter[int]()

    def _open(self, r: int) -> int:
        return os.open(self.logs / f"rank{r}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def _line(self, r: int) -> bytes:
        if self.rng.random() < 0.15:
            token = f"fatal-{r}-{len(self.fatal)}"
            self.fatal.add(token)
            return f"[rank{r}]: RuntimeError: worker failed, token {token}\n".encode()
        self.step[r] += 1
        return f"step {self.step[r]} | loss 1.{self.rng.randrange(1000):03d} | grad_norm 0.5\n".encode()

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                with self.lock:
                    self._write_one()
                time.sleep(0.003)
        except BaseException as exc:  # surfaced by the test
            self.error = exc
        finally:
            for fd in self.fds.values():
                os.close(fd)

    def _write_one(self) -> None:
        r = self.rng.randrange(RANKS)
        if self.rng.random() < 0.01:
            self.rotations += 1
            os.close(self.fds[r])
            os.rename(self.logs / f"rank{r}.log", self.logs / f"rank{r}.r{self.rotations}.log")
            self.fds[r] = self._open(r)
        line = self._line(r)
        if self.rng.random() < 0.3:  # a line in two writes: a partial line on disk
            cut = self.rng.randrange(1, len(line))
            os.write(self.fds[r], line[:cut])
            time.sleep(0.002)
            os.write(self.fds[r], line[cut:])
        else:
            os.write(self.fds[r], line)
        self.lines += 1


def check_checkpoint(state: Path, logs: Path) -> dict | None:
    """The checkpoint on disk is whole and consistent with the files it names."""
    path = state / checkpoint.NAME
    if not path.exists():
        return None
    doc = json.loads(path.read_text())  # never torn: tmp + fsync + rename
    by_inode = {(st.st_dev, st.st_ino): p for p in logs.iterdir() if (st := p.stat())}
    for name, rec in doc["positions"].items():
        f = by_inode.get((rec["dev"], rec["ino"]))
        assert f is not None, f"checkpoint names a file that does not exist: {name}"
        data = f.read_bytes()
        head_len = rec.get("head_len", 256)
        if rec.get("head") and hashlib.sha1(data[:head_len]).hexdigest() != rec["head"]:
            # the inode of a rotated-away file was reused by a new one: the record is about
            # the old file (a restart matches identity by inode AND head, so it is not resumed)
            continue
        off = rec["offset"]
        assert off <= len(data), f"{name}: checkpoint offset {off} past the data ({len(data)} bytes)"
        assert off == 0 or data[off - 1 : off] == b"\n", f"{name}: checkpoint offset {off} inside a line"
        assert rec["lines"] == data[:off].count(b"\n"), f"{name}: line count disagrees with the offset"
    return doc


def _stamp(state: Path) -> tuple[int, int] | None:
    """The checkpoint file's identity and write time (each write is a rename: a new inode)."""
    try:
        st = (state / checkpoint.NAME).stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def incident_ids(state: Path) -> set[tuple[str, object, str]]:
    cp, why = checkpoint.load(state, JOB)
    assert cp is not None, why
    return {(p.incident["failure"], p.incident["initiator"]["rank"], iid) for iid, p in cp.engine.published.items()}


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    rng = random.Random(SEED)
    writer = Writer(logs, SEED + 1)
    writer.start()
    seen_ids: set[tuple[str, object, str]] = set()
    killed_with_checkpoint = 0
    try:
        for life in range(KILLS):
            before = _stamp(state)
            with rankwatch([str(logs / "*.log")], state, JOB, tmp_path / "daemon.out") as rw:
                if life % 2:
                    # every other life first writes a checkpoint of its own, so restarts from a
                    # checkpoint are exercised however slow the machine is (the other lives may
                    # die during start-up, before their first one)
                    deadline = time.monotonic() + 120
                    while _stamp(state) == before:
                        assert rw.p.poll() is None, f"rankwatch died by itself: {rw.output()}"
                        assert time.monotonic() < deadline, "no checkpoint written in 120 s"
                        time.sleep(0.05)
                time.sleep(rng.uniform(0.2, 1.5))
                assert rw.p.poll() is None, f"rankwatch died by itself: {rw.output()}"
                assert rw.kill() == -9
            with writer.lock:  # no rename between listing the directory and its stats
                doc = check_checkpoint(state, logs)
            if doc is not None:
                killed_with_checkpoint += 1
                seen_ids |= incident_ids(state)
            assert writer.is_alive(), writer.error
    finally:
        writer.stop.set()
        writer.join()
    assert writer.error is None, writer.error
    assert killed_with_checkpoint >= KILLS // 2, "every other life waits for a checkpoint of its own"

    # a last life: catch up with everything, then stop gracefully (final checkpoint)
    with rankwatch([str(logs / "*.log")], state, JOB, tmp_path / "daemon.out") as rw:
        deadline = time.monotonic() + 120
        while True:
            text = rw.get("/metrics")
            if metric(text, "rankwatch_tail_lag_bytes") == 0 and metric(text, "rankwatch_files_tailed") >= RANKS:
                break
            assert time.monotonic() < deadline, "the daemon never caught up"
            time.sleep(0.2)
        assert rw.stop() == 0, rw.output()
    check_checkpoint(state, logs)
    cp, why = checkpoint.load(state, JOB)
    assert cp is not None, why
    st = cp.engine.state

    found = Counter[str]()
    for f in st.findings:
        text = f.evidence[0].text
        if "token fatal-" in text:
            found[text.rsplit(" ", 1)[1]] += 1
    assert writer.rotations >= 3 and len(writer.fatal) >= 50, (writer.rotations, len(writer.fatal))
    missing = sorted(writer.fatal - set(found))
    assert not missing, f"{len(missing)} fatal lines never counted: {missing[:10]}"
    twice = sorted(t for t, n in found.items() if n > 1)
    assert not twice, f"fatal lines counted more than once: {twice[:10]}"
    assert sum(n for (_, failure), n in st.match_counts.items() if failure == "rank_exception") == len(writer.fatal)

    seen_ids |= incident_ids(state)
    by_key: dict[tuple[str, object], set[str]] = {}
    for failure, rank, iid in seen_ids:
        by_key.setdefault((failure, rank), set()).add(iid)
    assert all(len(ids) == 1 for ids in by_key.values()), by_key
