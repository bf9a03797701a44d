"""The shell's bare ``Killed`` (a child SIGKILLed: bash prints it for a job of its own) is a rank
killed only if it was a rank: when every rank the job has logged a line of its own after it in the
same file, the killed process was a helper (a profiler sidecar, a stale watchdog the cleanup
killed): a note (corpus holdout33 g33f-014, healthy). A rank the OOM killer took logs nothing after."""

from __future__ import annotations

from tests.helpers import engine_verdict

_HEAD = ["2026-12-08 03:37:53,468 [INFO] [rank=0] train: step 50 loss 0.0214",
         "2026-12-08 03:37:53,488 [INFO] [rank=1] train: training finished, cleaning up",
         "2026-12-08 03:37:53,489 [INFO] [rank=0] train: training finished, cleaning up",
         "2026-12-08 03:37:55,490 [INFO] [rank=0] helpers: helper gpu-profiler-sidecar (pid 1177) Killed, exit code 137",
         "Killed"]


def test_a_kill_every_rank_logged_past_is_a_helpers() -> None:
    lines = [*_HEAD, "2026-12-08 03:37:55,492 [INFO] [rank=0] train: all ranks done; exiting with status 0",
             "2026-12-08 03:37:55,496 [INFO] [rank=1] train: all ranks done; exiting with status 0"]
    assert [i for i in engine_verdict(lines) if i.severity in ("warning", "critical")] == []


def test_a_kill_one_rank_never_logged_past_is_still_a_rank_killed() -> None:
    lines = [*_HEAD, "2026-12-08 03:37:55,492 [INFO] [rank=0] train: all ranks done; exiting with status 0"]
    assert any(i.failure == "rank_killed" and i.severity == "critical" for i in engine_verdict(lines))
