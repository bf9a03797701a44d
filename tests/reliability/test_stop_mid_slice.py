"""A stop that comes while a slice of reading runs in its worker thread.

Cancelling the reader task ends its ``await asyncio.to_thread(...)``, not the thread: the slice
runs on to its end. The shutdown drain (read what is left, final verdict, final checkpoint) must
wait for it, or the two read the same bytes at once and a line is fed to the engine twice (the
SIGKILL consistency test, tests/reliability/test_crash.py, caught three fatal lines of one file
counted twice this way). Here the slice is held in its thread for half a second after the stop:
the final checkpoint is written only after it ended, and every line is counted once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from pathlib import Path

from monitor import checkpoint
from tests.reliability.proc import one_log_daemon


def test_the_final_checkpoint_waits_for_the_slice_in_flight(tmp_path: Path) -> None:
    d, log = one_log_daemon(tmp_path, "stop", "step 0 | loss 1.0 | grad_norm 0.5\n")
    armed, entered = threading.Event(), threading.Event()
    times: dict[str, float] = {}
    real_poll, real_save = d.tailer.poll, d.save

    def held_poll(budget_per_file: int | None = None) -> int:
        if armed.is_set() and threading.get_ident() != d.owner and not entered.is_set():
            entered.set()
            time.sleep(0.5)  # the stop comes now; this thread goes on regardless
            n = real_poll(budget_per_file)
            times["slice_done"] = time.monotonic()
            return n
        return real_poll(budget_per_file)

    def timed_save() -> None:
        times.setdefault("saved", time.monotonic())
        real_save()

    d.tailer.poll = held_poll  # type: ignore[method-assign]
    d.save = timed_save  # type: ignore[method-assign]
    tokens = [f"fatal-{i}" for i in range(40)]

    async def scenario() -> None:
        task = asyncio.create_task(d.run())
        while d.bound is None:
            await asyncio.sleep(0.01)
        armed.set()
        with open(log, "a") as fh:
            for i, tok in enumerate(tokens):
                fh.write(f"step {i + 1} | loss 1.{i:03d} | grad_norm 0.5\n[rank0]: RuntimeError: worker failed, token {tok}\n")
        d.wake.set()
        assert await asyncio.to_thread(entered.wait, 60), "no slice was read in a worker thread"
        d.stopping.set()
        await task

    asyncio.run(scenario())
    assert times["slice_done"] < times["saved"], "the final checkpoint was written while a slice still ran"
    cp, why = checkpoint.load(d.cfg.state_dir, "stop")
    assert cp is not None, why
    seen = Counter(f.evidence[0].text.rsplit(" ", 1)[1] for f in cp.engine.state.findings
                   if "token fatal-" in f.evidence[0].text)
    assert seen == Counter(tokens)
